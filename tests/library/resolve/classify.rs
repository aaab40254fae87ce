//! Classification: the order of the four states, and which state heals with time and what each
//! other one names as its action.

use super::*;

#[test]
fn classification_order_is_ready_then_unauthenticated_then_connecting_then_absent() {
    let snapshot = Snapshot::default()
        .with_ready_tool("mcp__both__listed")
        .with_pending_server("both")
        .with_unauthenticated_server("both")
        .with_pending_server("slow");
    assert_eq!(
        classify(&tool("mcp__both__listed"), &snapshot),
        State::Ready
    );
    assert_eq!(
        classify(&tool("mcp__both__other"), &snapshot),
        State::Unauthenticated
    );
    assert_eq!(
        classify(&tool("mcp__slow__x"), &snapshot),
        State::Connecting
    );
    assert_eq!(classify(&tool("mcp__nowhere__x"), &snapshot), State::Absent);
    assert_eq!(classify(&tool("Bash"), &snapshot), State::Absent);
}

#[test]
fn only_connecting_heals_with_time_and_each_other_state_names_its_action() {
    let healing: Vec<State> = State::ALL
        .into_iter()
        .filter(|s| s.heals_with_time())
        .collect();
    assert_eq!(healing, [State::Connecting]);
    let actions: Vec<Option<&str>> = State::ALL
        .iter()
        .map(|s| s.action().map(|a| a.as_str()))
        .collect();
    assert_eq!(
        actions,
        [
            None,
            Some("extend_wait_budget"),
            Some("reauthorize"),
            Some("add_connection")
        ]
    );
}
