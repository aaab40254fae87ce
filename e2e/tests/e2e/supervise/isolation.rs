//! One server's trouble stays its own: per-call timeouts, fan-out with a dead server; and what the
//! hub hears by itself: `tools/list_changed`, the call's `_meta`, health pings.

use super::*;

#[tokio::test]
async fn a_hanging_server_hits_the_per_call_timeout_and_other_servers_are_unaffected() {
    let scratch = Scratch::new("hang");
    let opts = options().call_timeout(Duration::from_millis(1500));
    let hub = Hub::new(
        vec![stdio("slow", &scratch, &[]), stdio("fast", &scratch, &[])],
        opts,
    )
    .unwrap();
    hub.call(ToolCall::new("mcp__slow__pid")).await.unwrap();
    hub.call(ToolCall::new("mcp__fast__pid")).await.unwrap();

    let started = Instant::now();
    let hang = hub.call(ToolCall::new("mcp__slow__hang"));
    let fast = async {
        let result = hub
            .call(ToolCall::new("mcp__fast__echo").with_arguments(json!({"text": "ok"})))
            .await;
        (result, started.elapsed())
    };
    let (hang, (fast, fast_took)) = tokio::join!(hang, fast);
    let hang = hang.unwrap_err();
    assert_eq!(hang.kind(), CallErrorKind::Timeout);
    assert!(hang.to_string().contains("`slow`"), "{hang}");
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert_eq!(text(&fast.unwrap()), "ok");
    assert!(
        fast_took < Duration::from_millis(1000),
        "the fast server waited: {fast_took:?}"
    );
    assert_eq!(
        hub.state("slow"),
        Some(State::Ready),
        "a slow answer is not a dead server"
    );

    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn fan_out_over_four_servers_with_one_dead_returns_three_results_and_one_degraded_entry() {
    let scratch = Scratch::new("fanout");
    let mut specs: Vec<ServerSpec> = ["a", "b", "c"]
        .iter()
        .map(|n| stdio(n, &scratch, &[]))
        .collect();
    specs.push(command("dead", "/nonexistent/mcp-server-dead", Vec::new()));
    let hub = Hub::new(specs, options()).unwrap();
    hub.connect_all();
    eventually("three servers ready", WAIT, async || {
        hub.servers()
            .iter()
            .filter(|s| s.state == State::Ready)
            .count()
            == 3
    })
    .await;

    let sleep = |server: &str, ms: u64| {
        ToolCall::new(format!("mcp__{server}__sleep")).with_arguments(json!({"ms": ms}))
    };
    let started = Instant::now();
    let fan = hub
        .fan_out(vec![
            sleep("a", 300),
            sleep("b", 900),
            sleep("c", 600),
            sleep("dead", 1),
        ])
        .await;
    let took = started.elapsed();
    assert_eq!(fan.ok().count(), 3);
    assert_eq!(fan.degraded.len(), 1);
    assert_eq!(&*fan.degraded[0].server, "dead");
    assert_eq!(fan.degraded[0].state, State::Absent);
    // Concurrent: the slowest healthy server (900 ms), far from the sum (1800 ms).
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(
        took < Duration::from_millis(1700),
        "the calls did not run side by side: {took:?}"
    );

    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn a_tools_list_changed_notification_refreshes_the_tool_list() {
    let scratch = Scratch::new("list-changed");
    let hub = Hub::new(vec![stdio("fx", &scratch, &[])], options()).unwrap();
    let seen = hub.changes().unwrap().generation();
    hub.call(ToolCall::new("mcp__fx__add_tool")).await.unwrap();
    let mut found = false;
    for _ in 0..200 {
        if hub.snapshot().await.ready_tools.contains("mcp__fx__extra") {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(found, "the new tool appears without reconnecting");
    assert!(hub.changes().unwrap().generation() > seen);
    assert_eq!(hub.generation("fx"), Some(1));
    hub.shutdown().await;
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn the_call_meta_reaches_the_server_as_the_request_meta() {
    let scratch = Scratch::new("meta");
    let hub = Hub::new(vec![stdio("fx", &scratch, &[])], options()).unwrap();
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut call = ToolCall::new("mcp__fx__echo_meta");
    call.meta = json!({"traceparent": traceparent}).as_object().cloned();
    let echoed: Value = serde_json::from_str(&text(&hub.call(call).await.unwrap())).unwrap();
    assert_eq!(echoed["traceparent"], traceparent);
    hub.shutdown().await;
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn a_health_ping_finds_a_hung_server_before_any_call() {
    let scratch = Scratch::new("health");
    let opts = options()
        .health_interval(Some(Duration::from_millis(300)))
        // An unanswered ping is followed by tools/list within the same timeout: 2 s in all.
        .ping_timeout(Duration::from_secs(1))
        .call_timeout(Duration::from_millis(500))
        .reconnect_on_drop(false);
    let hub = Hub::new(vec![stdio("fx", &scratch, &[])], opts).unwrap();
    let pid = child_pid(&hub, "fx").await;
    // Freeze the child: its pipe stays open, only a ping can tell.
    signal(pid, "-STOP");
    eventually("the health ping to drop the connection", WAIT, async || {
        hub.state("fx") == Some(State::Connecting)
    })
    .await;
    assert!(
        hub.servers()[0]
            .reason
            .clone()
            .unwrap()
            .contains("health ping")
    );
    let pids = scratch.pids();
    assert_all_gone(&pids).await; // the frozen child was killed with its group
    hub.shutdown().await;
}
