//! Every metric name in the dashboards and rules is served by a running exporter: `serve` and an
//! agent service calling tools through the `ReadinessLayer`.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_name_in_dashboards_and_rules_is_served_by_a_running_exporter() {
    let used = used_names();
    let recorded = recording_rule_names();
    let scratch = Scratch::new("oncall-names");
    let (_serve, serve_addr) = start_serve(
        &scratch,
        "names",
        json!({ "ready": fixture_entry(&[]), "gone": absent_entry() }),
        json!({}),
        RIGHT_TOKEN,
    )
    .await;
    let agent = AgentService::start().await;

    // Both exporters' real /metrics, until every used name shows up (families appear with
    // their first series; the agent's calls create the call families).
    let wanted: BTreeSet<String> = used
        .keys()
        .filter(|n| {
            !recorded.contains(*n)
                && !PROMETHEUS_NAMES.contains(&n.as_str())
                && !CONDITIONAL_NAMES.contains(&n.as_str())
        })
        .cloned()
        .collect();
    assert!(wanted.len() >= 14, "{wanted:?}");
    let served = eventually(
        "every used name to be served",
        Duration::from_secs(30),
        async || {
            let mut served = BTreeSet::new();
            for addr in [&serve_addr, &agent.addr] {
                let body = get(addr, "/metrics").await?.text();
                served.extend(exposition_names(&body));
            }
            let missing: Vec<_> = wanted.difference(&served).collect();
            if missing.is_empty() {
                Ok(served)
            } else {
                Err(format!("not served: {missing:?}"))
            }
        },
    )
    .await;
    agent.stop().await;

    for (name, place) in &used {
        assert!(
            served.contains(name)
                || recorded.contains(name)
                || PROMETHEUS_NAMES.contains(&name.as_str())
                || CONDITIONAL_NAMES.contains(&name.as_str()),
            "{place}: `{name}` is neither served by the exporter, nor recorded by alerts/rules.yml, nor conditional"
        );
    }
    // And a name the exporter does not serve is caught (the check can fail).
    assert!(!served.contains("mcp_readiness_servers_total"));
    // Every recording rule name starts from a served metric (level:metric:operations): the
    // metric itself, a counter without its `_total` (after an increase), or such a counter with
    // a qualifier naming the outcomes selected (`mcp_readiness_tool_calls_not_ready`).
    let counters: Vec<&str> = served
        .iter()
        .filter_map(|s| s.strip_suffix("_total"))
        .collect();
    for name in &recorded {
        let metric = name.split(':').nth(1).unwrap_or_default();
        assert!(
            served.contains(metric)
                || CONDITIONAL_NAMES.contains(&metric)
                || counters
                    .iter()
                    .any(|c| metric == *c || metric.starts_with(&format!("{c}_"))),
            "recording rule `{name}`: `{metric}` is not served"
        );
    }
}

/// Every name a dashboard or a rule selects, with where it is used.
fn used_names() -> BTreeMap<String, String> {
    let mut used = BTreeMap::new();
    let mut add = |place: String, expr: String| {
        for found in selectors(&place, &expr) {
            used.entry(name_of(&found.selector))
                .or_insert(place.clone());
        }
    };
    for (path, dashboard) in dashboards() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (place, expr) in dashboard_exprs(&name, &dashboard)
            .into_iter()
            .chain(variable_selectors(&name, &dashboard))
        {
            add(place, expr);
        }
    }
    for file in ["alerts/rules.yml", "alerts/alerts.yml"] {
        for (place, expr) in rule_exprs(file) {
            add(place, expr);
        }
    }
    used
}
