//! An agent-service fleet that calls tools while its replicas are replaced keeps one page per
//! cause, and none for the server that is ready on every live replica.

use super::*;

/// `(alertname, server, severity) -> (state, activeAt)` of the MCP alerts that name a server.
async fn server_alerts(
    prometheus: &Prometheus,
) -> Result<BTreeMap<(String, String, String), (String, String)>, String> {
    Ok(all_alerts(prometheus)
        .await?
        .iter()
        .filter(|a| a["labels"]["server"].is_string())
        .map(|a| {
            let l = &a["labels"];
            (
                (
                    text(&l["alertname"]),
                    text(&l["server"]),
                    text(&l["severity"]),
                ),
                (text(&a["state"]), text(&a["activeAt"])),
            )
        })
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_service_fleet_calling_tools_while_its_replicas_are_replaced_keeps_one_page_per_cause_and_none_for_the_ready_server()
 {
    // The committed mixin with short `for`s, a 10 s blip window and a 15 s state window (3
    // minutes each as committed), so a replacement and its aftermath fit in a minute.
    let Some(rig) = Rig::new(
        "oncall-agents",
        json!({
            "stateBlipWindow": "10s",
            "stateStaleWindow": "15s",
            "for": {
                "MCPServerAbsent": "5s",
                "MCPToolAbsent": "5s",
                "MCPResolveBudgetExhausted": "5s",
            },
        }),
    ) else {
        return;
    };
    // Two replicas of an agent service, each calling every 200 ms: `files` (ready; one of its
    // tools does not exist, so those calls are refused), `stuck` (connecting: every call runs
    // out of budget) and `gone` (absent: every call refused). The job is not called
    // mcp-readiness*: the exporter alerts follow mcp_readiness_build_info.
    let job = "agents";
    let a = AgentService::start().await;
    let b = AgentService::start().await;
    let prometheus = Prometheus::start(
        &rig.prometheus,
        &rig.scratch,
        &[(job, vec![a.addr.clone(), b.addr.clone()])],
        &rig.rules,
    )
    .await;

    let key = |alert: &str, server: &str, severity: &str| {
        (alert.to_owned(), server.to_owned(), severity.to_owned())
    };
    let pages = [
        key("MCPServerAbsent", "gone", "critical"),
        key("MCPServerAbsent", "gone", "warning"),
        key("MCPToolAbsent", "files", "warning"),
        key("MCPResolveBudgetExhausted", "stuck", "warning"),
    ];
    // 1. One page per cause, firing.
    let first = eventually("one page per cause", Duration::from_secs(90), async || {
        let now = server_alerts(&prometheus).await?;
        all_firing(&now, pages.iter().cloned())
    })
    .await;
    rig.progress(format_args!("oncall agents: one page per cause: {first:?}"));

    // Every observation from now on: each page firing with the same activeAt; no page for
    // `files` or `stuck` other than their own (the refused calls of a replica that is gone
    // are no evidence that `files` is absent); no exporter alert at all (the replaced
    // replicas left discovery; the job is seen although it is not called mcp-readiness*).
    let mut observations = 0;
    let mut check = async |prometheus: &Prometheus| -> Result<(), String> {
        let now = server_alerts(prometheus).await?;
        for (k, active_at) in &first {
            assert_eq!(
                now.get(k),
                Some(&("firing".to_owned(), active_at.clone())),
                "{k:?} resolved or re-fired while replicas were replaced: {now:?}"
            );
        }
        let extra: Vec<_> = now
            .keys()
            .filter(|k| !pages.contains(k) && k.0 != "MCPWaitBudgetBelowConnectTime")
            .collect();
        assert!(extra.is_empty(), "unexpected alerts: {extra:?} in {now:?}");
        let exporter = prometheus
            .query(r#"ALERTS{alertname=~"MCPReadiness.*"}"#)
            .await?;
        assert!(exporter.is_empty(), "exporter alerts: {exporter:?}");
        observations += 1;
        Ok(())
    };
    check(&prometheus).await.unwrap();

    // 2. Replace a by c, then b by e, as a rollout does: the new replica first, then the old
    // one out of discovery (its endpoint removed), then stopped. Each time, wait until the per-replica verdicts name the
    // live replicas only, then 25 s more (past the state window and the `for`, when the gone
    // replica's refused calls would have paged).
    let mut live = vec![a, b];
    for (old, new) in [("a", "c"), ("b", "e")] {
        let started = AgentService::start().await;
        let gone = live.remove(0);
        prometheus.set_targets(job, &[live[0].addr.clone(), started.addr.clone()]);
        out_of_discovery(&prometheus, &mut check, &gone.addr).await;
        gone.stop().await;
        wait_for_replicas(&prometheus, &mut check, &[&live[0].addr, &started.addr]).await;
        live.push(started);
        rig.progress(format_args!("oncall agents: {old} replaced by {new}"));
    }
    rig.progress(format_args!(
        "oncall agents: one page per cause through a, b -> c, e ({observations} observations)"
    ));
    for agent in live {
        agent.stop().await;
    }
    drop(prometheus);
}

/// Waits until Prometheus no longer scrapes `addr` (no `up` series for it), checking every
/// 500 ms.
async fn out_of_discovery(
    prometheus: &Prometheus,
    check: &mut impl AsyncFnMut(&Prometheus) -> Result<(), String>,
    addr: &str,
) {
    eventually(
        "the replica out of discovery",
        Duration::from_secs(30),
        async || {
            check(prometheus).await?;
            let up = prometheus
                .query(&format!(r#"up{{instance="{addr}"}}"#))
                .await?;
            if up.is_empty() {
                Ok(())
            } else {
                Err(format!("{up:?}"))
            }
        },
    )
    .await;
}

/// Waits until the absent verdict of `gone` names exactly `live`, checking every 500 ms, then
/// goes on checking for 25 s.
async fn wait_for_replicas(
    prometheus: &Prometheus,
    check: &mut impl AsyncFnMut(&Prometheus) -> Result<(), String>,
    live: &[&String],
) {
    let want: BTreeSet<String> = live.iter().map(|s| (*s).clone()).collect();
    eventually(
        "the live replicas only",
        Duration::from_secs(60),
        async || {
            check(prometheus).await?;
            let now: BTreeSet<String> = prometheus
                .query(r#"instance_server:mcp_readiness_server_state:absent{server="gone"}"#)
                .await?
                .iter()
                .map(|s| label(s, "instance").to_owned())
                .collect();
            if now == want {
                Ok(())
            } else {
                Err(format!("{now:?}"))
            }
        },
    )
    .await;
    for _ in 0..50 {
        check(prometheus).await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
