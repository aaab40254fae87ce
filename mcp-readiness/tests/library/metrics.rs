//! The metrics recorder and its `/metrics` endpoint, end to end: the whole exposition text against
//! a golden file (which `e2e/tests/promtool_metrics.rs` checks with `promtool check metrics`), hostile label values through the text format and
//! back, the label caps, server removal, the one-hot state invariant, and the HTTP endpoint over a
//! real socket.

use std::collections::BTreeMap;
use std::time::Duration;
use std::{env, fs, path::PathBuf};

use mcp_readiness::State;
use mcp_readiness::exporter;
use mcp_readiness::metrics::{ManualClock, Metrics, MetricsError, names};
use mcp_readiness::resolve::{Scope, Verdict};
use mcp_readiness::state::{
    CallOutcome, ConnectResult, ConnectionEvent, CredentialExpiry, CredentialKind, EventSink,
};
use prometheus::Registry;
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

// ---------------------------------------------------------------------------------------------
// A small parser for the text format 0.0.4, independent of the encoder under test.

#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses every sample line; panics (failing the test) on anything malformed.
fn parse(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        samples.push(parse_line(line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")));
    }
    samples
}

fn parse_line(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(['{', ' '])
        .ok_or("no value after the metric name")?;
    let name = line[..name_end].to_owned();
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after_brace) = rest.strip_prefix('{') {
        let mut chars = after_brace.char_indices().peekable();
        loop {
            // label name
            let start = chars.peek().map(|(i, _)| *i).ok_or("unterminated labels")?;
            let mut end = start;
            let mut closed = false;
            for (i, c) in chars.by_ref() {
                if c == '=' {
                    end = i;
                    break;
                }
                if c == '}' && i == start {
                    closed = true;
                    end = i;
                    break;
                }
            }
            if closed {
                rest = &after_brace[end + 1..];
                break;
            }
            let label = after_brace[start..end].to_owned();
            if chars.next().map(|(_, c)| c) != Some('"') {
                return Err(format!("label {label} has no opening quote"));
            }
            let mut value = String::new();
            loop {
                match chars.next().ok_or("unterminated label value")?.1 {
                    '\\' => match chars.next().ok_or("dangling backslash")?.1 {
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        'n' => value.push('\n'),
                        other => return Err(format!("unknown escape \\{other}")),
                    },
                    '"' => break,
                    '\n' => return Err("raw newline in a label value".into()),
                    c => value.push(c),
                }
            }
            if labels.insert(label.clone(), value).is_some() {
                return Err(format!("label {label} twice"));
            }
            match chars.next().ok_or("unterminated labels")? {
                (_, ',') => continue,
                (i, '}') => {
                    rest = &after_brace[i + 1..];
                    break;
                }
                (_, c) => return Err(format!("unexpected {c:?} after a label value")),
            }
        }
    }
    let value = rest
        .trim()
        .parse::<f64>()
        .map_err(|e| format!("bad value {rest:?}: {e}"))?;
    Ok(Sample {
        name,
        labels,
        value,
    })
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The value of the one sample named `name` with exactly `pairs`, if any.
fn value(samples: &[Sample], name: &str, pairs: &[(&str, &str)]) -> Option<f64> {
    let want = labels(pairs);
    let found: Vec<_> = samples
        .iter()
        .filter(|s| s.name == name && s.labels == want)
        .collect();
    assert!(
        found.len() <= 1,
        "{name} {want:?} appears {} times",
        found.len()
    );
    found.first().map(|s| s.value)
}

fn added(server: &str, state: State) -> ConnectionEvent {
    ConnectionEvent::ServerAdded {
        server: server.into(),
        state,
    }
}

fn changed(server: &str, from: State, to: State) -> ConnectionEvent {
    ConnectionEvent::StateChanged {
        server: server.into(),
        from,
        to,
        reason: None,
    }
}

fn connect(server: &str, result: ConnectResult, millis: u64) -> ConnectionEvent {
    ConnectionEvent::ConnectAttempt {
        server: server.into(),
        result,
        duration: Duration::from_millis(millis),
    }
}

fn verdict(state: State, waited_ms: u64, timed_out: bool, scope: Scope) -> Verdict {
    Verdict {
        state,
        waited: Duration::from_millis(waited_ms),
        timed_out,
        scope,
        reason: None,
    }
}

const BUDGET: Duration = Duration::from_secs(20);
const T0: Duration = Duration::from_secs(1_700_000_000);

/// The fixed scenario of the golden file: four servers, one in each state, resolutions of every
/// verdict, calls of every outcome, connects of several results, on a manual clock.
fn handshake(server: &str, protocol: &str) -> ConnectionEvent {
    ConnectionEvent::Handshake {
        server: server.into(),
        identity: mcp_readiness::state::ServerIdentity {
            protocol_version: protocol.into(),
            server_name: "fs-server".into(),
            server_version: "1.4.0".into(),
        },
    }
}

fn scenario() -> Metrics {
    let clock = ManualClock::new(T0);
    let metrics = Metrics::builder().clock(clock.clone()).build().unwrap();

    // files: connects on the second try, becomes ready with three tools.
    metrics.on_event(&added("files", State::Connecting));
    metrics.on_event(&connect("files", ConnectResult::Closed, 500));
    metrics.on_event(&connect("files", ConnectResult::Ok, 1_200));
    clock.advance(Duration::from_millis(1_700));
    metrics.on_event(&changed("files", State::Connecting, State::Ready));
    metrics.on_event(&ConnectionEvent::ToolsChanged {
        server: "files".into(),
        count: 3,
    });
    metrics.on_event(&handshake("files", "2025-11-25"));
    // github: its token was revoked.
    metrics.on_event(&added("github", State::Connecting));
    // Its OAuth access token renews itself; its refresh token does not.
    let at = |secs: u64| std::time::UNIX_EPOCH + Duration::from_secs(secs);
    metrics.on_event(&ConnectionEvent::CredentialsExpire {
        server: "github".into(),
        expiries: vec![
            CredentialExpiry {
                kind: CredentialKind::AccessToken,
                expires_at: at(1_767_229_200),
                renewable: true,
            },
            CredentialExpiry {
                kind: CredentialKind::RefreshToken,
                expires_at: at(1_769_817_600),
                renewable: false,
            },
        ],
    });
    metrics.on_event(&connect("github", ConnectResult::Unauthorized, 300));
    clock.advance(Duration::from_millis(300));
    metrics.on_event(&changed(
        "github",
        State::Connecting,
        State::Unauthenticated,
    ));
    // slow: still starting.
    metrics.on_event(&added("slow", State::Connecting));
    metrics.on_event(&connect("slow", ConnectResult::Timeout, 30_000));
    // gone: its command does not exist; it cools down.
    metrics.on_event(&added("gone", State::Connecting));
    metrics.on_event(&connect("gone", ConnectResult::SpawnFailed, 10));
    clock.advance(Duration::from_secs(1));
    metrics.on_event(&changed("gone", State::Connecting, State::Absent));
    metrics.on_event(&ConnectionEvent::CooldownRejection {
        server: "gone".into(),
    });
    // files dropped once and came back.
    clock.advance(Duration::from_secs(60));
    metrics.on_event(&changed("files", State::Ready, State::Connecting));
    metrics.on_event(&connect("files", ConnectResult::Ok, 250));
    metrics.on_event(&ConnectionEvent::Reconnected {
        server: "files".into(),
    });
    // It came back speaking the newer protocol: one server_info series, the new one.
    metrics.on_event(&handshake("files", "2026-07-28"));
    clock.advance(Duration::from_millis(250));
    metrics.on_event(&changed("files", State::Connecting, State::Ready));

    for server in ["files", "github", "slow", "gone"] {
        metrics.server(server).set_wait_budget(BUDGET);
    }
    // The configuration loaded at start; a step names a tool nobody called yet.
    metrics.config_reloaded(true);
    metrics.server("github").tool("list_repos").declare();

    // Resolutions of every verdict.
    metrics
        .server("files")
        .observe_resolution(&Verdict::READY, BUDGET);
    metrics
        .server("files")
        .observe_resolution(&verdict(State::Ready, 1_500, false, Scope::Tool), BUDGET);
    metrics
        .server("files")
        .observe_resolution(&verdict(State::Absent, 0, false, Scope::Tool), BUDGET);
    metrics
        .server("files")
        .tool("delete_everything")
        .observe_absent();
    metrics.server("github").observe_resolution(
        &verdict(State::Unauthenticated, 0, false, Scope::Server),
        BUDGET,
    );
    metrics.server("slow").observe_resolution(
        &verdict(State::Connecting, 20_000, true, Scope::Server),
        BUDGET,
    );
    metrics
        .server("gone")
        .observe_resolution(&verdict(State::Absent, 2_000, false, Scope::Server), BUDGET);

    // Calls of every outcome, and their operation durations.
    let ms = Duration::from_millis;
    let calls = [
        ("files", "read_file", CallOutcome::Ok, None, ms(42)),
        (
            "files",
            "write_file",
            CallOutcome::ToolError,
            Some("tool_error"),
            ms(180),
        ),
        (
            "github",
            "search_issues",
            CallOutcome::NotReady,
            Some("server_unauthenticated"),
            ms(0),
        ),
        (
            "files",
            "read_file",
            CallOutcome::TransportError,
            Some("transport_error"),
            ms(900),
        ),
        (
            "slow",
            "query",
            CallOutcome::Timeout,
            Some("resolve_timeout"),
            ms(20_000),
        ),
        (
            "files",
            "read_file",
            CallOutcome::Cancelled,
            Some("cancelled"),
            ms(3_000),
        ),
        ("files", "read_file", CallOutcome::Ok, None, ms(7)),
    ];
    for (server, tool, outcome, error_type, duration) in calls {
        metrics.server(server).tool(tool).observe_call(outcome);
        metrics
            .server(server)
            .tool(tool)
            .observe_operation("tools/call", error_type, duration);
    }
    metrics
}

fn stable(text: &str) -> String {
    // The golden file does not change with the crate version.
    text.replace(
        &format!("version=\"{}\"", env!("CARGO_PKG_VERSION")),
        "version=\"VERSION\"",
    )
}

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/metrics.txt")
}

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
            "cannot read {} ({e}): run `UPDATE_GOLDEN=1 cargo test -p mcp-readiness --test library metrics` to create it",
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
fn state_changes_are_counted_by_the_state_entered_from_zero_for_every_configured_server() {
    let metrics = Metrics::new();
    metrics.on_event(&added("flaky", State::Connecting));
    let count = |state: State| {
        value(
            &parse(&metrics.render()),
            names::SERVER_STATE_CHANGES_TOTAL,
            &[("server", "flaky"), ("state", state.as_str())],
        )
    };
    for state in State::ALL {
        assert_eq!(
            count(state),
            Some(0.0),
            "{state} exists at 0 from the start"
        );
    }
    // A crash loop through ready: every cycle enters ready, absent and connecting once.
    for _ in 0..3 {
        metrics.on_event(&changed("flaky", State::Connecting, State::Ready));
        metrics.on_event(&changed("flaky", State::Ready, State::Absent));
        metrics.on_event(&changed("flaky", State::Absent, State::Connecting));
    }
    assert_eq!(count(State::Ready), Some(3.0));
    assert_eq!(count(State::Absent), Some(3.0));
    assert_eq!(count(State::Connecting), Some(3.0));
    assert_eq!(count(State::Unauthenticated), Some(0.0));
    // Removed with the server.
    metrics.on_event(&ConnectionEvent::ServerRemoved {
        server: "flaky".into(),
    });
    assert_eq!(count(State::Ready), None);
}

