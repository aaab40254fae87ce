//! The core: classification, the budgeted resolver, the capability cache, step plans and the run
//! record. Every time test runs on tokio's paused clock and steps to each edge.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use mcp_readiness::plan::{Decision, RunSummary, Step, StepOutcome};
use mcp_readiness::{
    Budget, Inventory, Snapshot, State, StaticInventory, ToolName, resolve,
    resolve::{CacheTtls, CapabilityCache, ChangeFeed, Scope, Verdict, classify},
};
use tokio::time::Instant;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// One server that connects at a given virtual time and then offers `tools`; counts polls.
struct LateServer {
    start: Instant,
    server: &'static str,
    tools: Vec<&'static str>,
    ready_at: Option<Duration>,
    feed: Option<ChangeFeed>,
    polls: AtomicU64,
}

impl LateServer {
    fn new(server: &'static str, tools: &[&'static str], ready_at: Option<Duration>) -> Self {
        LateServer {
            start: Instant::now(),
            server,
            tools: tools.to_vec(),
            ready_at,
            feed: None,
            polls: AtomicU64::new(0),
        }
    }

    /// Also notifies at `ready_at` (needs a running runtime).
    fn notifying(mut self) -> Arc<Self> {
        self.feed = Some(ChangeFeed::new());
        let this = Arc::new(self);
        if let Some(at) = this.ready_at {
            let weak = Arc::downgrade(&this);
            let when = this.start + at;
            tokio::spawn(async move {
                tokio::time::sleep_until(when).await;
                if let Some(this) = weak.upgrade() {
                    this.feed.as_ref().map(ChangeFeed::bump);
                }
            });
        }
        this
    }

    fn polls(&self) -> u64 {
        self.polls.load(Ordering::SeqCst)
    }
}

impl Inventory for LateServer {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let ready = self.ready_at.is_some_and(|at| self.start.elapsed() >= at);
        let mut snapshot = Snapshot::default();
        if ready {
            for tool in &self.tools {
                snapshot = snapshot.with_ready_tool(&format!("mcp__{}__{tool}", self.server));
            }
            snapshot = snapshot.with_connected_server(self.server);
        } else {
            snapshot = snapshot.with_pending_server(self.server);
        }
        Box::pin(async move { snapshot })
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        self.feed.as_ref()
    }
}

fn tool(name: &str) -> ToolName {
    ToolName::parse(name)
}

// ---------------------------------------------------------------- classify

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

// ---------------------------------------------------------------- budget

#[test]
fn budget_refuses_zero_and_inverted_polls_naming_both_values() {
    let zero = Budget::try_new(Duration::from_secs(20), Duration::ZERO).unwrap_err();
    assert_eq!(
        zero.to_string(),
        "poll interval must be greater than zero (wait budget 20s): use e.g. 2s"
    );
    let inverted = Budget::try_new(Duration::from_secs(1), Duration::from_secs(2)).unwrap_err();
    assert!(inverted.to_string().contains("2s") && inverted.to_string().contains("1s"));
    assert!(Budget::try_new(Duration::ZERO, Duration::from_secs(1)).is_err());
    assert!(Budget::try_new(Duration::from_secs(2), Duration::from_secs(2)).is_ok());
    let default = Budget::default();
    assert_eq!(
        (default.wait(), default.poll()),
        (Duration::from_secs(20), Duration::from_secs(2))
    );
}

// ---------------------------------------------------------------- resolve

