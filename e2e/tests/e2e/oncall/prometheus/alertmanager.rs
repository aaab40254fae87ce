//! The example Alertmanager configuration pages criticals, tickets the rest, shows information
//! on the dashboard only, inhibits the whole outage and sends one notification per alert and
//! workload (the servers listed in it).

use super::*;

#[tokio::test]
async fn the_example_alertmanager_pages_criticals_once_per_workload_tickets_the_rest_and_inhibits_the_whole_outage()
 {
    let Some(binary) = alertmanager() else {
        return;
    };
    let scratch = Scratch::new("oncall-alertmanager");
    let flags = |addr: &str| {
        vec![
            format!(
                "--config.file={}",
                repo().join("alerts/alertmanager.example.yml").display()
            ),
            format!("--storage.path={}", scratch.path("am").display()),
            format!("--web.listen-address={addr}"),
            "--cluster.listen-address=".to_owned(),
        ]
    };
    let limit = Duration::from_secs(30);
    let (_guard, addr) =
        start_daemon(&scratch, "alertmanager", &binary, &flags, "/-/ready", limit).await;

    // As Prometheus would send them: workload alerts (job, server), and the per-replica
    // exporter alerts of agent-1, whose scrape fails.
    let alert = |name: &str, server: &str, action: &str, severity: &str| {
        let mut labels = json!({ "alertname": name, "job": "mcp-readiness", "severity": severity });
        if server.contains(':') {
            labels["instance"] = json!(server);
        } else {
            labels["server"] = json!(server);
        }
        if !action.is_empty() {
            labels["action"] = json!(action);
        }
        json!({ "labels": labels, "annotations": { "summary": name } })
    };
    // (alertname, server or instance, action, severity, expected state, expected receiver)
    let cases = [
        (
            "MCPReadinessExporterDown",
            "agent-1:9464",
            "",
            "warning",
            "active",
            "platform-ticket",
        ),
        (
            "MCPReadinessConfigReloadFailed",
            "agent-1:9464",
            "",
            "warning",
            "suppressed",
            "platform-ticket",
        ),
        (
            "MCPReadinessConfigReloadFailed",
            "agent-2:9464",
            "",
            "warning",
            "active",
            "platform-ticket",
        ),
        (
            "MCPServerUnauthenticated",
            "github",
            "reauthorize",
            "critical",
            "active",
            "identity-pager",
        ),
        (
            "MCPServerUnauthenticated",
            "github",
            "reauthorize",
            "warning",
            "suppressed",
            "identity-ticket",
        ),
        // One identity-provider incident: three servers of the workload unauthenticated.
        (
            "MCPServerUnauthenticated",
            "gitlab",
            "reauthorize",
            "critical",
            "active",
            "identity-pager",
        ),
        (
            "MCPServerUnauthenticated",
            "jira",
            "reauthorize",
            "critical",
            "active",
            "identity-pager",
        ),
        (
            "MCPCredentialExpiringSoon",
            "api",
            "reauthorize",
            "critical",
            "active",
            "identity-pager",
        ),
        (
            "MCPCredentialExpiringSoon",
            "db",
            "reauthorize",
            "warning",
            "active",
            "identity-ticket",
        ),
        (
            "MCPServerAbsent",
            "gone",
            "add_connection",
            "warning",
            "active",
            "platform-ticket",
        ),
        (
            "MCPToolCallsFailing",
            "gone",
            "",
            "warning",
            "suppressed",
            "platform-ticket",
        ),
        (
            "MCPToolAbsent",
            "files",
            "add_connection",
            "warning",
            "active",
            "platform-ticket",
        ),
        (
            "MCPResolveBudgetExhausted",
            "slow",
            "extend_wait_budget",
            "warning",
            "active",
            "agent-tuning-ticket",
        ),
        (
            "MCPWaitBudgetBelowConnectTime",
            "slow",
            "",
            "info",
            "suppressed",
            "dashboard-only",
        ),
    ];
    let sent: Vec<Value> = cases
        .iter()
        .map(|(name, server, action, severity, _, _)| alert(name, server, action, severity))
        .collect();
    let answer = request(
        &addr,
        "POST",
        "/api/v2/alerts",
        &[("Content-Type", "application/json")],
        Value::from(sent).to_string().as_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(answer.status, 200, "{}\n{}", answer.head, answer.text());

    // (alertname, server or instance, severity) -> (state, receivers); until every inhibition
    // is in effect.
    let want_suppressed = cases.iter().filter(|c| c.4 == "suppressed").count();
    let seen = eventually("the inhibitions", Duration::from_secs(20), async || {
        let body = get(&addr, "/api/v2/alerts").await?.text();
        let alerts: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let seen: BTreeMap<(String, String, String), (String, Vec<String>)> = alerts
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                let l = &a["labels"];
                let place = if l["server"].is_string() {
                    text(&l["server"])
                } else {
                    text(&l["instance"])
                };
                let receivers = a["receivers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| text(&r["name"]))
                    .collect();
                (
                    (text(&l["alertname"]), place, text(&l["severity"])),
                    (text(&a["status"]["state"]), receivers),
                )
            })
            .collect();
        let suppressed = seen
            .values()
            .filter(|(state, _)| state == "suppressed")
            .count();
        if seen.len() == cases.len() && suppressed == want_suppressed {
            Ok(seen)
        } else {
            Err(format!("{seen:?}"))
        }
    })
    .await;
    for (name, place, _, severity, state, receiver) in cases {
        let got = &seen[&(name.to_owned(), place.to_owned(), severity.to_owned())];
        assert_eq!(
            (got.0.as_str(), got.1.clone()),
            (state, vec![receiver.to_owned()]),
            "{name} {severity} on {place}"
        );
    }

    // One page for the three unauthenticated servers of the workload (grouped by alert and
    // workload), listing them; one ticket for a configuration refused on several replicas of the
    // workload, listing them. Alertmanager's dispatcher forms its groups after the alerts API
    // lists the alerts (later under load): read the groups until both are formed.
    let want_pages = vec![vec![
        "github".to_owned(),
        "gitlab".to_owned(),
        "jira".to_owned(),
    ]];
    let (body, pages, tickets) = eventually("the groups", Duration::from_secs(20), async || {
        let body = get(&addr, "/api/v2/alerts/groups").await?.text();
        let groups: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        let (pages, tickets) = (identity_pages(&groups), reload_tickets(&groups));
        if pages == want_pages && tickets == vec![2] {
            Ok((body, pages, tickets))
        } else {
            Err(body)
        }
    })
    .await;
    assert_eq!(pages, want_pages, "{body}");
    assert_eq!(tickets, vec![2], "{body}");
}

/// The servers of each `MCPServerUnauthenticated` group paged to `identity-pager`, sorted.
fn identity_pages(groups: &Value) -> Vec<Vec<String>> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| {
            g["receiver"]["name"] == "identity-pager"
                && g["labels"]["alertname"] == "MCPServerUnauthenticated"
        })
        .map(|g| {
            let mut servers: Vec<String> = g["alerts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    a["labels"]["server"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect();
            servers.sort();
            servers
        })
        .collect()
}

/// How many alerts each `MCPReadinessConfigReloadFailed` group holds.
fn reload_tickets(groups: &Value) -> Vec<usize> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| g["labels"]["alertname"] == "MCPReadinessConfigReloadFailed")
        .map(|g| g["alerts"].as_array().map_or(0, Vec::len))
        .collect()
}