#[test]
fn the_series_a_first_connect_or_first_call_creates_exist_at_zero_from_the_start() {
    let metrics = Metrics::new();
    metrics.on_event(&added("files", State::Connecting));
    metrics.server("files").tool("write_file").declare();
    let samples = parse(&metrics.render());
    let ok = [("server", "files"), ("result", "ok")];
    assert_eq!(
        value(
            &samples,
            &format!("{}_count", names::CONNECT_DURATION_SECONDS),
            &ok
        ),
        Some(0.0)
    );
    assert_eq!(value(&samples, names::CONNECTS_TOTAL, &ok), Some(0.0));
    assert_eq!(
        value(
            &samples,
            names::TOOL_ABSENT_TOTAL,
            &[("server", "files"), ("tool", "write_file")]
        ),
        Some(0.0)
    );
    // The first event then counts from that zero.
    metrics.on_event(&connect("files", ConnectResult::Ok, 1_500));
    metrics.server("files").tool("write_file").observe_absent();
    let samples = parse(&metrics.render());
    assert_eq!(
        value(
            &samples,
            &format!("{}_count", names::CONNECT_DURATION_SECONDS),
            &ok
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &samples,
            names::TOOL_ABSENT_TOTAL,
            &[("server", "files"), ("tool", "write_file")]
        ),
        Some(1.0)
    );
}

