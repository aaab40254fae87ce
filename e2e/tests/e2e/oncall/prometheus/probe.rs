//! The multi-target exporter pattern end to end: a real Prometheus that knows only a list of MCP
//! URLs (a `file_sd_configs` file: one ready behind a module's token, one answering 401, one
//! refusing connections) probes them through `serve`'s `/probe` with the documented relabeling,
//! and the shipped rules raise exactly `MCPServerUnauthenticated` and `MCPServerAbsent` for the
//! right ones; `serve` itself, scraped too, answers probes only (no `mcpServers`) and raises
//! nothing (`mcp_readiness_probe_modules` tells it apart from a `serve` with no server).

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_probing_three_mcp_urls_from_a_file_raises_exactly_unauthenticated_and_absent() {
    // The committed mixin with the two alerts' `for` at 10 s, so they fire within the test.
    let Some(rig) = Rig::new(
        "probe-e2e",
        json!({ "for": {
            "MCPServerUnauthenticated": "10s",
            "MCPServerAbsent": "10s",
            "MCPReadinessNoServers": "5s",
        } }),
    ) else {
        return;
    };
    // `ready` answers with the module's token; `locked` is the same kind of server probed
    // without one (401); `gone` is a port nothing listens on.
    let (_ready_server, ready_port) = http_fixture(&rig.scratch, "probe-ready").await;
    let (_locked_server, locked_port) = http_fixture(&rig.scratch, "probe-locked").await;
    let gone_port = free_port();
    let url = |port: u16| format!("http://127.0.0.1:{port}/mcp");
    let (_serve, serve_addr) = start_serve(
        &rig.scratch,
        "probe",
        json!({}),
        json!({ "probe": {
            "targets": ["http://127.0.0.1:*/mcp"],
            "modules": { "team": {
                "targets": [url(ready_port)],
                "headers": { "Authorization": "Bearer ${MCP_ONCALL_TOKEN}" }
            } }
        } }),
        RIGHT_TOKEN,
    )
    .await;

    // What service discovery gives: the URLs, a `server` label each, and the module to use.
    let targets = rig.scratch.path("mcp-targets.json");
    std::fs::write(
        &targets,
        json!([
            { "targets": [url(ready_port)], "labels": { "server": "ready", "__param_module": "team" } },
            { "targets": [url(locked_port)], "labels": { "server": "locked" } },
            { "targets": [url(gone_port)], "labels": { "server": "gone" } },
        ])
        .to_string(),
    )
    .unwrap();
    // docs/probe.md's scrape config, with this test's addresses, and `serve`'s own /metrics.
    let scrape_configs = format!(
        "  - job_name: mcp-readiness\n\
         \x20   static_configs:\n\
         \x20     - targets: ['{serve_addr}']\n\
         \x20 - job_name: mcp-readiness-probe\n\
         \x20   metrics_path: /probe\n\
         \x20   scrape_interval: 2s\n\
         \x20   scrape_timeout: 2s\n\
         \x20   file_sd_configs:\n\
         \x20     - files: ['{}']\n\
         \x20       refresh_interval: 1s\n\
         \x20   relabel_configs:\n\
         \x20     - source_labels: [__address__]\n\
         \x20       target_label: __param_target\n\
         \x20     - source_labels: [__param_target]\n\
         \x20       target_label: instance\n\
         \x20     - source_labels: [server]\n\
         \x20       target_label: __param_server\n\
         \x20     - action: labeldrop\n\
         \x20       regex: server\n\
         \x20     - target_label: __address__\n\
         \x20       replacement: '{serve_addr}'\n",
        targets.display()
    );
    let prometheus =
        Prometheus::start_with(&rig.prometheus, &rig.scratch, &scrape_configs, &rig.rules).await;

    // Every target is scraped (`up` 1: a failed probe is an answer, not a failed scrape), and
    // each reads its state with the supervised series' names and labels.
    let expected_state = [
        ("ready", "ready"),
        ("locked", "unauthenticated"),
        ("gone", "absent"),
    ];
    eventually(
        "the three probe targets' states",
        Duration::from_secs(60),
        async || {
            let up = prometheus
                .query(r#"up{job="mcp-readiness-probe"} == 1"#)
                .await?;
            if up.len() != 3 {
                return Err(format!("up: {up:?}\n{}", prometheus.log()));
            }
            let states = prometheus
                .query(r#"mcp_readiness_server_state{job="mcp-readiness-probe"} == 1"#)
                .await?;
            let found: BTreeSet<(String, String)> = states
                .iter()
                .map(|s| (label(s, "server").to_owned(), label(s, "state").to_owned()))
                .collect();
            let wanted: BTreeSet<(String, String)> = expected_state
                .iter()
                .map(|(s, st)| ((*s).to_owned(), (*st).to_owned()))
                .collect();
            if found == wanted {
                Ok(())
            } else {
                Err(format!("{found:?}"))
            }
        },
    )
    .await;
    let success = prometheus
        .query(r#"mcp_readiness_probe_success{job="mcp-readiness-probe"}"#)
        .await
        .unwrap();
    let by_instance: BTreeMap<String, String> = success
        .iter()
        .map(|s| {
            (
                label(s, "instance").to_owned(),
                s["value"][1].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        by_instance,
        BTreeMap::from([
            (url(ready_port), "1".to_owned()),
            (url(locked_port), "0".to_owned()),
            (url(gone_port), "0".to_owned()),
        ]),
    );
    let info = prometheus
        .query(r#"mcp_readiness_server_info{job="mcp-readiness-probe"}"#)
        .await
        .unwrap();
    assert_eq!(info.len(), 1, "{info:?}");
    assert_eq!(label(&info[0], "server"), "ready");

    // The shipped rules: exactly one alert per server that needs someone, firing, with its action.
    let expected: BTreeMap<(String, String), (&str, &str)> = [
        ("locked", "MCPServerUnauthenticated", "reauthorize"),
        ("gone", "MCPServerAbsent", "add_connection"),
    ]
    .into_iter()
    .map(|(server, alert, action)| {
        (
            ("mcp-readiness-probe".to_owned(), server.to_owned()),
            (alert, action),
        )
    })
    .collect();
    let alerts = eventually("both alerts firing", Duration::from_secs(90), async || {
        let alerts = alerts_by_server(&prometheus).await?;
        let firing = expected.iter().all(|(key, (alert, _))| {
            alerts.get(key).is_some_and(|list| {
                !list.is_empty()
                    && list
                        .iter()
                        .all(|(name, _, state, _)| name == alert && state == "firing")
            })
        });
        if firing {
            Ok(alerts)
        } else {
            Err(format!("{alerts:?}"))
        }
    })
    .await;
    rig.progress("probe e2e: both alerts firing");
    assert_eq!(
        alerts.keys().cloned().collect::<BTreeSet<_>>(),
        expected.keys().cloned().collect::<BTreeSet<_>>(),
        "no other MCP alert (none for `ready`, none for the probe-only `serve`): {alerts:?}"
    );
    // The probe-only `serve` was scraped all along and says it answers /probe with two modules
    // (the default and `team`), so MCPReadinessNoServers (its `for` 5 s) never even went pending.
    let modules = prometheus
        .query(r#"mcp_readiness_probe_modules{job="mcp-readiness"}"#)
        .await
        .unwrap();
    assert_eq!(modules.len(), 1, "{modules:?}");
    assert_eq!(modules[0]["value"][1].as_str(), Some("2"), "{modules:?}");
    let build_info = prometheus
        .query(r#"count_over_time(mcp_readiness_build_info{job="mcp-readiness"}[5m]) > 5"#)
        .await
        .unwrap();
    assert_eq!(
        build_info.len(),
        1,
        "serve scraped for more than 5 s: {build_info:?}"
    );
    let no_servers = prometheus
        .query(r#"count_over_time(ALERTS{alertname="MCPReadinessNoServers"}[5m])"#)
        .await
        .unwrap();
    assert!(no_servers.is_empty(), "{no_servers:?}");
    for (key, (alert, action)) in &expected {
        let actions: BTreeSet<(&str, &str)> = alerts[key]
            .iter()
            .map(|(name, action, _, _)| (name.as_str(), action.as_str()))
            .collect();
        assert_eq!(actions, BTreeSet::from([(*alert, *action)]), "{key:?}");
    }
    // Each answer is what promtool accepts without a word.
    for query in [
        format!(
            "target={}&module=team&server=ready",
            mcp_readiness_fixtures::http::url_encode(&url(ready_port))
        ),
        format!(
            "target={}&server=locked",
            mcp_readiness_fixtures::http::url_encode(&url(locked_port))
        ),
        format!(
            "target={}&server=gone",
            mcp_readiness_fixtures::http::url_encode(&url(gone_port))
        ),
    ] {
        let answer = get(&serve_addr, &format!("/probe?{query}")).await.unwrap();
        assert_eq!(answer.status, 200, "{query}: {}", answer.text());
        if let Some((ok, said)) =
            mcp_readiness_fixtures::tools::promtool_check_metrics(&answer.text())
        {
            assert!(ok && said.is_empty(), "{query}: promtool said: {said}");
        }
    }
    // A target that is not on the allow-list is refused by the same `serve`, without a connection.
    let refused = get(&serve_addr, "/probe?target=http%3A%2F%2F10.0.0.1%2Fmcp")
        .await
        .unwrap();
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(
        refused.text().contains("not on the allow-list"),
        "{}",
        refused.text()
    );
}
