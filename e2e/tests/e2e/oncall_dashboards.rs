//! The Grafana dashboards of `dashboards/` and the rules of `alerts/`, checked offline the way
//! Grafana's dashboard linter would (datasource variable, job / instance / server variables and
//! selectors, titles, descriptions, units, `$__rate_interval`, counters only under `rate` /
//! `increase`), every PromQL expression parsed with `promql-parser`, and every metric name
//! checked against what the exporter really serves: the `/metrics` of a running `serve` and of an
//! agent service calling tools through the `ReadinessLayer`.
#![cfg(target_os = "linux")]

use mcp_readiness_fixtures as common;

use common::agent_service::AgentService;
use common::http::get;
use common::oncall::{
    CONDITIONAL_NAMES, RIGHT_TOKEN, absent_entry, exposition_names, fixture_entry,
    recording_rule_names, start_serve,
};
use common::{Scratch, eventually, repo};

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use promql_parser::label::MatchOp;
use promql_parser::parser::{self, Expr, VectorSelector};
use serde_json::{Value, json};

/// What `$__rate_interval` is replaced with before parsing: a range nobody writes by hand.
const RATE_INTERVAL_STANDIN: &str = "1h2m3s";
const RATE_INTERVAL_SECS: u64 = 3723;
/// Names that Prometheus itself provides.
const PROMETHEUS_NAMES: [&str; 3] = ["ALERTS", "ALERTS_FOR_STATE", "up"];
/// Alert series: per workload (job, server, group labels), so without `instance`.
const WORKLOAD_NAMES: [&str; 2] = ["ALERTS", "ALERTS_FOR_STATE"];

fn dashboards() -> Vec<(PathBuf, Value)> {
    let mut found: Vec<(PathBuf, Value)> = std::fs::read_dir(repo().join("dashboards"))
        .expect("dashboards/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", p.display()));
            (p, value)
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(found.len() >= 2, "a fleet overview and a drill-down");
    found
}

/// Every panel that is not a row, with its dashboard's file name.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut all = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        if panel["type"] == "row" {
            all.extend(panel["panels"].as_array().into_iter().flatten());
        } else {
            all.push(panel);
        }
    }
    all
}

