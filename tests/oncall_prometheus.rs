//! alerts/ and dashboards/ on a live Prometheus (Debian's package, started by the test on a free
//! loopback port, scraping every second and evaluating the real rule files every second):
//! `serve` over fixture servers in every state plus one that connects slower than its budget, and
//! an agent service calling tools through the `ReadinessLayer`. The alerts' real `for` values are
//! kept, so they are checked as pending (`ALERTS{alertstate="pending"}`) or firing; the firing
//! side and the `for` edges are covered by `promtool test rules` on alerts/tests/.
#![cfg(target_os = "linux")]

mod common;

use common::Scratch;
use common::oncall::{
    AgentService, KillOnDrop, Prometheus, RIGHT_TOKEN, WRONG_TOKEN, absent_entry, fixture_entry,
    free_port, http_entry, http_fixture, http_get, http_send_json, poll_until, repo, start_serve,
    system_tool, wait_ready,
};

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

fn rule_files() -> Vec<std::path::PathBuf> {
    vec![
        repo().join("alerts/rules.yml"),
        repo().join("alerts/alerts.yml"),
    ]
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn label<'a>(series: &'a Value, name: &str) -> &'a str {
    series["metric"][name].as_str().unwrap_or_default()
}

/// `(job, server) -> [(alertname, action, alertstate)]` of the MCP readiness alerts now.
async fn alerts_by_server(
    prometheus: &Prometheus,
) -> Result<BTreeMap<(String, String), Vec<(String, String, String)>>, String> {
    let mut by_server: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for series in prometheus.query(r#"ALERTS{alertname=~"MCP.*"}"#).await? {
        by_server
            .entry((
                label(&series, "job").into(),
                label(&series, "server").into(),
            ))
            .or_default()
            .push((
                label(&series, "alertname").into(),
                label(&series, "action").into(),
                label(&series, "alertstate").into(),
            ));
    }
    Ok(by_server)
}

/// Every dashboard target's expression with Grafana's variables filled in as "All" and
/// `$__rate_interval` as Grafana computes it for a 1 s scrape interval (4 x scrape interval).
fn dashboard_queries() -> Vec<(String, String)> {
    let mut queries = Vec::new();
    for file in ["mcp-readiness-fleet.json", "mcp-readiness-server.json"] {
        let text = std::fs::read_to_string(repo().join("dashboards").join(file)).unwrap();
        let dashboard: Value = serde_json::from_str(&text).unwrap();
        let mut panels: Vec<&Value> = Vec::new();
        for panel in dashboard["panels"].as_array().unwrap() {
            panels.push(panel);
            panels.extend(panel["panels"].as_array().into_iter().flatten());
        }
        for panel in panels {
            for target in panel["targets"].as_array().into_iter().flatten() {
                let expr = target["expr"]
                    .as_str()
                    .unwrap()
                    .replace("$__rate_interval", "4s")
                    .replace("$job", ".+")
                    .replace("$instance", ".+")
                    .replace("$server", ".+");
                queries.push((
                    format!("{file}: `{}` {}", panel["title"], target["refId"]),
                    expr,
                ));
            }
        }
    }
    assert!(queries.len() > 25, "{} queries", queries.len());
    queries
}

