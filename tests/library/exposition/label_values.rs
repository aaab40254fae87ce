//! Label values through the text format and back: hostile server and tool names, values that
//! concatenate alike, and the one-hot state invariant under any sequence of events and while a
//! scrape runs.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_readiness::State;
use mcp_readiness::state::{CallOutcome, ConnectResult, ConnectionEvent, EventSink};
use mcp_readiness::{Metrics, metrics::names};
use proptest::prelude::*;

use crate::support::events::*;
use crate::support::exposition::*;

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
