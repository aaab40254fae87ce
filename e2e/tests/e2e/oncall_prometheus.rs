//! alerts/ and dashboards/ on a live Prometheus (Debian's package, started by the test on a free
//! loopback port, scraping every second and evaluating the real rule files every second):
//! `serve` over fixture servers in every state plus one that connects slower than its budget, and
//! an agent service calling tools through the `ReadinessLayer`. The alerts' real `for` values are
//! kept, so they are checked as pending (`ALERTS{alertstate="pending"}`) or firing; the firing
//! side and the `for` edges are covered by `promtool test rules` on alerts/tests/.
#![cfg(target_os = "linux")]

use mcp_readiness_fixtures as common;

use common::agent_service::AgentService;
use common::http::{free_port, get, request};
use common::oncall::{
    CONDITIONAL_NAMES, RIGHT_TOKEN, WRONG_TOKEN, absent_entry, fixture_entry, http_entry,
    http_fixture, render_mixin, start_serve, start_serve_at,
};
use common::process::Guard;
use common::prometheus::{Prometheus, wait_ready};
use common::tools::{alertmanager, jsonnet_python};
use common::{Scratch, eventually, repo};

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

/// `(job, server) -> [(alertname, action, alertstate, severity)]` of the MCP alerts now.
type AlertsByServer = BTreeMap<(String, String), Vec<(String, String, String, String)>>;

