//! The Grafana dashboards of `dashboards/` and the rules of `alerts/`, checked offline the way
//! Grafana's dashboard linter would (datasource variable, job / instance / server variables and
//! selectors, titles, descriptions, units, `$__rate_interval`, counters only under `rate` /
//! `increase`), every PromQL expression parsed with `promql-parser`, and every metric name
//! checked against what the exporter really serves: the `/metrics` of a running `serve` and of an
//! agent service calling tools through the `ReadinessLayer`.
#![cfg(target_os = "linux")]

mod alert_rules;
mod lint;
mod panels;
mod served_names;

use mcp_readiness_fixtures::agent_service::AgentService;
use mcp_readiness_fixtures::http::get;
use mcp_readiness_fixtures::oncall::{
    CONDITIONAL_NAMES, RIGHT_TOKEN, absent_entry, exposition_names, fixture_entry,
    recording_rule_names, start_serve,
};
use mcp_readiness_fixtures::{Scratch, eventually, repo};

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
