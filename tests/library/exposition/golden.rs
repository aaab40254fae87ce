//! The whole exposition text of a fixed scenario against a golden file (which
//! `e2e/tests/e2e/exposition.rs` checks with `promtool check metrics`), and every metric of
//! the design table exposed with its type.

use std::collections::BTreeMap;
use std::{env, fs};

use mcp_readiness::metrics::names;

use crate::support::events::*;
use crate::support::exposition::*;

#[test]
fn the_exposition_of_the_fixed_scenario_matches_the_golden_file() {
    let text = stable(&scenario().render());
    let path = golden_path();
    if env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        fs::write(&path, &text).unwrap();
        eprintln!("rewrote {}", path.display());
        return;
    }
    let golden = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}): run `UPDATE_GOLDEN=1 cargo test -p mcp-readiness --test library exposition::golden` to create it",
            path.display()
        )
    });
    if text != golden {
        for (i, (got, want)) in text.lines().zip(golden.lines()).enumerate() {
            if got != want {
                panic!(
                    "line {} differs:\n  got:  {got}\n  want: {want}\n(rerun with UPDATE_GOLDEN=1 if the change is intended)",
                    i + 1
                );
            }
        }
        panic!(
            "got {} lines, golden has {} (rerun with UPDATE_GOLDEN=1 if the change is intended)",
            text.lines().count(),
            golden.lines().count()
        );
    }
}

#[test]
fn every_metric_of_the_design_table_is_exposed_with_its_type() {
    let text = scenario().render();
    let types: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    let want = [
        (names::SERVER_STATE, "gauge"),
        (names::SERVER_STATE_CHANGED_TIMESTAMP_SECONDS, "gauge"),
        (names::SERVER_TOOLS, "gauge"),
        (names::RESOLVE_WAIT_SECONDS, "histogram"),
        (names::WASTE_SECONDS_TOTAL, "counter"),
        (names::AVOIDED_WAIT_SECONDS_TOTAL, "counter"),
        (names::BUDGET_EXHAUSTED_TOTAL, "counter"),
        (names::TOOL_CALLS_TOTAL, "counter"),
        (names::TOOL_ABSENT_TOTAL, "counter"),
        (names::CONNECTS_TOTAL, "counter"),
        (names::CONNECT_DURATION_SECONDS, "histogram"),
        (names::WAIT_BUDGET_SECONDS, "gauge"),
        (names::RECONNECTS_TOTAL, "counter"),
        (names::STREAM_REOPENS_TOTAL, "counter"),
        (names::COOLDOWN_REJECTIONS_TOTAL, "counter"),
        (names::BUILD_INFO, "gauge"),
        (names::SERVER_STATE_CHANGES_TOTAL, "counter"),
        (names::CONFIG_LAST_RELOAD_SUCCESSFUL, "gauge"),
        (names::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS, "gauge"),
        (names::PROBE_MODULES, "gauge"),
        (names::SERVER_INFO, "gauge"),
        (names::CREDENTIAL_EXPIRY_TIMESTAMP_SECONDS, "gauge"),
        (names::SERVER_NEXT_ATTEMPT_TIMESTAMP_SECONDS, "gauge"),
        (names::TLS_CERTIFICATE_EXPIRY_TIMESTAMP_SECONDS, "gauge"),
        (names::MCP_CLIENT_OPERATION_DURATION_SECONDS, "histogram"),
    ];
    assert_eq!(want.len(), names::ALL.len());
    for (name, kind) in want {
        assert_eq!(types.get(name), Some(&kind), "{name}");
    }
    // The buckets of the design.
    let les = |series: &str| -> Vec<String> {
        parse(&text)
            .into_iter()
            .filter(|s| s.name == format!("{series}_bucket"))
            .filter(|s| s.labels.get("server").map(String::as_str) == Some("files"))
            .filter(|s| {
                s.labels.get("state").is_none_or(|v| v == "ready")
                    && s.labels.get("result").is_none_or(|v| v == "ok")
                    && s.labels
                        .get("gen_ai_tool_name")
                        .is_none_or(|v| v == "read_file")
                    && s.labels.get("error_type").is_none_or(|v| v.is_empty())
            })
            .map(|s| s.labels["le"].clone())
            .collect()
    };
    let expect = |b: &[f64]| -> Vec<String> {
        b.iter()
            .map(f64::to_string)
            .chain(["+Inf".to_owned()])
            .collect()
    };
    assert_eq!(
        les(names::RESOLVE_WAIT_SECONDS),
        expect(&names::WAIT_BUCKETS)
    );
    assert_eq!(
        les(names::CONNECT_DURATION_SECONDS),
        expect(&names::WAIT_BUCKETS)
    );
    assert_eq!(
        les(names::MCP_CLIENT_OPERATION_DURATION_SECONDS),
        expect(&names::OPERATION_BUCKETS)
    );
}
