//! The recorder: what each connection event, verdict and call observation records, state changes
//! counted by the state entered, series that exist at zero from the start, and the reload gauges.

use std::env;
use std::time::Duration;

use mcp_readiness::State;
use mcp_readiness::state::{ConnectResult, ConnectionEvent, EventSink};
use mcp_readiness::{
    Metrics,
    metrics::{ManualClock, names},
};

use crate::support::call::call;
use crate::support::events::*;
use crate::support::exposition::*;

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

    // Each series as `name`, its labels as `key=value` words, and its value.
    #[rustfmt::skip]
    let expected: &[(&str, &str, Option<f64>)] = &[
        // State-change time from the injected clock: files last changed at T0 + 1.7 + 0.3 + 1 + 60 + 0.25 s.
        (names::SERVER_STATE_CHANGED_TIMESTAMP_SECONDS, "server=files", Some(1_700_000_063.25)),
        (names::SERVER_STATE_CHANGED_TIMESTAMP_SECONDS, "server=slow", Some(1_700_000_002.0)),
        (names::SERVER_TOOLS, "server=files", Some(3.0)),
        // Waste: only the non-ready verdicts' waits.
        (names::WASTE_SECONDS_TOTAL, "server=slow state=connecting", Some(20.0)),
        (names::WASTE_SECONDS_TOTAL, "server=gone state=absent", Some(2.0)),
        (names::WASTE_SECONDS_TOTAL, "server=files state=ready", None),
        // Avoided: budget minus wait, only for states that do not heal.
        (names::AVOIDED_WAIT_SECONDS_TOTAL, "server=github state=unauthenticated", Some(20.0)),
        (names::AVOIDED_WAIT_SECONDS_TOTAL, "server=gone state=absent", Some(18.0)),
        (names::AVOIDED_WAIT_SECONDS_TOTAL, "server=slow state=connecting", None),
        // Budget exhausted: the connecting verdict that timed out.
        (names::BUDGET_EXHAUSTED_TOTAL, "server=slow", Some(1.0)),
        (names::BUDGET_EXHAUSTED_TOTAL, "server=files", Some(0.0)),
        // Resolve wait histogram by verdict.
        ("mcp_readiness_resolve_wait_seconds_count", "server=files state=ready", Some(2.0)),
        ("mcp_readiness_resolve_wait_seconds_sum", "server=files state=ready", Some(1.5)),
        (names::TOOL_ABSENT_TOTAL, "server=files tool=delete_everything", Some(1.0)),
        // Connects by result, durations, reconnects, cooldown.
        (names::CONNECTS_TOTAL, "server=files result=ok", Some(2.0)),
        (names::CONNECTS_TOTAL, "server=files result=closed", Some(1.0)),
        (names::CONNECTS_TOTAL, "server=github result=refused", Some(0.0)),
        ("mcp_readiness_connect_duration_seconds_sum", "server=files result=ok", Some(1.45)),
        (names::RECONNECTS_TOTAL, "server=files", Some(1.0)),
        (names::COOLDOWN_REJECTIONS_TOTAL, "server=gone", Some(1.0)),
        (names::WAIT_BUDGET_SECONDS, "server=slow", Some(20.0)),
        // The semantic-convention histogram: empty error_type on success.
        ("mcp_client_operation_duration_seconds_count", "mcp_method_name=tools/call gen_ai_tool_name=read_file error_type= server=files", Some(2.0)),
        (names::BUILD_INFO, concat!("version=", env!("CARGO_PKG_VERSION")), Some(1.0)),
    ];
    for &(name, labels, want) in expected {
        let pairs: Vec<(&str, &str)> = labels
            .split(' ')
            .map(|pair| pair.split_once('=').unwrap())
            .collect();
        assert_eq!(v(name, &pairs), want, "{name} {labels}");
    }
}

/// The value of `name{labels}` in `text`, 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0.0)
}

#[tokio::test(start_paused = true)]
async fn a_storm_of_refused_calls_avoids_one_shared_wait_not_a_budget_per_call() {
    use mcp_readiness::{Budget, ReadinessLayer, Snapshot, StaticInventory, ToolCall};
    use rmcp::model::CallToolResult;
    use tower::{ServiceBuilder, ServiceExt as _};

    let metrics = Metrics::new();
    let budget = Budget::try_new(Duration::from_secs(20), Duration::from_secs(2)).unwrap();
    let tools = ServiceBuilder::new()
        .layer(
            ReadinessLayer::builder(StaticInventory::new(Snapshot::default()))
                .budget(budget)
                .metrics(metrics.clone())
                .build(),
        )
        .service(tower::service_fn(|_: ToolCall| async {
            Ok::<_, tower::BoxError>(CallToolResult::success(vec![]))
        }));
    let avoided = r#"mcp_readiness_avoided_wait_seconds_total{server="gone",state="absent"}"#;
    // The issue's storm: 625 refused calls in 0.3 s, 125 at a time.
    for _ in 0..5 {
        let calls: Vec<_> = (0..125)
            .map(|i| {
                tools
                    .clone()
                    .oneshot(ToolCall::new(format!("mcp__gone__tool{}", i % 7)))
            })
            .collect();
        for result in futures::future::join_all(calls).await {
            assert!(result.is_err());
        }
        tokio::time::advance(Duration::from_millis(60)).await;
    }
    let text = metrics.render();
    let counted = sample(&text, avoided);
    // One wait of 20 s from the first call, extended by the 0.24 s until the last: not 12,500 s.
    assert!(
        (20.0..=20.3).contains(&counted),
        "avoided {counted} s for 625 calls in 0.3 s"
    );
    // Afterwards it grows no faster than wall time: a call every 5 s for a minute, the last at
    // 60.3 s, and the counter is the one wait from 0 to 60.3 s + 20 s.
    for _ in 0..12 {
        tokio::time::advance(Duration::from_secs(5)).await;
        let _ = call(&tools, "mcp__gone__read").await;
    }
    let later = sample(&metrics.render(), avoided);
    assert!(
        (later - 80.3).abs() < 1e-6,
        "{later} s after a minute of calls"
    );
}

#[test]
fn a_server_that_is_not_ready_offers_no_tools_until_its_next_live_connection_lists_them() {
    let metrics = Metrics::new();
    let tools = |metrics: &Metrics| {
        value(
            &parse(&metrics.render()),
            names::SERVER_TOOLS,
            &[("server", "crashloop")],
        )
    };
    metrics.on_event(&added("crashloop", State::Connecting));
    metrics.on_event(&changed("crashloop", State::Connecting, State::Ready));
    metrics.on_event(&ConnectionEvent::ToolsChanged {
        server: "crashloop".into(),
        count: 13,
    });
    assert_eq!(tools(&metrics), Some(13.0));
    // Its process exited: absent, and the 13 tools went with it (the status page says 0 too).
    metrics.on_event(&changed("crashloop", State::Ready, State::Absent));
    assert_eq!(tools(&metrics), Some(0.0));
    metrics.on_event(&changed("crashloop", State::Absent, State::Connecting));
    assert_eq!(tools(&metrics), Some(0.0));
    // The next live connection lists them again.
    metrics.on_event(&changed("crashloop", State::Connecting, State::Ready));
    metrics.on_event(&ConnectionEvent::ToolsChanged {
        server: "crashloop".into(),
        count: 13,
    });
    assert_eq!(tools(&metrics), Some(13.0));
}