#[tokio::test(start_paused = true)]
async fn a_tool_that_appears_on_the_fourth_poll_is_ready_after_exactly_6000_ms() {
    let inventory = LateServer::new("x", &["a"], Some(MS(6000)));
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(verdict.state, State::Ready);
    assert_eq!(verdict.waited, MS(6000));
    assert!(!verdict.timed_out);
    assert_eq!(inventory.polls(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_never_arrives_is_connecting_and_timed_out_after_exactly_20000_ms() {
    let inventory = LateServer::new("x", &["a"], None);
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(
        (verdict.state, verdict.waited, verdict.timed_out),
        (State::Connecting, MS(20_000), true)
    );
    assert_eq!(verdict.error_type(), Some("resolve_timeout"));
    assert_eq!(inventory.polls(), 11, "polls at 0, 2, ..., 20 s");
}

#[tokio::test(start_paused = true)]
async fn arriving_just_before_the_last_poll_is_caught_and_just_after_is_not() {
    let before = LateServer::new("x", &["a"], Some(MS(19_999)));
    let verdict = resolve::resolve(&before, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!((verdict.state, verdict.waited), (State::Ready, MS(20_000)));

    let after = LateServer::new("x", &["a"], Some(MS(20_001)));
    let verdict = resolve::resolve(&after, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(
        (verdict.state, verdict.waited, verdict.timed_out),
        (State::Connecting, MS(20_000), true)
    );
}

#[tokio::test(start_paused = true)]
async fn the_last_poll_is_the_one_that_still_fits_in_the_budget() {
    // 7 s budget, 2 s poll: polls at 0, 2, 4, 6; the next (8 s) would overrun.
    let inventory = LateServer::new("x", &["a"], None);
    let budget = Budget::try_new(MS(7000), MS(2000)).unwrap();
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), budget).await;
    assert_eq!((verdict.waited, verdict.timed_out), (MS(6000), true));
    assert_eq!(inventory.polls(), 4);
}

#[tokio::test(start_paused = true)]
async fn with_change_notifications_a_tool_arriving_at_5_1_s_returns_at_5_1_s() {
    let inventory = LateServer::new("x", &["a"], Some(MS(5100))).notifying();
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!((verdict.state, verdict.waited), (State::Ready, MS(5100)));
}

#[tokio::test(start_paused = true)]
async fn a_change_that_does_not_help_keeps_the_poll_grid_and_the_full_budget() {
    let inventory = Arc::new(StaticInventory::new(
        Snapshot::default().with_pending_server("x"),
    ));
    let bumper = inventory.clone();
    tokio::spawn(async move {
        tokio::time::sleep(MS(19_100)).await;
        bumper.set(
            Snapshot::default()
                .with_pending_server("x")
                .with_pending_server("y"),
        );
    });
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(
        (verdict.state, verdict.waited, verdict.timed_out),
        (State::Connecting, MS(20_000), true)
    );
}

#[tokio::test(start_paused = true)]
async fn unauthenticated_and_absent_return_without_waiting_and_say_why() {
    let inventory = StaticInventory::new(
        Snapshot::default()
            .with_unauthenticated_server("chat")
            .with_pending_server("chat")
            .with_reason("chat", "HTTP 401 from the server")
            .with_ready_tool("mcp__files__read"),
    );
    let chat = resolve::resolve(&inventory, &tool("mcp__chat__send"), Budget::default()).await;
    assert_eq!(
        (chat.state, chat.waited, chat.scope),
        (State::Unauthenticated, Duration::ZERO, Scope::Server)
    );
    assert_eq!(chat.reason.as_deref(), Some("HTTP 401 from the server"));
    assert_eq!(chat.error_type(), Some("server_unauthenticated"));

    let gone = resolve::resolve(&inventory, &tool("mcp__gone__x"), Budget::default()).await;
    assert_eq!(
        (gone.state, gone.waited, gone.scope),
        (State::Absent, Duration::ZERO, Scope::Server)
    );
    assert_eq!(gone.error_type(), Some("server_absent"));

    let missing = resolve::resolve(&inventory, &tool("mcp__files__write"), Budget::default()).await;
    assert_eq!((missing.state, missing.scope), (State::Absent, Scope::Tool));
    assert_eq!(missing.error_type(), Some("tool_absent"));
    assert!(
        missing
            .reason
            .as_deref()
            .unwrap()
            .contains("does not offer `write`")
    );
}

// ---------------------------------------------------------------- cache

#[tokio::test(start_paused = true)]
async fn three_tools_on_one_still_connecting_server_cost_one_budget_not_three() {
    let inventory = Arc::new(LateServer::new("search", &["a", "b", "c"], None));
    let cache = CapabilityCache::new(inventory.clone());
    let start = Instant::now();
    let mut waits = Vec::new();
    for name in ["mcp__search__a", "mcp__search__b", "mcp__search__c"] {
        let verdict = cache.resolve(&tool(name)).await;
        assert_eq!(verdict.state, State::Connecting);
        waits.push(verdict.waited);
    }
    assert_eq!(waits, [MS(20_000), Duration::ZERO, Duration::ZERO]);
    assert_eq!(start.elapsed(), MS(20_000));
}

#[tokio::test(start_paused = true)]
async fn concurrent_resolutions_for_one_connecting_server_share_one_wait() {
    let inventory = Arc::new(LateServer::new("search", &["t0"], Some(MS(6000))));
    let cache = Arc::new(CapabilityCache::new(inventory.clone()));
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let cache = cache.clone();
            tokio::spawn(async move {
                cache
                    .resolve(&tool(&format!("mcp__search__t{}", i % 3)))
                    .await
            })
        })
        .collect();
    let mut verdicts = Vec::new();
    for task in tasks {
        verdicts.push(task.await.unwrap());
    }
    // One flight polled 4 times (0, 2, 4, 6 s); each caller of another tool then looked once.
    assert!(verdicts.iter().all(|v| v.waited == MS(6000)));
    assert_eq!(
        verdicts.iter().filter(|v| v.state == State::Ready).count(),
        22
    );
    assert_eq!(
        verdicts
            .iter()
            .filter(|v| v.state == State::Absent && v.scope == Scope::Tool)
            .count(),
        42
    );
    assert!(inventory.polls() <= 4 + 63, "polls: {}", inventory.polls());
    assert!(inventory.polls() < 64 * 4);
}

#[tokio::test(start_paused = true)]
async fn a_connecting_verdict_lives_5_s_so_a_server_that_came_online_is_not_hidden_for_60_s() {
    // No change feed: only the short lifetime of `connecting` lets the news through.
    let inventory = Arc::new(LateServer::new("x", &["a", "b"], Some(MS(21_000))));
    let cache = CapabilityCache::new(inventory.clone());
    let first = cache.resolve(&tool("mcp__x__a")).await;
    assert_eq!((first.state, first.waited), (State::Connecting, MS(20_000)));

    tokio::time::advance(MS(4_999)).await; // t = 24.999 s: still the cached connecting verdict
    let hit = cache.resolve(&tool("mcp__x__b")).await;
    assert_eq!((hit.state, hit.waited), (State::Connecting, Duration::ZERO));

    tokio::time::advance(MS(1)).await; // t = 25 s: the entry has expired
    let fresh = cache.resolve(&tool("mcp__x__b")).await;
    assert_eq!((fresh.state, fresh.waited), (State::Ready, Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn with_a_change_feed_a_server_that_came_online_is_seen_at_once() {
    let inventory = Arc::new(StaticInventory::new(
        Snapshot::default().with_unauthenticated_server("x"),
    ));
    let cache = CapabilityCache::new(inventory.clone());
    assert_eq!(
        cache.resolve(&tool("mcp__x__a")).await.state,
        State::Unauthenticated
    );
    tokio::time::advance(MS(1000)).await;
    // Still unauthenticated well inside its 60 s lifetime: served from the cache.
    assert_eq!(
        cache.resolve(&tool("mcp__x__b")).await.state,
        State::Unauthenticated
    );
    // A human re-authorizes; the inventory says so.
    inventory.set(Snapshot::default().with_ready_tool("mcp__x__a"));
    let verdict = cache.resolve(&tool("mcp__x__a")).await;
    assert_eq!(
        (verdict.state, verdict.waited),
        (State::Ready, Duration::ZERO)
    );
}

#[tokio::test(start_paused = true)]
async fn an_unrelated_change_does_not_make_a_connecting_server_cost_a_second_budget() {
    let inventory = Arc::new(StaticInventory::new(
        Snapshot::default().with_pending_server("x"),
    ));
    let cache = CapabilityCache::new(inventory.clone());
    assert_eq!(cache.resolve(&tool("mcp__x__a")).await.waited, MS(20_000));
    inventory.set(
        Snapshot::default()
            .with_pending_server("x")
            .with_ready_tool("mcp__y__b"),
    );
    let verdict = cache.resolve(&tool("mcp__x__c")).await;
    assert_eq!(
        (verdict.state, verdict.waited),
        (State::Connecting, Duration::ZERO)
    );
}

#[tokio::test(start_paused = true)]
async fn ready_is_a_fact_about_one_tool_not_about_its_server() {
    let inventory = StaticInventory::new(Snapshot::default().with_ready_tool("mcp__files__read"));
    let cache = CapabilityCache::new(inventory);
    assert_eq!(
        cache.resolve(&tool("mcp__files__read")).await.state,
        State::Ready
    );
    let other = cache.resolve(&tool("mcp__files__write")).await;
    assert_eq!((other.state, other.scope), (State::Absent, Scope::Tool));
    assert!(
        cache
            .lookup(&tool("mcp__files__read"))
            .is_some_and(|v| v.is_ready())
    );
}

#[tokio::test(start_paused = true)]
async fn a_ready_entry_expires_exactly_at_its_lifetime() {
    let inventory = StaticInventory::new(Snapshot::default().with_ready_tool("mcp__f__r"));
    let ttls = CacheTtls {
        ready: MS(60_000),
        ..CacheTtls::default()
    };
    let cache = CapabilityCache::new(inventory).with_ttls(ttls);
    cache.resolve(&tool("mcp__f__r")).await;
    tokio::time::advance(MS(59_999)).await;
    assert!(cache.lookup(&tool("mcp__f__r")).is_some());
    tokio::time::advance(MS(1)).await;
    assert!(cache.lookup(&tool("mcp__f__r")).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_first_caller_does_not_lose_the_wait_for_the_others() {
    let inventory = Arc::new(LateServer::new("x", &["a", "b"], Some(MS(6000))));
    let cache = Arc::new(CapabilityCache::new(inventory.clone()));
    let leader = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.resolve(&tool("mcp__x__a")).await })
    };
    tokio::time::sleep(MS(1000)).await;
    let joiner = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.resolve(&tool("mcp__x__b")).await })
    };
    tokio::time::sleep(MS(1000)).await;
    leader.abort();
    let verdict = joiner.await.unwrap();
    assert_eq!((verdict.state, verdict.waited), (State::Ready, MS(5000)));
}

