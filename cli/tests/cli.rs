//! The command line, run as a real process.

use std::process::Command;

fn mcp_readiness(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-readiness"))
        .args(args)
        .output()
        .expect("the mcp-readiness binary runs")
}

#[test]
fn simulate_json_prints_the_contract_rows_with_the_seeds_numbers() {
    let out = mcp_readiness(&["simulate", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("one JSON array");
    let find = |scenario: &str, variant: &str| {
        rows.iter()
            .find(|r| r["scenario"] == scenario && r["variant"] == variant)
            .unwrap_or_else(|| panic!("row {scenario}/{variant} missing"))
            .clone()
    };
    for (scenario, variant, wait, ready) in [
        ("three-states", "no-states", 86_000, 8),
        ("three-states", "three-states", 26_000, 8),
        ("cache-grain", "by-tool", 66_000, 9),
        ("cache-grain", "by-server", 26_000, 9),
        ("change-notified", "polling", 6_000, 1),
        ("change-notified", "notified", 5_100, 1),
    ] {
        let row = find(scenario, variant);
        assert_eq!(row["total_wait_ms"], wait, "{scenario}/{variant}");
        assert_eq!(row["ready"], ready, "{scenario}/{variant}");
    }
    let per_call = find("concurrent-callers", "per-call");
    let single = find("concurrent-callers", "single-flight");
    assert!(single["polls"].as_u64() < per_call["polls"].as_u64());
    assert!(single["total_wait_ms"].as_u64() < per_call["total_wait_ms"].as_u64());
}

#[test]
fn simulate_prints_both_seed_tables_with_their_savings() {
    let out = mcp_readiness(&["simulate"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("delta: 60000 ms (69.8 % less waiting)"),
        "{text}"
    );
    assert!(
        text.contains("delta: 40000 ms (60.6 % less waiting)"),
        "{text}"
    );
}

#[test]
fn an_unknown_flag_is_a_usage_error_with_exit_code_2() {
    let out = mcp_readiness(&["simulate", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bogus"));
    let out = mcp_readiness(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}
