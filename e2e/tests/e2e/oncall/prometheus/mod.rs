//! alerts/ and dashboards/ on a live Prometheus (Debian's package, started by the test on a free
//! loopback port, scraping every second and evaluating the real rule files every second):
//! `serve` over fixture servers in every state plus one that connects slower than its budget, and
//! an agent service calling tools through the `ReadinessLayer`. The alerts' real `for` values are
//! kept, so they are checked as pending (`ALERTS{alertstate="pending"}`) or firing; the firing
//! side and the `for` edges are covered by `promtool test rules` on alerts/tests/.
#![cfg(target_os = "linux")]

mod actions;
mod agents;
mod alertmanager;
mod otlp;
mod probe;
mod replicas;
mod roll_up;
mod streams;

use mcp_readiness_fixtures::agent_service::AgentService;
use mcp_readiness_fixtures::clock::unix_secs;
use mcp_readiness_fixtures::http::{free_port, get, request};
use mcp_readiness_fixtures::oncall::{
    CONDITIONAL_NAMES, RIGHT_TOKEN, Rig, WRONG_TOKEN, absent_entry, fixture_entry, http_entry,
    http_fixture, start_serve, start_serve_at,
};
use mcp_readiness_fixtures::process::Guard;
use mcp_readiness_fixtures::prometheus::{Prometheus, start_daemon};
use mcp_readiness_fixtures::tools::alertmanager;
use mcp_readiness_fixtures::{Scratch, eventually, repo};

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};

/// Every alert Prometheus holds (`/api/v1/alerts`), pending or firing.
async fn all_alerts(prometheus: &Prometheus) -> Result<Vec<Value>, String> {
    let data = prometheus.api("/api/v1/alerts").await?;
    Ok(data["alerts"].as_array().cloned().unwrap_or_default())
}

/// A JSON string's text, empty for anything else.
fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// An alert as the tests read it from `/api/v1/alerts`: its state, then its `activeAt`.
trait Alert: std::fmt::Debug {
    fn state(&self) -> &str;
    fn active_at(&self) -> &str;
}

impl Alert for (String, String) {
    fn state(&self) -> &str {
        &self.0
    }
    fn active_at(&self) -> &str {
        &self.1
    }
}

impl Alert for (String, String, f64) {
    fn state(&self) -> &str {
        &self.0
    }
    fn active_at(&self) -> &str {
        &self.1
    }
}

/// The `activeAt` of each of `keys` once every one is firing in `now`; until then what `now`
/// shows, for [`eventually`] to retry.
fn all_firing<K: Ord + std::fmt::Debug, A: Alert>(
    now: &BTreeMap<K, A>,
    keys: impl IntoIterator<Item = K>,
) -> Result<BTreeMap<K, String>, String> {
    let mut firing = BTreeMap::new();
    for key in keys {
        match now.get(&key) {
            Some(alert) if alert.state() == "firing" => {
                firing.insert(key, alert.active_at().to_string());
            }
            _ => return Err(format!("{now:?}")),
        }
    }
    Ok(firing)
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

/// Every dashboard target's expression with Grafana's variables filled in as "All" (`.*` for
/// `cluster` and `namespace`, `.+` for the rest) and
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
                    .replace("$cluster", ".*")
                    .replace("$namespace", ".*")
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
