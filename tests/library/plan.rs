//! Step plans and the run record: each state and requiredness gets its decision, and the run's
//! summary and hand-off note.

use std::time::{Duration, SystemTime};

use mcp_readiness::State;
use mcp_readiness::plan::{Decision, RunSummary, Step, StepOutcome};
use mcp_readiness::resolve::{Scope, Verdict};

fn verdict(state: State, scope: Scope) -> Verdict {
    Verdict {
        state,
        scope,
        timed_out: state == State::Connecting,
        ..Verdict::READY
    }
}

#[test]
fn every_state_and_requiredness_gets_the_seeds_decision() {
    let required = Step::required("r", "mcp__srv__t");
    let optional = Step::optional("o", "mcp__srv__t").with_fallback("write-file");
    let table = [
        (State::Ready, "run", "run"),
        (State::Unauthenticated, "abort", "fallback"),
        (State::Connecting, "retry_next_run", "skip"),
        (State::Absent, "abort", "fallback"),
    ];
    for (state, when_required, when_optional) in table {
        let v = verdict(state, Scope::Server);
        assert_eq!(required.decide(&v).as_str(), when_required, "{state}");
        assert_eq!(optional.decide(&v).as_str(), when_optional, "{state}");
    }
    match optional.decide(&verdict(State::Absent, Scope::Server)) {
        Decision::Fallback { to, .. } => assert_eq!(to.as_deref(), Some("write-file")),
        other => panic!("expected a fallback, got {other:?}"),
    }
}

#[test]
fn unauthenticated_and_absent_aborts_name_different_next_steps_and_the_server() {
    let step = Step::required("fetch", "mcp__github__search_issues");
    let auth = step.decide(&verdict(State::Unauthenticated, Scope::Server));
    let absent = step.decide(&verdict(State::Absent, Scope::Server));
    assert_ne!(auth.reason(), absent.reason());
    assert!(
        auth.reason()
            .contains("re-authorize the `github` connection"),
        "{}",
        auth.reason()
    );
    assert!(
        absent
            .reason()
            .contains("add or repair the `github` connection"),
        "{}",
        absent.reason()
    );
    let connecting = step.decide(&verdict(State::Connecting, Scope::Server));
    assert!(
        connecting
            .reason()
            .contains("extend the wait budget for `github`")
    );
}

#[test]
fn a_tool_its_ready_server_does_not_offer_points_at_the_tool_name_not_the_connection() {
    let step = Step::required("export", "mcp__notes__export_pdf");
    let missing = step.decide(&verdict(State::Absent, Scope::Tool));
    assert_eq!(
        missing.reason(),
        "`notes` is connected but does not offer `export_pdf`: check the tool name \
         `export_pdf`, or run a version of `notes` that offers it"
    );
}

#[test]
fn the_run_record_has_exactly_the_contract_keys_and_counts() {
    let mut outcomes = vec![
        StepOutcome::new(&Step::required("a", "mcp__files__read"), &Verdict::READY),
        StepOutcome::new(&Step::required("b", "mcp__files__write"), &Verdict::READY),
        StepOutcome::new(
            &Step::required("c", "mcp__analytics__q"),
            &verdict(State::Unauthenticated, Scope::Server),
        ),
    ];
    outcomes.extend(
        [
            ("d", "mcp__analytics__r", State::Unauthenticated),
            ("e", "mcp__search__q", State::Connecting),
            ("f", "mcp__gone__x", State::Absent),
        ]
        .map(|(id, tool, state)| {
            StepOutcome::new(&Step::optional(id, tool), &verdict(state, Scope::Server))
        }),
    );
    let summary = RunSummary::new(
        SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
        outcomes,
    );
    let json: serde_json::Value = serde_json::to_value(&summary).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "ts": "2023-11-14T22:13:20.123Z",
            "ran": 2,
            "blocked_by_auth": ["analytics"],
            "still_connecting": ["search"],
            "absent": ["gone"],
            "by_state": {"ready": 2, "connecting": 1, "unauthenticated": 2, "absent": 1}
        })
    );
    assert!(!summary.all_required_ready());
    let note = summary.handoff_note();
    assert!(note.starts_with("2 of 6 steps ran. Next steps:"), "{note}");
    assert!(note.contains("`analytics` needs re-authorization [reauthorize]: Re-authorize the `analytics` connection. Affected steps: c (abort), d (fallback)."), "{note}");
    assert!(note.contains("`gone` is absent [add_connection]"), "{note}");
    assert!(
        note.contains("`search` was still connecting when the budget ran out [extend_wait_budget]"),
        "{note}"
    );
}

#[test]
fn a_run_where_everything_is_ready_says_nothing_needs_a_human() {
    let summary = RunSummary::new(
        SystemTime::UNIX_EPOCH,
        vec![StepOutcome::new(
            &Step::required("a", "mcp__f__r"),
            &Verdict::READY,
        )],
    );
    assert!(summary.all_required_ready());
    assert_eq!(
        summary.handoff_note(),
        "1 of 1 steps ran. Nothing needs a human."
    );
}