async fn alerts_by_server(prometheus: &Prometheus) -> Result<AlertsByServer, String> {
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
                label(&series, "severity").into(),
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
                let raw = target["expr"].as_str().unwrap();
                // Metrics these fixtures never make the exporter serve have no data to show.
                if CONDITIONAL_NAMES.iter().any(|n| raw.contains(n)) {
                    continue;
                }
                let expr = raw
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
    let Some(binary) = common::tools::prometheus() else {
        return;
    };
    let Some(python) = jsonnet_python() else {
        return;
    };
    let started = now();
    let scratch = Scratch::new("oncall-e2e");
    // The committed mixin, with MCPToolAbsent's `for` at 10 s so that one alert fires within
    // the test and the "firing" queries of the dashboards have data; every other `for` is real.
    let rules = render_mixin(
        &python,
        &scratch.path("mixin"),
        &json!({ "for": { "MCPToolAbsent": "10s" } }),
    );
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
            ("mcp-readiness-agent", vec![agent.addr.clone()]),
        ],
        &rules,
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
    let severities = |job: &str, server: &str| -> BTreeSet<String> {
        alerts[&(job.to_owned(), server.to_owned())]
            .iter()
            .map(|(_, _, _, severity)| severity.clone())
            .collect()
    };
    assert_eq!(
        severities("mcp-readiness-agent", "gone"),
        BTreeSet::from(["critical".to_owned(), "warning".to_owned()])
    );
    assert_eq!(
        severities("mcp-readiness", "gone"),
        BTreeSet::from(["warning".to_owned()])
    );
    assert_eq!(
        severities("mcp-readiness", "slow"),
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

    // 3. Every dashboard query succeeds and returns numbers over the test's time range.
    let queries = dashboard_queries();
    let count = queries.len();
    eventually(
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
    let Some(binary) = common::tools::prometheus() else {
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
    let worst = eventually("the fleet roll-up", Duration::from_secs(60), async || {
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
    let (files, p95) = eventually(
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
    let down = eventually(
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
async fn the_example_alertmanager_pages_criticals_tickets_the_rest_and_inhibits_the_whole_outage() {
    let Some(binary) = alertmanager() else {
        return;
    };
    let scratch = Scratch::new("oncall-alertmanager");
    let addr = format!("127.0.0.1:{}", free_port());
    let err = scratch.path("alertmanager.err");
    let mut guard = Guard::spawn(
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
            "agent-tuning-ticket",
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
}

/// `(alertname, server) -> (state, activeAt)` of the warning-severity MCP alerts now.
async fn pages(
    prometheus: &Prometheus,
) -> Result<BTreeMap<(String, String), (String, String)>, String> {
    let data = prometheus.api("/api/v1/alerts").await?;
    Ok(data["alerts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["labels"]["severity"] == "warning" && a["labels"]["server"].is_string())
        .map(|a| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                (
                    text(&a["labels"]["alertname"]),
                    text(&a["labels"]["server"]),
                ),
                (text(&a["state"]), text(&a["activeAt"])),
            )
        })
        .collect())
}

/// The instances of a per-replica condition rule's series for `server`.
async fn replicas_of(
    prometheus: &Prometheus,
    rule: &str,
    server: &str,
) -> Result<BTreeSet<String>, String> {
    Ok(prometheus
        .query(&format!(r#"{rule}{{server="{server}"}}"#))
        .await?
        .iter()
        .map(|s| label(s, "instance").to_owned())
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_every_serve_replica_one_after_the_other_keeps_one_continuous_page_per_server() {
    let Some(binary) = common::tools::prometheus() else {
        return;
    };
    let Some(python) = jsonnet_python() else {
        return;
    };
    let started = now();
    let scratch = Scratch::new("oncall-rollout");
    // The mixin rendered with short `for`s and a 10 s blip window, so a rollout fits in a
    // minute; everything else as committed.
    let rules = render_mixin(
        &python,
        &scratch.path("mixin"),
        &json!({
            "stateBlipWindow": "10s",
            "for": { "MCPServerUnauthenticated": "5s", "MCPServerAbsent": "5s" },
        }),
    );
    let (_http, port) = http_fixture(&scratch, "rollout").await;
    // Every replica has the same servers: `authz` with a token the server refuses, `gone` whose
    // command does not exist.
    let servers = json!({ "authz": http_entry(port), "gone": absent_entry() });
    let addrs: Vec<String> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let start = |tag: &'static str, addr: &String| {
        start_serve_at(
            &scratch,
            tag,
            servers.clone(),
            json!({}),
            WRONG_TOKEN,
            addr.clone(),
        )
    };
    let (a, _) = start("a", &addrs[0]).await;
    let (b, _) = start("b", &addrs[1]).await;
    // Replica c's address is a target from the start (down until it runs, as in a rollout).
    let prometheus = Prometheus::start(
        &binary,
        &scratch,
        &[("mcp-readiness", addrs.clone())],
        &rules,
    )
    .await;

    let watched = [
        (
            "MCPServerUnauthenticated",
            "authz",
            "instance_server:mcp_readiness_server_state:unauthenticated",
        ),
        (
            "MCPServerAbsent",
            "gone",
            "instance_server:mcp_readiness_server_state:absent",
        ),
    ];
    // 1. Both pages fire once, from replicas a and b.
    let first = eventually("both pages firing", Duration::from_secs(60), async || {
        let now = pages(&prometheus).await?;
        let firing: BTreeMap<_, _> = watched
            .iter()
            .filter_map(|(alert, server, _)| {
                let key = (alert.to_string(), server.to_string());
                now.get(&key)
                    .filter(|(state, _)| state == "firing")
                    .map(|v| (key, v.1.clone()))
            })
            .collect();
        if firing.len() == watched.len() {
            Ok(firing)
        } else {
            Err(format!("{now:?}"))
        }
    })
    .await;
    let for_state = async || -> Result<BTreeMap<String, String>, String> {
        Ok(prometheus
            .query(r#"ALERTS_FOR_STATE{alertname=~"MCPServerUnauthenticated|MCPServerAbsent",severity="warning"}"#)
            .await?
            .iter()
            .map(|s| (label(s, "alertname").to_owned(), s["value"][1].as_str().unwrap_or_default().to_owned()))
            .collect())
    };
    let active_since = for_state().await.unwrap();
    eprintln!(
        "oncall rollout: both pages firing after {:.1} s: {first:?}",
        now() - started
    );

    // Every observation from now on: each page still firing, with the same activeAt.
    let mut observations = 0;
    let mut check = async |prometheus: &Prometheus| -> Result<(), String> {
        let now = pages(prometheus).await?;
        for (key, active_at) in &first {
            let seen = now.get(key);
            assert_eq!(
                seen,
                Some(&("firing".to_owned(), active_at.clone())),
                "{key:?} resolved or re-fired during the rollout: {now:?}"
            );
        }
        observations += 1;
        Ok(())
    };

    // 2. Replace a by c: stop a, start c; wait until c reports both and a's evidence expired.
    drop(a);
    let (c, _) = start("c", &addrs[2]).await;
    for (_, server, rule) in watched {
        eventually("c instead of a", Duration::from_secs(60), async || {
            check(&prometheus).await?;
            let now = replicas_of(&prometheus, rule, server).await?;
            let want = BTreeSet::from([addrs[1].clone(), addrs[2].clone()]);
            if now == want {
                Ok(())
            } else {
                Err(format!("{rule} {server}: {now:?}"))
            }
        })
        .await;
    }
    eprintln!(
        "oncall rollout: a replaced by c after {:.1} s",
        now() - started
    );

    // 3. Stop b too: only c, which was not there when the pages started, holds them now.
    drop(b);
    for (_, server, rule) in watched {
        eventually("c alone", Duration::from_secs(60), async || {
            check(&prometheus).await?;
            let now = replicas_of(&prometheus, rule, server).await?;
            if now == BTreeSet::from([addrs[2].clone()]) {
                Ok(())
            } else {
                Err(format!("{rule} {server}: {now:?}"))
            }
        })
        .await;
    }
    for _ in 0..5 {
        check(&prometheus).await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The same activeAt in Prometheus' own record of the alerts' state.
    assert_eq!(for_state().await.unwrap(), active_since);
    // And the description names the replica that sees it now.
    let data = prometheus.api("/api/v1/alerts").await.unwrap();
    let description = data["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["labels"]["alertname"] == "MCPServerUnauthenticated"
                && a["labels"]["severity"] == "warning"
        })
        .and_then(|a| a["annotations"]["description"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(
        description.contains(&format!("replicas ({}):", addrs[2])),
        "{description}"
    );
    eprintln!(
        "oncall rollout: one continuous page per server through a, b -> c ({observations} observations) after {:.1} s",
        now() - started
    );
    drop(c);
    drop(prometheus);
}