#[tokio::test(start_paused = true)]
async fn invented_tool_names_beyond_the_cap_are_resolved_but_not_cached() {
    let inventory = StaticInventory::new(Snapshot::default().with_connected_server("s"));
    let cache = CapabilityCache::new(inventory).with_max_tools(2);
    for i in 0..5 {
        let verdict = cache.resolve(&tool(&format!("mcp__s__t{i}"))).await;
        assert_eq!((verdict.state, verdict.scope), (State::Absent, Scope::Tool));
    }
    assert!(cache.lookup(&tool("mcp__s__t0")).is_some());
    assert!(cache.lookup(&tool("mcp__s__t4")).is_none());
}

// ---------------------------------------------------------------- plan

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
fn the_run_record_has_exactly_the_contract_keys_and_counts() {
    let outcomes = vec![
        StepOutcome::new(&Step::required("a", "mcp__files__read"), &Verdict::READY),
        StepOutcome::new(&Step::required("b", "mcp__files__write"), &Verdict::READY),
        StepOutcome::new(
            &Step::required("c", "mcp__analytics__q"),
            &verdict(State::Unauthenticated, Scope::Server),
        ),
        StepOutcome::new(
            &Step::optional("d", "mcp__analytics__r"),
            &verdict(State::Unauthenticated, Scope::Server),
        ),
        StepOutcome::new(
            &Step::optional("e", "mcp__search__q"),
            &verdict(State::Connecting, Scope::Server),
        ),
        StepOutcome::new(
            &Step::optional("f", "mcp__gone__x"),
            &verdict(State::Absent, Scope::Server),
        ),
    ];
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

// ---------------------------------------------------------------- properties

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn name_like() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "(mcp__)?[a-z_\\-\"\\\\\n\u{e9}\u{30c4}]{0,12}(__[a-z_]{0,6}){0,3}",
        ]
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_gives_back_the_input(s in name_like()) {
            let name = ToolName::parse(&s);
            prop_assert_eq!(name.as_str(), s.as_str());
            prop_assert_eq!(name.to_string(), s.clone());
            if name.is_builtin() {
                prop_assert_eq!(name.server(), "builtin");
                prop_assert_eq!(name.tool(), s.as_str());
            } else {
                prop_assert_eq!(format!("mcp__{}__{}", name.server(), name.tool()), s.clone());
                prop_assert!(!name.server().is_empty() && !name.tool().is_empty());
                prop_assert!(!name.server().contains("__"));
                prop_assert!(!name.server().starts_with('_') && !name.server().ends_with('_'));
            }
        }

        #[test]
        fn a_qualified_name_parses_back_to_its_parts(server in "[a-z0-9\\-]{1,8}(_[a-z0-9]{1,4}){0,2}", tool in "[a-zA-Z0-9_]{1,12}") {
            let name = ToolName::qualified(&server, &tool).expect("a valid pair");
            prop_assert_eq!(name.server(), server.as_str());
            prop_assert_eq!(name.tool(), tool.as_str());
        }

        #[test]
        fn classify_never_panics_on_any_name(s in name_like()) {
            let snapshot = Snapshot::default().with_pending_server("x").with_unauthenticated_server("y");
            let _ = classify(&ToolName::parse(&s), &snapshot);
        }
    }
}
