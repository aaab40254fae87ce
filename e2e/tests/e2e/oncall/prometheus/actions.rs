//! On a live Prometheus each server gets its one action, and every dashboard query has data.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_live_prometheus_each_server_gets_its_one_action_and_every_dashboard_query_has_data() {
    // The committed mixin, with MCPToolAbsent's `for` at 10 s so that one alert fires within
    // the test and the "firing" queries of the dashboards have data, and the budget advisor
    // every second (3 minutes in the committed rules); every other `for` is real.
    let Some(rig) = Rig::new(
        "oncall-e2e",
        json!({ "for": { "MCPToolAbsent": "10s" }, "advisorInterval": "1s" }),
    ) else {
        return;
    };
    let (_http, port) = http_fixture(&rig.scratch, "e2e").await;
    // Budget 3 s; `slow` connects in about 5 s (p95 in the 4-6 s bucket: 5.9 s).
    let (serve, serve_addr) = start_serve(
        &rig.scratch,
        "e2e",
        json!({
            "ready": fixture_entry(&[]),
            "slow": fixture_entry(&[("FIXTURE_STARTUP_DELAY_MS", "5000")]),
            "stuck": fixture_entry(&[("FIXTURE_STARTUP_DELAY_MS", "600000")]),
            "authz": http_entry(port),
            "gone": absent_entry(),
        }),
        json!({ "budget": "3s", "poll": "500ms", "cooldown": "60s", "connect_timeout": "120s" }),
        WRONG_TOKEN,
    )
    .await;
    let agent = AgentService::start().await;
    let prometheus = Prometheus::start(
        &rig.prometheus,
        &rig.scratch,
        &[
            ("mcp-readiness", vec![serve_addr.clone()]),
            ("mcp-readiness-agent", vec![agent.addr.clone()]),
        ],
        &rig.rules,
    )
    .await;

    // 1. ALERTS: each server that needs someone gets exactly its action, pending (real `for`)
    //    or firing; the ready server and the connecting one under `serve` (no call waits on
    //    it) get none; `slow` under `serve` gets the budget advice (information, no action).
    let expected: BTreeMap<(String, String), (&str, &str)> = [
        (
            "mcp-readiness",
            "authz",
            "MCPServerUnauthenticated",
            "reauthorize",
        ),
        ("mcp-readiness", "gone", "MCPServerAbsent", "add_connection"),
        ("mcp-readiness", "slow", "MCPWaitBudgetBelowConnectTime", ""),
        (
            "mcp-readiness-agent",
            "files",
            "MCPToolAbsent",
            "add_connection",
        ),
        (
            "mcp-readiness-agent",
            "stuck",
            "MCPResolveBudgetExhausted",
            "extend_wait_budget",
        ),
        (
            "mcp-readiness-agent",
            "gone",
            "MCPServerAbsent",
            "add_connection",
        ),
    ]
    .into_iter()
    .map(|(job, server, alert, action)| ((job.into(), server.into()), (alert, action)))
    .collect();
    let alerts = eventually(
        "every expected alert",
        Duration::from_secs(90),
        async || {
            let alerts = alerts_by_server(&prometheus).await?;
            // Expected alerts present, and alone for their server: one alert name, one action
            // (a critical twin has the same name and action). A rule group writes its ALERTS
            // one rule after the other, so one query may fall between two of them.
            let missing: Vec<_> = expected
                .iter()
                .filter(|(key, (alert, _))| {
                    !alerts
                        .get(*key)
                        .is_some_and(|list| list.iter().all(|(name, _, _, _)| name == alert))
                })
                .map(|(key, _)| key)
                .collect();
            // `gone` under the agent is called and refused: its critical twin (written by a
            // later rule than the warning) must be there too before the snapshot is checked.
            let agent_gone = severities(&alerts, "mcp-readiness-agent", "gone");
            if !missing.is_empty() {
                Err(format!("missing {missing:?}; have {alerts:?}"))
            } else if !agent_gone.contains("critical") {
                Err(format!(
                    "no critical twin for the agent's `gone` yet; have {alerts:?}"
                ))
            } else {
                Ok(alerts)
            }
        },
    )
    .await;
    rig.progress("oncall e2e: every expected alert");
    for (key, (alert, action)) in &expected {
        let list = &alerts[key];
        let actions: BTreeSet<(&str, &str)> = list
            .iter()
            .map(|(name, action, _, _)| (name.as_str(), action.as_str()))
            .collect();
        assert_eq!(
            actions,
            BTreeSet::from([(*alert, *action)]),
            "{key:?}: one alert, one action"
        );
        for (_, _, state, _) in list {
            assert!(state == "pending" || state == "firing", "{key:?}: {state}");
        }
    }
    // Severity: `gone` under the agent is called and refused (a critical twin beside the
    // warning); under `serve` nobody calls it (warning only).
    assert_eq!(
        severities(&alerts, "mcp-readiness-agent", "gone"),
        BTreeSet::from(["critical".to_owned(), "warning".to_owned()])
    );
    assert_eq!(
        severities(&alerts, "mcp-readiness", "gone"),
        BTreeSet::from(["warning".to_owned()])
    );
    assert_eq!(
        severities(&alerts, "mcp-readiness", "slow"),
        BTreeSet::from(["info".to_owned()])
    );
    for server in ["ready", "stuck"] {
        assert!(
            !alerts.contains_key(&("mcp-readiness".to_owned(), server.to_owned())),
            "`{server}` raises nothing: {alerts:?}"
        );
    }
    let unexpected: Vec<_> = alerts
        .keys()
        .filter(|key| !expected.contains_key(*key))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}: {alerts:?}");

    // 2. The descriptions render on the real Prometheus: the slow server's quotes the p95,
    //    the budget, the per-server budget key and a suggestion.
    let rendered = eventually(
        "the slow server's description",
        Duration::from_secs(20),
        async || {
            let all = all_alerts(&prometheus).await?;
            all.iter()
                .find(|a| a["labels"]["server"] == "slow" && a["labels"]["job"] == "mcp-readiness")
                .map(|a| a["annotations"].clone())
                .ok_or_else(|| format!("{all:?}"))
        },
    )
    .await;
    let description = rendered["description"].as_str().unwrap_or_default();
    // `slow` starts after 5 s: p95 5.9 s in the 4-6 s bucket (7.9 s if the machine is slow to
    // spawn it); the suggestion is the p95 plus a quarter, rounded up.
    let figure = |before: &str, after: &str| -> f64 {
        description
            .split_once(before)
            .and_then(|(_, rest)| rest.split_once(after))
            .and_then(|(number, _)| number.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `{before}<number>{after}` in: {description}"))
    };
    let p95 = figure(
        "connects in ",
        " s at p95, longer than its wait budget of 3 s",
    );
    assert!((5.0..=10.0).contains(&p95), "{description}");
    let suggested = figure("`readiness.servers.slow.budget` of about ", " s");
    assert_eq!(suggested, (1.25 * p95).ceil(), "{description}");
    assert!(
        rendered["runbook_url"]
            .as_str()
            .is_some_and(|u| u.ends_with("runbook.md#mcpwaitbudgetbelowconnecttime")),
        "{rendered}"
    );
    // `stuck` never connected (its connect histogram exists at 0): no p95, no suggestion, and
    // its budget alert says so in words instead of quoting NaN.
    let stuck = all_alerts(&prometheus)
        .await
        .unwrap()
        .iter()
        .find(|a| a["labels"]["server"] == "stuck" && a["labels"]["job"] == "mcp-readiness-agent")
        .map(|a| {
            a["annotations"]["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .expect("the stuck server's budget alert");
    assert!(!stuck.contains("NaN"), "{stuck}");
    assert!(
        stuck.contains("no connect to it has succeeded yet")
            && stuck.contains("`readiness.servers.stuck.budget` above the time it takes to start"),
        "{stuck}"
    );
    let suggested = prometheus
        .query("server:mcp_readiness_wait_budget_seconds:suggested{server=\"stuck\"}")
        .await
        .unwrap();
    assert!(suggested.is_empty(), "{suggested:?}");

    // 3. Every dashboard query succeeds and returns numbers over the test's time range.
    let queries = dashboard_queries();
    let count = queries.len();
    eventually(
        "data for every dashboard query",
        Duration::from_secs(60),
        async || {
            let mut empty = Vec::new();
            for (place, expr) in &queries {
                let result = prometheus.query_range(expr, rig.started).await?;
                if !has_number(&result) {
                    empty.push(format!("{place}: {expr}"));
                }
            }
            if empty.is_empty() {
                Ok(())
            } else {
                Err(format!("no data yet:\n{}", empty.join("\n")))
            }
        },
    )
    .await;
    rig.progress(format_args!(
        "oncall e2e: {count} dashboard queries with data"
    ));
    agent.stop().await;
    drop(prometheus);
    drop(serve);
}

/// The severities of the alerts about `server` under `job` (none when it has no alert).
fn severities(alerts: &AlertsByServer, job: &str, server: &str) -> BTreeSet<String> {
    alerts
        .get(&(job.to_owned(), server.to_owned()))
        .into_iter()
        .flatten()
        .map(|(_, _, _, severity)| severity.clone())
        .collect()
}