/// Every (where, expression) of a dashboard: panel targets and variable queries.
fn dashboard_exprs(name: &str, dashboard: &Value) -> Vec<(String, String)> {
    let mut exprs = Vec::new();
    for panel in panels(dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            exprs.push((
                format!("{name}: panel `{}` {}", panel["title"], target["refId"]),
                target["expr"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    exprs
}

/// A variable's `label_values(selector, label)` selector, as PromQL.
fn variable_selectors(name: &str, dashboard: &Value) -> Vec<(String, String)> {
    dashboard["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["type"] == "query")
        .map(|v| {
            let query = v["query"]["query"].as_str().unwrap_or_default();
            let inner = query
                .strip_prefix("label_values(")
                .and_then(|q| q.strip_suffix(')'))
                .and_then(|q| q.rsplit_once(','))
                .map(|(selector, _)| selector.trim().to_owned())
                .unwrap_or_else(|| panic!("{name}: variable {}: {query}", v["name"]));
            (format!("{name}: variable {}", v["name"]), inner)
        })
        .collect()
}

/// The `expr:` values of a rules file (block scalars and one-liners).
fn rule_exprs(file: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut exprs = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("expr:") else {
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let rest = rest.trim();
        let expr = if rest == "|" || rest == ">" || rest == "|-" || rest == ">-" {
            lines[i + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            rest.to_owned()
        };
        exprs.push((format!("{file}:{}", i + 1), expr));
    }
    assert!(!exprs.is_empty(), "{file} has rules");
    exprs
}

fn parse(place: &str, expr: &str) -> Expr {
    let text = expr.replace("$__rate_interval", RATE_INTERVAL_STANDIN);
    parser::parse(&text).unwrap_or_else(|e| panic!("{place}: PromQL does not parse: {e}\n{expr}"))
}

/// A selector found in an expression: its name and whether a rate-like function encloses it.
struct Found {
    selector: VectorSelector,
    under_rate: bool,
    range: Option<Duration>,
}

fn walk(expr: &Expr, under_rate: bool, out: &mut Vec<Found>) {
    match expr {
        Expr::Aggregate(a) => {
            walk(&a.expr, under_rate, out);
            if let Some(p) = &a.param {
                walk(p, under_rate, out);
            }
        }
        Expr::Unary(u) => walk(&u.expr, under_rate, out),
        Expr::Binary(b) => {
            walk(&b.lhs, under_rate, out);
            walk(&b.rhs, under_rate, out);
        }
        Expr::Paren(p) => walk(&p.expr, under_rate, out),
        Expr::Subquery(s) => walk(&s.expr, under_rate, out),
        Expr::VectorSelector(vs) => out.push(Found {
            selector: vs.clone(),
            under_rate,
            range: None,
        }),
        Expr::MatrixSelector(ms) => out.push(Found {
            selector: ms.vs.clone(),
            under_rate,
            range: Some(ms.range),
        }),
        Expr::Call(call) => {
            let rate_like = matches!(call.func.name, "rate" | "irate" | "increase");
            for arg in &call.args.args {
                walk(arg, rate_like, out);
            }
        }
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {}
    }
}

fn selectors(place: &str, expr: &str) -> Vec<Found> {
    let mut found = Vec::new();
    walk(&parse(place, expr), false, &mut found);
    assert!(!found.is_empty(), "{place}: selects nothing: {expr}");
    found
}

fn name_of(selector: &VectorSelector) -> String {
    selector.name.clone().unwrap_or_else(|| {
        selector
            .matchers
            .matchers
            .iter()
            .find(|m| m.name == "__name__")
            .map(|m| m.value.clone())
            .unwrap_or_default()
    })
}

fn is_counter(name: &str) -> bool {
    !name.contains(':')
        && ["_total", "_bucket", "_count", "_sum"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// Whether the selector matches `label=~"$variable"`.
fn uses_variable(selector: &VectorSelector, label: &str) -> bool {
    selector.matchers.matchers.iter().any(|m| {
        m.name == label && matches!(m.op, MatchOp::Re(_)) && m.value == format!("${label}")
    })
}

#[test]
fn every_dashboard_has_a_prometheus_datasource_variable_and_multi_value_job_instance_server_variables()
 {
    for (path, dashboard) in dashboards() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            dashboard["schemaVersion"].as_u64().unwrap_or(0) >= 39,
            "{name}: schemaVersion"
        );
        for key in ["uid", "title", "description"] {
            assert!(
                !dashboard[key].as_str().unwrap_or_default().is_empty(),
                "{name}: {key}"
            );
        }
        let vars: BTreeMap<&str, &Value> = dashboard["templating"]["list"]
            .as_array()
            .expect("templating.list")
            .iter()
            .map(|v| (v["name"].as_str().unwrap(), v))
            .collect();
        let ds = vars.get("datasource").expect("a `datasource` variable");
        assert_eq!(ds["type"], "datasource", "{name}");
        assert_eq!(ds["query"], "prometheus", "{name}");
        for var in ["job", "instance", "server"] {
            let v = vars
                .get(var)
                .unwrap_or_else(|| panic!("{name}: no `{var}` variable"));
            assert_eq!(v["type"], "query", "{name}: {var}");
            assert_eq!(
                v["refresh"], 2,
                "{name}: {var} refreshes on time range change"
            );
            assert_eq!(v["multi"], true, "{name}: {var} is multi-value");
            assert_eq!(v["includeAll"], true, "{name}: {var} has All");
            assert_eq!(v["allValue"], ".+", "{name}: {var} All is `.+`");
            assert_eq!(
                v["datasource"],
                json!({"type": "prometheus", "uid": "${datasource}"}),
                "{name}: {var}"
            );
        }
        // The instance variable is scoped by job, the server variable by job and instance.
        let query = |v: &str| vars[v]["query"]["query"].as_str().unwrap().to_owned();
        assert!(query("instance").contains("job=~\"$job\""), "{name}");
        assert!(
            query("server").contains("job=~\"$job\"")
                && query("server").contains("instance=~\"$instance\""),
            "{name}"
        );
    }
}

#[test]
fn every_panel_has_an_id_a_grid_position_a_title_a_description_a_unit_and_the_datasource_variable()
{
    let datasource = json!({"type": "prometheus", "uid": "${datasource}"});
    for (path, dashboard) in dashboards() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut ids = BTreeSet::new();
        for panel in dashboard["panels"].as_array().unwrap() {
            let id = panel["id"]
                .as_u64()
                .unwrap_or_else(|| panic!("{name}: a panel without id"));
            assert!(ids.insert(id), "{name}: panel id {id} twice");
            let grid = &panel["gridPos"];
            for key in ["h", "w", "x", "y"] {
                assert!(grid[key].is_u64(), "{name}: panel {id} gridPos.{key}");
            }
            assert!(
                grid["x"].as_u64().unwrap() + grid["w"].as_u64().unwrap() <= 24,
                "{name}: panel {id} is wider than the grid"
            );
        }
        let all = panels(&dashboard);
        assert!(all.len() >= 8, "{name}: {} panels", all.len());
        for panel in all {
            let title = panel["title"].as_str().unwrap_or_default();
            let place = format!("{name}: panel `{title}`");
            assert!(!title.is_empty(), "{place}: a title");
            assert!(
                panel["type"].as_str().is_some_and(|t| !t.is_empty()),
                "{place}: a type"
            );
            assert!(
                panel["description"].as_str().unwrap_or_default().len() > 20,
                "{place}: a description"
            );
            assert_eq!(panel["datasource"], datasource, "{place}: datasource");
            assert!(
                !panel["fieldConfig"]["defaults"]["unit"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty(),
                "{place}: a unit"
            );
            let targets = panel["targets"].as_array().expect("targets");
            assert!(!targets.is_empty(), "{place}: no targets");
            let mut refs = BTreeSet::new();
            for target in targets {
                assert!(
                    refs.insert(target["refId"].as_str().unwrap_or_default()),
                    "{place}: refIds"
                );
                assert_eq!(
                    target["datasource"], datasource,
                    "{place}: target datasource"
                );
                assert!(
                    !target["expr"].as_str().unwrap_or_default().is_empty(),
                    "{place}: an expr"
                );
            }
        }
    }
}

#[test]
fn every_dashboard_query_parses_selects_by_job_and_instance_uses_the_rate_interval_and_rates_its_counters()
 {
    let recorded = recording_rule_names();
    let mut checked = 0;
    for (path, dashboard) in dashboards() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (place, expr) in dashboard_exprs(&name, &dashboard) {
            for found in selectors(&place, &expr) {
                let metric = name_of(&found.selector);
                let what = format!("{place}: `{metric}` in `{expr}`");
                assert!(
                    uses_variable(&found.selector, "job"),
                    "{what}: no job=~\"$job\""
                );
                // Fleet roll-ups (level without `instance`) aggregate the instances away.
                let per_instance = !WORKLOAD_NAMES.contains(&metric.as_str())
                    && (!recorded.contains(&metric)
                        || metric
                            .split(':')
                            .next()
                            .unwrap_or_default()
                            .contains("instance"));
                if per_instance {
                    assert!(
                        uses_variable(&found.selector, "instance"),
                        "{what}: no instance=~\"$instance\""
                    );
                }
                if is_counter(&metric) {
                    assert!(found.under_rate, "{what}: a counter outside rate/increase");
                }
                if found.under_rate {
                    assert_eq!(
                        found.range,
                        Some(Duration::from_secs(RATE_INTERVAL_SECS)),
                        "{what}: rate/increase over `$__rate_interval`"
                    );
                }
                checked += 1;
            }
        }
        for (place, expr) in variable_selectors(&name, &dashboard) {
            selectors(&place, &expr);
        }
    }
    assert!(checked > 30, "{checked} selectors checked");
}

#[test]
fn every_rule_expression_parses_as_promql() {
    let mut count = 0;
    for file in ["alerts/rules.yml", "alerts/alerts.yml"] {
        for (place, expr) in rule_exprs(file) {
            selectors(&place, &expr);
            count += 1;
        }
    }
    assert_eq!(count, 41, "27 recording rules and 14 alerts");
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
    // Every recording rule name starts from a served metric (level:metric:operations).
    for name in &recorded {
        let metric = name.split(':').nth(1).unwrap_or_default();
        assert!(
            served.contains(metric) || CONDITIONAL_NAMES.contains(&metric),
            "recording rule `{name}`: `{metric}` is not served"
        );
    }
}

#[test]
fn now_panels_query_the_instant_and_the_rendered_dashboards_are_not_editable() {
    let mut now_panels = 0;
    for (path, dashboard) in dashboards() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(dashboard["editable"], false, "{name}: rendered from mixin/");
        for panel in panels(&dashboard) {
            if !matches!(panel["type"].as_str(), Some("stat" | "table")) {
                continue;
            }
            for target in panel["targets"].as_array().unwrap() {
                assert_eq!(
                    (&target["instant"], &target["range"]),
                    (&json!(true), &json!(false)),
                    "{name}: panel `{}` shows now: an instant query",
                    panel["title"]
                );
            }
            let calcs = &panel["options"]["reduceOptions"]["calcs"];
            assert!(
                calcs.is_null() || calcs == &json!(["lastNotNull"]),
                "{name}: panel `{}`",
                panel["title"]
            );
            now_panels += 1;
        }
    }
    assert!(now_panels >= 8, "{now_panels} now panels");
}

/// The value mappings of a panel (defaults, or the override of field `field`).
fn rank_colours(mappings: &Value) -> BTreeMap<String, (String, String)> {
    mappings[0]["options"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                (
                    v["text"].as_str().unwrap_or_default().to_owned(),
                    v["color"].as_str().unwrap_or_default().to_owned(),
                ),
            )
        })
        .collect()
}

#[test]
fn every_state_reads_ready_green_connecting_yellow_absent_orange_unauthenticated_red() {
    let want: BTreeMap<String, (String, String)> = [
        ("0", "ready", "green"),
        ("1", "connecting", "yellow"),
        ("2", "absent", "orange"),
        ("3", "unauthenticated", "red"),
    ]
    .into_iter()
    .map(|(k, t, c)| (k.to_owned(), (t.to_owned(), c.to_owned())))
    .collect();
    let mut checked = 0;
    for (path, dashboard) in dashboards() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for panel in panels(&dashboard) {
            let uses_rank = panel["targets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["expr"].as_str().unwrap_or_default().contains("rank"));
            if !uses_rank {
                continue;
            }
            let defaults = &panel["fieldConfig"]["defaults"]["mappings"];
            let state_override = panel["fieldConfig"]["overrides"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|o| o["matcher"]["options"] == "state")
                .and_then(|o| {
                    o["properties"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["id"] == "mappings")
                })
                .map(|p| p["value"].clone());
            let mappings = state_override.unwrap_or_else(|| defaults.clone());
            assert_eq!(
                rank_colours(&mappings),
                want,
                "{name}: panel `{}`",
                panel["title"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} state panels");
    // "Servers by state": ready always green; any other state in its colour from 1 server on.
    let fleet = &dashboards()[0].1;
    let by_state = panels(fleet)
        .into_iter()
        .find(|p| p["title"] == "Servers by state")
        .expect("Servers by state");
    let overrides = by_state["fieldConfig"]["overrides"].as_array().unwrap();
    for (state, colour) in [
        ("connecting", "yellow"),
        ("absent", "orange"),
        ("unauthenticated", "red"),
    ] {
        let o = overrides
            .iter()
            .find(|o| o["matcher"]["options"] == state)
            .unwrap_or_else(|| panic!("no override for {state}"));
        let steps = &o["properties"][0]["value"]["steps"];
        assert_eq!(
            steps,
            &json!([{"color": "green", "value": null}, {"color": colour, "value": 1}])
        );
    }
}

#[test]
fn the_fleet_table_comes_first_and_says_who_must_act_for_which_action_since_when_on_how_many_replicas()
 {
    let (path, fleet) = &dashboards()[0];
    assert!(path.ends_with("mcp-readiness-fleet.json"));
    let table = panels(fleet)[0];
    assert_eq!(table["type"], "table");
    assert_eq!(table["title"], "Servers that need a human");
    assert_eq!(table["gridPos"]["y"], 1, "right under the first row");
    let exprs: Vec<&str> = table["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["expr"].as_str().unwrap())
        .collect();
    for needle in [
        "server:mcp_readiness_server_state:worst_rank",
        "alertname, action) (ALERTS{action!=\"\", alertstate=\"firing\"",
        "ALERTS_FOR_STATE",
        "instance_server:mcp_readiness_server_state:last3m{state=\"ready\"",
        "server:mcp_readiness_tool_calls_total:refused_recently",
    ] {
        assert!(
            exprs.iter().any(|e| e.contains(needle)),
            "{needle}: {exprs:?}"
        );
    }
    let renamed = &table["transformations"][1]["options"]["renameByName"];
    let columns: BTreeSet<&str> = renamed
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_str().unwrap())
        .collect();
    for column in [
        "state",
        "alert",
        "since",
        "replicas not ready",
        "replicas",
        "refused calls (1h)",
    ] {
        assert!(columns.contains(column), "{column}: {columns:?}");
    }
    let links: BTreeMap<&str, &str> = table["fieldConfig"]["overrides"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| {
            let link = o["properties"]
                .as_array()?
                .iter()
                .find(|p| p["id"] == "links")?;
            Some((
                o["matcher"]["options"].as_str()?,
                link["value"][0]["url"].as_str()?,
            ))
        })
        .collect();
    assert!(
        links["server"].starts_with("/d/mcp-readiness-server?"),
        "{links:?}"
    );
    assert!(
        links["alert"].contains("runbook.md#${__value.raw}"),
        "{links:?}"
    );
}

/// `(alert, labels block)` of every alerting rule of the rendered alerts.yml.
fn alert_rules() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo().join("alerts/alerts.yml")).unwrap();
    text.split("\n      - alert: ")
        .skip(1)
        .map(|block| {
            let (name, rest) = block.split_once('\n').unwrap();
            (name.trim().to_owned(), rest.to_owned())
        })
        .collect()
}

#[test]
fn only_the_five_action_alerts_carry_an_action_and_every_alert_has_a_severity_and_a_runbook() {
    let actions: BTreeMap<&str, &str> = [
        ("MCPServerUnauthenticated", "reauthorize"),
        ("MCPCredentialExpiringSoon", "reauthorize"),
        ("MCPServerAbsent", "add_connection"),
        ("MCPToolAbsent", "add_connection"),
        ("MCPResolveBudgetExhausted", "extend_wait_budget"),
    ]
    .into_iter()
    .collect();
    let rules = alert_rules();
    assert_eq!(
        rules.len(),
        14,
        "{:?}",
        rules.iter().map(|r| &r.0).collect::<Vec<_>>()
    );
    for (name, block) in &rules {
        let action = block
            .lines()
            .find_map(|l| l.trim().strip_prefix("action: "))
            .map(str::to_owned);
        assert_eq!(
            action.as_deref(),
            actions.get(name.as_str()).copied(),
            "{name}"
        );
        let severity = block
            .lines()
            .find_map(|l| l.trim().strip_prefix("severity: "))
            .unwrap_or_else(|| panic!("{name}: no severity"));
        assert!(
            ["critical", "warning", "info"].contains(&severity),
            "{name}"
        );
        // Critical only for the alerts whose calls are refused or whose credential runs out.
        if severity == "critical" {
            assert!(
                [
                    "MCPServerUnauthenticated",
                    "MCPServerAbsent",
                    "MCPCredentialExpiringSoon"
                ]
                .contains(&name.as_str()),
                "{name}"
            );
        }
        let anchor = format!("runbook.md#{}\"", name.to_lowercase());
        assert!(block.contains(&anchor), "{name}: runbook_url");
        let runbook = std::fs::read_to_string(repo().join("docs/runbook.md")).unwrap();
        assert!(
            runbook.contains(&format!("\n## {name}\n")),
            "docs/runbook.md has no section `## {name}`"
        );
    }
}

#[test]
fn every_aggregation_in_the_rules_keeps_the_group_labels() {
    let mut checked = 0;
    for file in ["alerts/rules.yml", "alerts/alerts.yml"] {
        for (place, expr) in rule_exprs(file) {
            for clause in expr
                .split(" by (")
                .skip(1)
                .chain(expr.split(" on (").skip(1))
            {
                let labels = clause.split(')').next().unwrap_or_default();
                if labels.contains("job") {
                    assert!(
                        labels.contains("cluster") && labels.contains("namespace"),
                        "{place}: `{labels}` drops the group labels in {expr}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 30, "{checked} aggregations");
}