#[test]
fn the_reload_gauges_say_whether_the_last_reload_succeeded_and_when_the_last_one_did() {
    let clock = ManualClock::new(T0);
    let metrics = Metrics::builder().clock(clock.clone()).build().unwrap();
    let read = |m: &Metrics| {
        let samples = parse(&m.render());
        (
            value(&samples, names::CONFIG_LAST_RELOAD_SUCCESSFUL, &[]),
            value(
                &samples,
                names::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS,
                &[],
            ),
        )
    };
    assert_eq!(read(&metrics), (None, None), "nothing before a first load");
    metrics.config_reloaded(true);
    assert_eq!(read(&metrics), (Some(1.0), Some(1_700_000_000.0)));
    clock.advance(Duration::from_secs(90));
    metrics.config_reloaded(false);
    assert_eq!(
        read(&metrics),
        (Some(0.0), Some(1_700_000_000.0)),
        "a refused reload keeps the time of the last success"
    );
    clock.advance(Duration::from_secs(10));
    metrics.config_reloaded(true);
    assert_eq!(read(&metrics), (Some(1.0), Some(1_700_000_100.0)));
}

#[test]
fn the_scenario_records_what_each_event_and_observation_means() {
    let samples = parse(&scenario().render());
    let v = |name: &str, pairs: &[(&str, &str)]| value(&samples, name, pairs);

    // One-hot state, one server per state.
    for (server, state) in [
        ("files", "ready"),
        ("slow", "connecting"),
        ("github", "unauthenticated"),
        ("gone", "absent"),
    ] {
        for s in State::ALL {
            let want = if s.as_str() == state { 1.0 } else { 0.0 };
            assert_eq!(
                v(
                    names::SERVER_STATE,
                    &[("server", server), ("state", s.as_str())]
                ),
                Some(want),
                "{server} {s}"
            );
        }
    }
    // State-change time from the injected clock: files last changed at T0 + 1.7 + 0.3 + 1 + 60 + 0.25 s.
    assert_eq!(
        v(
            names::SERVER_STATE_CHANGED_TIMESTAMP_SECONDS,
            &[("server", "files")]
        ),
        Some(1_700_000_063.25)
    );
    assert_eq!(
        v(
            names::SERVER_STATE_CHANGED_TIMESTAMP_SECONDS,
            &[("server", "slow")]
        ),
        Some(1_700_000_002.0)
    );
    assert_eq!(v(names::SERVER_TOOLS, &[("server", "files")]), Some(3.0));
    // Waste: only the non-ready verdicts' waits.
    assert_eq!(
        v(
            names::WASTE_SECONDS_TOTAL,
            &[("server", "slow"), ("state", "connecting")]
        ),
        Some(20.0)
    );
    assert_eq!(
        v(
            names::WASTE_SECONDS_TOTAL,
            &[("server", "gone"), ("state", "absent")]
        ),
        Some(2.0)
    );
    assert_eq!(
        v(
            names::WASTE_SECONDS_TOTAL,
            &[("server", "files"), ("state", "ready")]
        ),
        None
    );
    // Avoided: budget minus wait, only for states that do not heal.
    assert_eq!(
        v(
            names::AVOIDED_WAIT_SECONDS_TOTAL,
            &[("server", "github"), ("state", "unauthenticated")]
        ),
        Some(20.0)
    );
    assert_eq!(
        v(
            names::AVOIDED_WAIT_SECONDS_TOTAL,
            &[("server", "gone"), ("state", "absent")]
        ),
        Some(18.0)
    );
    assert_eq!(
        v(
            names::AVOIDED_WAIT_SECONDS_TOTAL,
            &[("server", "slow"), ("state", "connecting")]
        ),
        None
    );
    // Budget exhausted: the connecting verdict that timed out.
    assert_eq!(
        v(names::BUDGET_EXHAUSTED_TOTAL, &[("server", "slow")]),
        Some(1.0)
    );
    assert_eq!(
        v(names::BUDGET_EXHAUSTED_TOTAL, &[("server", "files")]),
        Some(0.0)
    );
    // Resolve wait histogram by verdict.
    assert_eq!(
        v(
            "mcp_readiness_resolve_wait_seconds_count",
            &[("server", "files"), ("state", "ready")]
        ),
        Some(2.0)
    );
    assert_eq!(
        v(
            "mcp_readiness_resolve_wait_seconds_sum",
            &[("server", "files"), ("state", "ready")]
        ),
        Some(1.5)
    );
    // Calls: every outcome label.
    let call = |tool: &str, outcome: &str| {
        v(
            names::TOOL_CALLS_TOTAL,
            &[
                (
                    "server",
                    if tool == "search_issues" {
                        "github"
                    } else if tool == "query" {
                        "slow"
                    } else {
                        "files"
                    },
                ),
                ("tool", tool),
                ("outcome", outcome),
            ],
        )
    };
    assert_eq!(call("read_file", "ok"), Some(2.0));
    assert_eq!(call("write_file", "tool_error"), Some(1.0));
    assert_eq!(call("search_issues", "not_ready"), Some(1.0));
    assert_eq!(call("read_file", "transport_error"), Some(1.0));
    assert_eq!(call("query", "timeout"), Some(1.0));
    assert_eq!(call("read_file", "cancelled"), Some(1.0));
    assert_eq!(
        v(
            names::TOOL_ABSENT_TOTAL,
            &[("server", "files"), ("tool", "delete_everything")]
        ),
        Some(1.0)
    );
    // Connects by result, durations, reconnects, cooldown.
    assert_eq!(
        v(
            names::CONNECTS_TOTAL,
            &[("server", "files"), ("result", "ok")]
        ),
        Some(2.0)
    );
    assert_eq!(
        v(
            names::CONNECTS_TOTAL,
            &[("server", "files"), ("result", "closed")]
        ),
        Some(1.0)
    );
    assert_eq!(
        v(
            names::CONNECTS_TOTAL,
            &[("server", "github"), ("result", "refused")]
        ),
        Some(0.0)
    );
    assert_eq!(
        v(
            "mcp_readiness_connect_duration_seconds_sum",
            &[("server", "files"), ("result", "ok")]
        ),
        Some(1.45)
    );
    assert_eq!(
        v(names::RECONNECTS_TOTAL, &[("server", "files")]),
        Some(1.0)
    );
    assert_eq!(
        v(names::COOLDOWN_REJECTIONS_TOTAL, &[("server", "gone")]),
        Some(1.0)
    );
    assert_eq!(
        v(names::WAIT_BUDGET_SECONDS, &[("server", "slow")]),
        Some(20.0)
    );
    // The semantic-convention histogram: empty error_type on success.
    assert_eq!(
        v(
            "mcp_client_operation_duration_seconds_count",
            &[
                ("mcp_method_name", "tools/call"),
                ("gen_ai_tool_name", "read_file"),
                ("error_type", ""),
                ("server", "files"),
            ]
        ),
        Some(2.0)
    );
    assert_eq!(
        v(names::BUILD_INFO, &[("version", env!("CARGO_PKG_VERSION"))]),
        Some(1.0)
    );
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
        (names::COOLDOWN_REJECTIONS_TOTAL, "counter"),
        (names::BUILD_INFO, "gauge"),
        (names::SERVER_STATE_CHANGES_TOTAL, "counter"),
        (names::CONFIG_LAST_RELOAD_SUCCESSFUL, "gauge"),
        (names::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS, "gauge"),
        (names::SERVER_INFO, "gauge"),
        (names::CREDENTIAL_EXPIRY_TIMESTAMP_SECONDS, "gauge"),
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

// ---------------------------------------------------------------------------------------------
// Label values

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\"\\\\\n\r\t a-zé🚀{}=,]{0,12}",
        Just(String::new()),
        Just("\\n".to_owned()),
        Just("\"}".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn hostile_server_and_tool_names_round_trip_through_the_exposition_with_control_characters_shown(
        server in hostile(),
        tool in hostile(),
    ) {
        let metrics = Metrics::new();
        metrics.on_event(&added(&server, State::Ready));
        metrics.server(&server).tool(&tool).observe_call(CallOutcome::Ok);
        metrics.server(&server).tool(&tool).observe_operation("tools/call", None, Duration::from_millis(5));
        let text = metrics.render();
        // Control characters other than the escaped line feed are shown as text (`\u{1b}`), so
        // a scrape read on a terminal cannot drive it.
        prop_assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
        let shown = |s: &str| -> String {
            s.chars()
                .flat_map(|c| {
                    if c.is_control() && c != '\n' {
                        c.escape_default().collect::<Vec<_>>()
                    } else {
                        vec![c]
                    }
                })
                .collect()
        };
        let (server, tool) = (shown(&server), shown(&tool));
        let samples = parse(&text);
        prop_assert_eq!(
            value(&samples, names::TOOL_CALLS_TOTAL, &[("server", &server), ("tool", &tool), ("outcome", "ok")]),
            Some(1.0)
        );
        prop_assert_eq!(
            value(&samples, names::SERVER_STATE, &[("server", &server), ("state", "ready")]),
            Some(1.0)
        );
        prop_assert_eq!(
            value(
                &samples,
                "mcp_client_operation_duration_seconds_count",
                &[("mcp_method_name", "tools/call"), ("gen_ai_tool_name", &tool), ("error_type", ""), ("server", &server)]
            ),
            Some(1.0)
        );
    }

    #[test]
    fn the_state_gauges_stay_one_hot_through_any_sequence_of_events(
        steps in proptest::collection::vec((0usize..3, 0usize..4, any::<bool>()), 1..40),
    ) {
        let servers = ["s0", "s1", "s2"];
        let metrics = Metrics::new();
        let mut current: BTreeMap<&str, State> = BTreeMap::new();
        for (server, state, remove) in steps {
            let server = servers[server];
            let state = State::ALL[state];
            if remove && current.contains_key(server) {
                metrics.on_event(&ConnectionEvent::ServerRemoved { server: server.into() });
                current.remove(server);
            } else if let Some(from) = current.insert(server, state) {
                metrics.on_event(&changed(server, from, state));
            } else {
                metrics.on_event(&added(server, state));
            }
            let samples = parse(&metrics.render());
            for s in servers {
                let series: Vec<_> = samples
                    .iter()
                    .filter(|x| x.name == names::SERVER_STATE && x.labels["server"] == s)
                    .collect();
                match current.get(s) {
                    None => prop_assert!(series.is_empty(), "{} removed but {:?}", s, series),
                    Some(state) => {
                        prop_assert_eq!(series.len(), 4);
                        for x in series {
                            let want = if x.labels["state"] == state.as_str() { 1.0 } else { 0.0 };
                            prop_assert_eq!(x.value, want);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn events_before_a_server_is_added_never_leave_a_partial_one_hot_set() {
    let metrics = Metrics::new();
    metrics.on_event(&connect("early", ConnectResult::Refused, 5));
    metrics.on_event(&ConnectionEvent::ToolsChanged {
        server: "early".into(),
        count: 4,
    });
    let samples = parse(&metrics.render());
    assert!(samples.iter().all(|s| s.name != names::SERVER_STATE));
    assert_eq!(
        value(
            &samples,
            names::CONNECTS_TOTAL,
            &[("server", "early"), ("result", "refused")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&samples, names::SERVER_TOOLS, &[("server", "early")]),
        Some(4.0)
    );

    metrics.on_event(&added("early", State::Absent));
    let samples = parse(&metrics.render());
    let states: Vec<_> = samples
        .iter()
        .filter(|s| s.name == names::SERVER_STATE)
        .map(|s| (s.labels["state"].as_str(), s.value))
        .collect();
    assert_eq!(
        states,
        [
            ("absent", 1.0),
            ("connecting", 0.0),
            ("ready", 0.0),
            ("unauthenticated", 0.0)
        ]
    );
}

#[test]
fn label_values_that_concatenate_alike_stay_distinct_series() {
    // prometheus::MetricVec would merge these two (it hashes the values back to back).
    let metrics = Metrics::new();
    metrics.server("a").tool("bc").observe_call(CallOutcome::Ok);
    metrics.server("ab").tool("c").observe_call(CallOutcome::Ok);
    metrics.server("ab").tool("c").observe_call(CallOutcome::Ok);
    let samples = parse(&metrics.render());
    let calls = |s, t| {
        value(
            &samples,
            names::TOOL_CALLS_TOTAL,
            &[("server", s), ("tool", t), ("outcome", "ok")],
        )
    };
    assert_eq!(calls("a", "bc"), Some(1.0));
    assert_eq!(calls("ab", "c"), Some(2.0));
}

#[test]
fn a_scrape_never_sees_two_states_or_none_while_states_change() {
    let metrics = Metrics::new();
    metrics.on_event(&added("flappy", State::Ready));
    let flipper = {
        let metrics = metrics.clone();
        std::thread::spawn(move || {
            for i in 0..2_000 {
                let (from, to) = if i % 2 == 0 {
                    (State::Ready, State::Connecting)
                } else {
                    (State::Connecting, State::Ready)
                };
                metrics.on_event(&changed("flappy", from, to));
            }
        })
    };
    let mut scrapes = 0;
    while !flipper.is_finished() || scrapes < 10 {
        let ones: f64 = parse(&metrics.render())
            .iter()
            .filter(|s| s.name == names::SERVER_STATE)
            .map(|s| s.value)
            .sum();
        assert_eq!(ones, 1.0, "scrape {scrapes}");
        scrapes += 1;
    }
    flipper.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Caps

#[test]
fn the_257th_distinct_tool_name_is_counted_as_other() {
    let metrics = Metrics::new();
    for i in 0..256 {
        metrics
            .server("files")
            .tool(&format!("tool{i}"))
            .observe_call(CallOutcome::Ok);
    }
    metrics
        .server("files")
        .tool("tool256")
        .observe_call(CallOutcome::Ok);
    metrics
        .server("files")
        .tool("invented")
        .observe_call(CallOutcome::NotReady);
    metrics
        .server("other_server")
        .tool("tool0")
        .observe_call(CallOutcome::Ok); // admitted names stay admitted
    metrics
        .server("files")
        .tool("another_invention")
        .observe_absent();
    let samples = parse(&metrics.render());
    let calls = |server, tool, outcome| {
        value(
            &samples,
            names::TOOL_CALLS_TOTAL,
            &[("server", server), ("tool", tool), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("files", "tool255", "ok"), Some(1.0));
    assert_eq!(calls("files", "tool256", "ok"), None);
    assert_eq!(calls("files", "other", "ok"), Some(1.0));
    assert_eq!(calls("files", "other", "not_ready"), Some(1.0));
    assert_eq!(calls("other_server", "tool0", "ok"), Some(1.0));
    assert_eq!(
        value(
            &samples,
            names::TOOL_ABSENT_TOTAL,
            &[("server", "files"), ("tool", "other")]
        ),
        Some(1.0)
    );
    let tools: std::collections::BTreeSet<_> = samples
        .iter()
        .filter(|s| s.name == names::TOOL_CALLS_TOTAL)
        .map(|s| s.labels["tool"].clone())
        .collect();
    assert_eq!(tools.len(), 257, "256 names and `other`");
}

#[test]
fn the_tool_cap_is_configurable() {
    let metrics = Metrics::builder().tool_cap(1).build().unwrap();
    metrics
        .server("s")
        .tool("first")
        .observe_call(CallOutcome::Ok);
    metrics
        .server("s")
        .tool("second")
        .observe_call(CallOutcome::Ok);
    let samples = parse(&metrics.render());
    let tools: Vec<_> = samples
        .iter()
        .filter(|s| s.name == names::TOOL_CALLS_TOTAL)
        .map(|s| s.labels["tool"].as_str())
        .collect();
    assert_eq!(tools, ["first", "other"]);
}

#[test]
fn servers_only_callers_name_are_capped_but_configured_ones_never_are() {
    let metrics = Metrics::builder()
        .unconfigured_server_cap(2)
        .build()
        .unwrap();
    for server in ["u1", "u2", "u3", "u4"] {
        metrics
            .server(server)
            .tool("t")
            .observe_call(CallOutcome::NotReady);
    }
    for i in 0..5 {
        metrics.on_event(&added(&format!("configured{i}"), State::Ready));
    }
    let samples = parse(&metrics.render());
    let servers: std::collections::BTreeSet<_> = samples
        .iter()
        .filter(|s| s.name == names::TOOL_CALLS_TOTAL)
        .map(|s| s.labels["server"].clone())
        .collect();
    assert_eq!(
        servers.into_iter().collect::<Vec<_>>(),
        ["other", "u1", "u2"]
    );
    assert_eq!(
        value(
            &samples,
            names::TOOL_CALLS_TOTAL,
            &[("server", "other"), ("tool", "t"), ("outcome", "not_ready")]
        ),
        Some(2.0)
    );
    for i in 0..5 {
        let server = format!("configured{i}");
        assert_eq!(
            value(
                &samples,
                names::SERVER_STATE,
                &[("server", &server), ("state", "ready")]
            ),
            Some(1.0)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Removal

#[test]
fn a_removed_server_leaves_no_series_and_its_old_handles_stay_harmless() {
    let metrics = Metrics::new();
    for server in ["doomed", "kept"] {
        metrics.on_event(&added(server, State::Connecting));
        metrics.on_event(&connect(server, ConnectResult::Ok, 100));
        metrics.on_event(&changed(server, State::Connecting, State::Ready));
        metrics.on_event(&ConnectionEvent::ToolsChanged {
            server: server.into(),
            count: 2,
        });
        metrics.on_event(&ConnectionEvent::Reconnected {
            server: server.into(),
        });
        metrics.on_event(&ConnectionEvent::CooldownRejection {
            server: server.into(),
        });
        metrics.server(server).set_wait_budget(BUDGET);
        metrics.server(server).observe_resolution(
            &verdict(State::Connecting, 20_000, true, Scope::Server),
            BUDGET,
        );
        metrics
            .server(server)
            .observe_resolution(&verdict(State::Absent, 0, false, Scope::Tool), BUDGET);
        metrics
            .server(server)
            .tool("t")
            .observe_call(CallOutcome::Ok);
        metrics.server(server).tool("missing").observe_absent();
        metrics.server(server).tool("t").observe_operation(
            "tools/call",
            Some("tool_error"),
            Duration::from_millis(3),
        );
    }
    let handle = metrics.server("doomed");
    let tool = handle.tool("t");
    let before = metrics.render();
    assert!(before.contains("server=\"doomed\""));

    metrics.on_event(&ConnectionEvent::ServerRemoved {
        server: "doomed".into(),
    });
    assert!(!handle.is_live());
    // Old handles record into series nobody exports.
    handle.tool("t").observe_call(CallOutcome::Timeout);
    handle.observe_resolution(
        &verdict(State::Unauthenticated, 0, false, Scope::Server),
        BUDGET,
    );
    tool.observe_call(CallOutcome::Cancelled);
    tool.observe_operation("tools/call", None, Duration::from_millis(1));
    handle.set_wait_budget(BUDGET);

    let after = metrics.render();
    assert!(
        !after.contains("doomed"),
        "left behind:\n{}",
        after
            .lines()
            .filter(|l| l.contains("doomed"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let kept = |text: &str| {
        text.lines()
            .filter(|l| l.contains("server=\"kept\""))
            .count()
    };
    assert_eq!(kept(&before), kept(&after));
    assert!(kept(&after) > 20);

    // It can come back, with fresh series.
    metrics.on_event(&added("doomed", State::Unauthenticated));
    let samples = parse(&metrics.render());
    assert_eq!(
        value(
            &samples,
            names::SERVER_STATE,
            &[("server", "doomed"), ("state", "unauthenticated")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&samples, names::RECONNECTS_TOTAL, &[("server", "doomed")]),
        Some(0.0)
    );
    assert!(metrics.server("doomed").is_live());
}

// ---------------------------------------------------------------------------------------------
// Registry

#[test]
fn a_name_already_in_the_registry_is_an_error_that_names_it() {
    let registry = Registry::new();
    let user = prometheus::IntCounter::new(names::RECONNECTS_TOTAL, "someone else's").unwrap();
    registry.register(Box::new(user)).unwrap();

    let error = Metrics::with_registry(&registry).unwrap_err();
    assert!(
        matches!(error, MetricsError::AlreadyRegistered { name, .. } if name == names::RECONNECTS_TOTAL)
    );
    assert_eq!(
        error.to_string(),
        "metric `mcp_readiness_reconnects_total` is already registered in this registry: pass a registry that holds no mcp-readiness metrics, or clone the existing `Metrics` handle instead of building a second one"
    );

    let metrics = Metrics::with_registry(&Registry::new()).unwrap();
    let again = Metrics::with_registry(metrics.registry()).unwrap_err();
    assert!(
        matches!(again, MetricsError::AlreadyRegistered { name, .. } if name == names::SERVER_STATE)
    );
}

#[test]
fn a_failed_registration_registers_nothing() {
    // Collide on the family registered last, with a metric identical to ours, so that once the
    // user's metric is gone nothing but a leftover of the failed attempt could collide again.
    let last = names::MCP_CLIENT_OPERATION_DURATION_SECONDS;
    let reference = Metrics::new();
    reference
        .server("s")
        .tool("t")
        .observe_operation("tools/call", None, Duration::ZERO);
    let help = reference
        .render()
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!("# HELP {last} "))
                .map(str::to_owned)
        })
        .unwrap();
    let labels = [
        "mcp_method_name",
        "gen_ai_tool_name",
        "error_type",
        "server",
    ];
    let user =
        prometheus::HistogramVec::new(prometheus::HistogramOpts::new(last, help), &labels).unwrap();
    let registry = Registry::new();
    registry.register(Box::new(user.clone())).unwrap();

    let error = Metrics::with_registry(&registry).unwrap_err();
    assert!(matches!(error, MetricsError::AlreadyRegistered { name, .. } if name == last));

    registry.unregister(Box::new(user)).unwrap();
    let metrics = Metrics::with_registry(&registry).unwrap();
    metrics.server("s").tool("t").observe_call(CallOutcome::Ok);
    assert!(metrics.render().contains(names::TOOL_CALLS_TOTAL));
}

#[test]
fn the_users_own_collectors_are_rendered_alongside() {
    let registry = Registry::new();
    let mine = prometheus::IntCounter::new("my_app_requests_total", "mine").unwrap();
    registry.register(Box::new(mine.clone())).unwrap();
    mine.inc();
    let metrics = Metrics::with_registry(&registry).unwrap();
    let text = metrics.render();
    assert!(text.contains("my_app_requests_total 1\n"));
    assert!(text.contains("mcp_readiness_build_info{version="));
}

#[test]
fn a_registry_with_a_prefix_and_common_labels_applies_them_to_our_metrics_too() {
    let labels = [("instance".to_owned(), "a\"1".to_owned())].into();
    let registry = Registry::new_custom(Some("myapp".into()), Some(labels)).unwrap();
    let metrics = Metrics::with_registry(&registry).unwrap();
    metrics.on_event(&added("files", State::Ready));
    let samples = parse(&metrics.render());
    assert_eq!(
        value(
            &samples,
            "myapp_mcp_readiness_server_state",
            &[
                ("instance", "a\"1"),
                ("server", "files"),
                ("state", "ready")
            ]
        ),
        Some(1.0)
    );
    assert!(samples.iter().all(|s| s.name.starts_with("myapp_")));
}

// ---------------------------------------------------------------------------------------------
// HTTP

async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test]
async fn the_endpoint_serves_metrics_a_landing_page_and_404_over_a_real_socket() {
    let metrics = Metrics::new();
    metrics.on_event(&added("files", State::Ready));
    let server = exporter::serve(metrics.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);

    let (status, head, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    assert!(body.contains(r#"mcp_readiness_server_state{server="files",state="ready"} 1"#));
    assert_eq!(parse(&body), parse(&metrics.render()));

    let (status, head, body) = get(addr, "/status").await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(body.contains("<a href=\"/metrics\">"));

    // `/` sends a browser to the status page.
    let (status, head, _) = get(addr, "/").await;
    assert_eq!(status, 307);
    assert!(head.contains("location: /status"), "{head}");

    let (status, _, _) = get(addr, "/nope").await;
    assert_eq!(status, 404);

    server.shutdown().await.unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still listening after shutdown"
    );
}

#[tokio::test]
async fn a_taken_address_is_an_error_that_says_what_to_do() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = taken.local_addr().unwrap();
    let error = exporter::serve(Metrics::new(), addr).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("could not listen on {addr} (")),
        "{message}"
    );
    assert!(message.ends_with(
        "choose another address (e.g. --listen 127.0.0.1:0) or stop the process using it"
    ));
}

#[tokio::test]
async fn the_metrics_router_mounts_into_a_users_application() {
    let metrics = Metrics::new();
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .merge(exporter::router(metrics));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    let (status, _, body) = get(addr, "/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, _, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    assert!(body.contains("mcp_readiness_build_info"));
    let (status, _, body) = get(addr, "/status").await;
    assert_eq!(status, 200);
    assert!(body.contains("<!DOCTYPE html>"), "{body}");
    // `/` stays the host's: the router does not take it.
    let (status, _, _) = get(addr, "/").await;
    assert_eq!(status, 404);
    task.abort();
}

#[test]
fn the_default_listen_address_is_loopback_9464() {
    assert_eq!(exporter::DEFAULT_LISTEN.to_string(), "127.0.0.1:9464");
}
