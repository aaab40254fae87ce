//! The capability cache: ready and not-ready entries, their lifetimes, and invented names.

use super::*;

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
    assert_eq!(waited(&verdict), (State::Ready, Duration::ZERO));
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
    assert_eq!(waited(&verdict), (State::Connecting, Duration::ZERO));
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
    assert_eq!(waited(&verdict), (State::Ready, MS(5000)));
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