/// Whether a range-query result holds at least one number (not NaN).
fn has_number(result: &[Value]) -> bool {
    result.iter().any(|series| {
        series["values"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|point| {
                point[1]
                    .as_str()
                    .and_then(|v| v.parse::<f64>().ok())
                    .is_some_and(|v| !v.is_nan())
            })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_live_prometheus_each_server_gets_its_one_action_and_every_dashboard_query_has_data() {
    let Some(binary) = system_tool("prometheus", "prometheus") else {
        return;
    };
    let started = now();
    let scratch = Scratch::new("oncall-e2e");
    let (_http, port) = http_fixture(&scratch, "e2e").await;
    // Budget 3 s; `slow` connects in about 5 s (p95 in the 4-6 s bucket: 5.9 s).
    let (serve, serve_addr) = start_serve(
        &scratch,
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
        &binary,
        &scratch,
        &[
            ("mcp-readiness", vec![serve_addr.clone()]),
            ("agent", vec![agent.addr.clone()]),
        ],
        &rule_files(),
    )
    .await;

    // 1. ALERTS: each server that needs someone gets exactly its action, pending (real `for`)
    //    or firing; the ready server and the connecting one (no signal yet) get none.
    let expected: BTreeMap<(String, String), (&str, &str)> = [
        (
            "mcp-readiness",
            "authz",
            "MCPServerUnauthenticated",
            "reauthorize",
        ),
        ("mcp-readiness", "gone", "MCPServerAbsent", "add_connection"),
        (
            "mcp-readiness",
            "slow",
            "MCPResolveBudgetExhausted",
            "extend_wait_budget",
        ),
        ("agent", "files", "MCPToolAbsent", "add_connection"),
        (
            "agent",
            "stuck",
            "MCPResolveBudgetExhausted",
            "extend_wait_budget",
        ),
        ("agent", "gone", "MCPServerAbsent", "add_connection"),
    ]
    .into_iter()
    .map(|(job, server, alert, action)| ((job.into(), server.into()), (alert, action)))
    .collect();
    let alerts = poll_until(
        "every expected alert",
        Duration::from_secs(90),
        async || {
            let alerts = alerts_by_server(&prometheus).await?;
            // Expected alerts present, and each alone for its server (a rule group writes its
            // ALERTS one rule after the other, so one query may fall between two of them).
            let missing: Vec<_> = expected
                .iter()
                .filter(|(key, (alert, _))| {
                    !alerts.get(*key).is_some_and(|list| {
                        list.len() == 1 && list.iter().any(|(name, _, _)| name == alert)
                    })
                })
                .map(|(key, _)| key)
                .collect();
            if missing.is_empty() {
                Ok(alerts)
            } else {
                Err(format!("missing {missing:?}; have {alerts:?}"))
            }
        },
    )
    .await;
    eprintln!(
        "oncall e2e: every expected alert after {:.1} s",
        now() - started
    );
    for (key, (alert, action)) in &expected {
        let list = &alerts[key];
        assert_eq!(list.len(), 1, "{key:?}: one alert, one action: {list:?}");
        let (name, got_action, state) = &list[0];
        assert_eq!(
            (name.as_str(), got_action.as_str()),
            (*alert, *action),
            "{key:?}"
        );
        assert!(state == "pending" || state == "firing", "{key:?}: {state}");
    }
    for server in ["ready", "stuck"] {
        assert!(
            !alerts.contains_key(&("mcp-readiness".to_owned(), server.to_owned())),
            "`{server}` raises nothing: {alerts:?}"
        );
    }
    // No alert carries an action that is not one of the three, and none but those expected.
    let unexpected: Vec<_> = alerts
        .keys()
        .filter(|key| !expected.contains_key(*key))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}: {alerts:?}");

    // 2. The descriptions render on the real Prometheus: the slow server's quotes the p95,
    //    the budget and a suggestion.
    let rendered = poll_until(
        "the slow server's description",
        Duration::from_secs(20),
        async || {
            let data = prometheus.api("/api/v1/alerts").await?;
            data["alerts"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["labels"]["server"] == "slow" && a["labels"]["job"] == "mcp-readiness")
                .map(|a| a["annotations"].clone())
                .ok_or_else(|| format!("{data}"))
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
    let p95 = figure("connects take ", " s at p95; the budget is 3 s.");
    assert!((5.0..=10.0).contains(&p95), "{description}");
    let suggested = figure("to about ", " s, or move its steps later");
    assert_eq!(suggested, (1.25 * p95).ceil(), "{description}");
    assert!(description.contains("`slow`"), "{description}");
    assert!(
        rendered["runbook_url"]
            .as_str()
            .is_some_and(|u| u.ends_with("runbook.md#mcpresolvebudgetexhausted")),
        "{rendered}"
    );

    // 3. Every dashboard query succeeds and returns numbers over the test's time range.
    let queries = dashboard_queries();
    let count = queries.len();
    poll_until(
        "data for every dashboard query",
        Duration::from_secs(60),
        async || {
            let mut empty = Vec::new();
            for (place, expr) in &queries {
                let result = prometheus.query_range(expr, started).await?;
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
    eprintln!(
        "oncall e2e: {count} dashboard queries with data after {:.1} s",
        now() - started
    );
    agent.stop().await;
    drop(prometheus);
    drop(serve);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_serve_processes_on_one_prometheus_roll_up_per_server_and_a_lost_one_raises_exporter_down()
 {
    let Some(binary) = system_tool("prometheus", "prometheus") else {
        return;
    };
    let started = now();
    let scratch = Scratch::new("oncall-fleet");
    let (_http, port) = http_fixture(&scratch, "fleet").await;
    // Three agent replicas: `github` is refused on the first only; `gone` is configured on the
    // first only; `files` is ready everywhere.
    let mut replicas = Vec::new();
    for (tag, token, with_gone) in [
        ("a", WRONG_TOKEN, true),
        ("b", RIGHT_TOKEN, false),
        ("c", RIGHT_TOKEN, false),
    ] {
        let mut servers = json!({ "files": fixture_entry(&[]), "github": http_entry(port) });
        if with_gone {
            servers["gone"] = absent_entry();
        }
        replicas.push(start_serve(&scratch, tag, servers, json!({}), token).await);
    }
    let targets: Vec<String> = replicas.iter().map(|(_, addr)| addr.clone()).collect();
    let prometheus = Prometheus::start(
        &binary,
        &scratch,
        &[("mcp-readiness", targets.clone())],
        &rule_files(),
    )
    .await;

    let value = |series: &Value| -> f64 {
        series["value"][1]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    // Worst state per server across the three instances.
    let worst = poll_until("the fleet roll-up", Duration::from_secs(60), async || {
        let worst: BTreeMap<String, String> = prometheus
            .query("server:mcp_readiness_server_state:worst == 1")
            .await?
            .iter()
            .map(|s| (label(s, "server").to_owned(), label(s, "state").to_owned()))
            .collect();
        let instances = prometheus
            .query(r#"server_state:mcp_readiness_server_state:instances{server="files",state="ready"}"#)
            .await?;
        let want: BTreeMap<String, String> = [
            ("files", "ready"),
            ("github", "unauthenticated"),
            ("gone", "absent"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        if worst == want && instances.first().map(value) == Some(3.0) {
            Ok(worst)
        } else {
            Err(format!("worst {worst:?}, files ready on {instances:?}"))
        }
    })
    .await;
    eprintln!(
        "oncall fleet: rolled up after {:.1} s: {worst:?}",
        now() - started
    );

    // How many replicas see each state of `github`: 1 unauthenticated, 2 ready.
    let github: BTreeMap<String, f64> = prometheus
        .query(r#"server_state:mcp_readiness_server_state:instances{server="github"}"#)
        .await
        .unwrap()
        .iter()
        .map(|s| (label(s, "state").to_owned(), value(s)))
        .collect();
    assert_eq!(github.get("unauthenticated"), Some(&1.0), "{github:?}");
    assert_eq!(github.get("ready"), Some(&2.0), "{github:?}");
    assert_eq!(github.get("absent"), Some(&0.0), "{github:?}");
    // Servers by (worst) state: each server counted once, every state present.
    let counts: BTreeMap<String, f64> = prometheus
        .query("state:mcp_readiness_server_state:servers")
        .await
        .unwrap()
        .iter()
        .map(|s| (label(s, "state").to_owned(), value(s)))
        .collect();
    let want: BTreeMap<String, f64> = [
        ("ready", 1.0),
        ("connecting", 0.0),
        ("unauthenticated", 1.0),
        ("absent", 1.0),
    ]
    .into_iter()
    .map(|(s, n)| (s.to_owned(), n))
    .collect();
    assert_eq!(counts, want);
    // The fleet budget advisor pools the replicas' connects of `files` into one p95.
    // (Polled: under load the advisor's rule group can evaluate a scrape after the state rules.)
    let (files, p95) = poll_until(
        "the fleet p95 of `files`",
        Duration::from_secs(30),
        async || {
            let p95 = prometheus
                .query("server:mcp_readiness_connect_duration_seconds:p95")
                .await?;
            let files: Vec<f64> = p95
                .iter()
                .filter(|s| label(s, "server") == "files")
                .map(value)
                .collect();
            if files.len() == 1 {
                Ok((files, p95))
            } else {
                Err(format!("{p95:?}"))
            }
        },
    )
    .await;
    assert!(files[0] > 0.0 && files[0] < 30.0, "{p95:?}");
    // The per-instance series exist for all three: the roll-up really aggregated three.
    let per_instance: BTreeSet<String> = prometheus
        .query(r#"instance_server:mcp_readiness_server_state:last3m{server="files",state="ready"} == 1"#)
        .await
        .unwrap()
        .iter()
        .map(|s| label(s, "instance").to_owned())
        .collect();
    assert_eq!(
        per_instance,
        targets.iter().cloned().collect::<BTreeSet<_>>()
    );

    // A replica that stops answering raises MCPReadinessExporterDown (pending: `for: 2m`),
    // without an `action`.
    let (lost, lost_addr) = replicas.pop().unwrap();
    drop(lost);
    let down = poll_until(
        "MCPReadinessExporterDown",
        Duration::from_secs(30),
        async || {
            let found = prometheus
                .query(r#"ALERTS{alertname="MCPReadinessExporterDown"}"#)
                .await?;
            if found.is_empty() {
                Err("not yet".to_owned())
            } else {
                Ok(found)
            }
        },
    )
    .await;
    assert_eq!(down.len(), 1, "{down:?}");
    assert_eq!(label(&down[0], "instance"), lost_addr);
    assert_eq!(label(&down[0], "action"), "", "{down:?}");
    eprintln!(
        "oncall fleet: exporter down seen after {:.1} s",
        now() - started
    );
    drop(prometheus);
}

#[tokio::test]
async fn the_example_alertmanager_routes_each_action_to_its_receiver_and_exporter_down_silences_that_instance()
 {
    let Some(binary) = system_tool("prometheus-alertmanager", "prometheus-alertmanager") else {
        return;
    };
    let scratch = Scratch::new("oncall-alertmanager");
    let addr = format!("127.0.0.1:{}", free_port());
    let err = scratch.path("alertmanager.err");
    let mut guard = KillOnDrop::spawn(
        "alertmanager",
        std::process::Command::new(binary)
            .arg(format!(
                "--config.file={}",
                repo().join("alerts/alertmanager.example.yml").display()
            ))
            .arg(format!("--storage.path={}", scratch.path("am").display()))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--cluster.listen-address=")
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap()),
    );
    wait_ready(
        "Alertmanager to answer",
        &mut guard,
        &addr,
        &err,
        Duration::from_secs(30),
    )
    .await;

    // As Prometheus would send them: agent-1's exporter is down; agent-2 is fine.
    let alert = |name: &str, instance: &str, server: Option<(&str, &str, &str)>| {
        let mut labels = json!({ "alertname": name, "job": "mcp-readiness", "instance": instance });
        if let Some((server, action, severity)) = server {
            labels["server"] = json!(server);
            labels["action"] = json!(action);
            labels["severity"] = json!(severity);
        } else {
            labels["severity"] = json!("warning");
        }
        json!({ "labels": labels, "annotations": { "summary": name } })
    };
    let sent = json!([
        alert("MCPReadinessExporterDown", "agent-1:9464", None),
        alert(
            "MCPServerUnauthenticated",
            "agent-1:9464",
            Some(("github", "reauthorize", "critical"))
        ),
        alert(
            "MCPServerUnauthenticated",
            "agent-2:9464",
            Some(("github", "reauthorize", "critical"))
        ),
        alert(
            "MCPServerAbsent",
            "agent-2:9464",
            Some(("gone", "add_connection", "critical"))
        ),
        alert(
            "MCPToolAbsent",
            "agent-2:9464",
            Some(("files", "add_connection", "warning"))
        ),
        alert(
            "MCPResolveBudgetExhausted",
            "agent-2:9464",
            Some(("slow", "extend_wait_budget", "warning"))
        ),
    ]);
    let (head, body) = http_send_json(&addr, "POST", "/api/v2/alerts", &sent.to_string())
        .await
        .unwrap();
    assert!(head.contains(" 200"), "{head}\n{body}");

    // (alertname, instance) -> (state, receivers); until the inhibition is in effect.
    let seen = poll_until("the inhibition", Duration::from_secs(20), async || {
        let (_, body) = http_get(&addr, "/api/v2/alerts").await?;
        let alerts: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        let seen: BTreeMap<(String, String), (String, Vec<String>)> = alerts
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                let key = (
                    a["labels"]["alertname"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    a["labels"]["instance"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
                let receivers = a["receivers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| r["name"].as_str().unwrap_or_default().to_owned())
                    .collect();
                (
                    key,
                    (
                        a["status"]["state"].as_str().unwrap_or_default().to_owned(),
                        receivers,
                    ),
                )
            })
            .collect();
        let inhibited = seen.get(&("MCPServerUnauthenticated".into(), "agent-1:9464".into()));
        if seen.len() == 6 && inhibited.is_some_and(|(state, _)| state == "suppressed") {
            Ok(seen)
        } else {
            Err(format!("{seen:?}"))
        }
    })
    .await;
    for (alertname, instance, state, receiver) in [
        (
            "MCPReadinessExporterDown",
            "agent-1:9464",
            "active",
            "platform-configuration",
        ),
        (
            "MCPServerUnauthenticated",
            "agent-1:9464",
            "suppressed",
            "identity-reauthorization",
        ),
        (
            "MCPServerUnauthenticated",
            "agent-2:9464",
            "active",
            "identity-reauthorization",
        ),
        (
            "MCPServerAbsent",
            "agent-2:9464",
            "active",
            "platform-configuration",
        ),
        (
            "MCPToolAbsent",
            "agent-2:9464",
            "active",
            "platform-configuration",
        ),
        (
            "MCPResolveBudgetExhausted",
            "agent-2:9464",
            "active",
            "agent-tuning",
        ),
    ] {
        let got = &seen[&(alertname.to_owned(), instance.to_owned())];
        assert_eq!(
            (got.0.as_str(), got.1.clone()),
            (state, vec![receiver.to_owned()]),
            "{alertname} on {instance}"
        );
    }
}
