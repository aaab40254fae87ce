//! The dashboards and rules linted offline the way Grafana's dashboard linter would: datasource
//! and cluster / namespace / job / instance / server variables, ids, grid positions, titles, descriptions, units,
//! `$__rate_interval`, counters only under `rate` / `increase`, every expression parsed.

use super::*;

#[test]
fn every_dashboard_has_a_prometheus_datasource_variable_and_multi_value_cluster_namespace_job_instance_server_variables()
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
        // `cluster` and `namespace` (the alerts' group labels), before `job`: their All is `.*`,
        // so a set-up without the label (empty) still matches; each scopes the ones after it.
        for var in ["cluster", "namespace"] {
            let v = vars
                .get(var)
                .unwrap_or_else(|| panic!("{name}: no `{var}` variable"));
            assert_eq!(v["type"], "query", "{name}: {var}");
            assert_eq!(v["refresh"], 2, "{name}: {var}");
            assert_eq!(v["multi"], true, "{name}: {var} is multi-value");
            assert_eq!(v["includeAll"], true, "{name}: {var} has All");
            assert_eq!(v["allValue"], ".*", "{name}: {var} All is `.*`");
        }
        let order: Vec<&str> = dashboard["templating"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            order,
            [
                "datasource",
                "cluster",
                "namespace",
                "job",
                "instance",
                "server"
            ],
            "{name}"
        );
        // The instance variable is scoped by job, the server variable by job and instance.
        let query = |v: &str| vars[v]["query"]["query"].as_str().unwrap().to_owned();
        assert!(query("instance").contains("job=~\"$job\""), "{name}");
        assert!(
            query("namespace").contains("cluster=~\"$cluster\""),
            "{name}"
        );
        for var in ["job", "instance", "server"] {
            assert!(
                query(var).contains("cluster=~\"$cluster\"")
                    && query(var).contains("namespace=~\"$namespace\""),
                "{name}: {var} is scoped by cluster and namespace"
            );
        }
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
fn every_dashboard_query_parses_selects_by_cluster_namespace_job_and_instance_uses_the_rate_interval_and_rates_its_counters()
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
                // Scoped by the alerts' group labels, as the rules aggregate by them.
                for label in ["cluster", "namespace"] {
                    assert!(
                        uses_variable(&found.selector, label),
                        "{what}: no {label}=~\"${label}\""
                    );
                }
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
    assert_eq!(
        count, 81,
        "43 recording rules, 15 deprecated aliases and 23 alerts"
    );
}

/// `alerts/rules.yml` as (group, recorded name, expression) in file order.
fn recording_rules() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(repo().join("alerts/rules.yml")).unwrap();
    let exprs: BTreeMap<usize, String> = rule_exprs("alerts/rules.yml")
        .into_iter()
        .map(|(place, expr)| (place.rsplit(':').next().unwrap().parse().unwrap(), expr))
        .collect();
    let mut group = String::new();
    let mut rules = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("- name:") {
            group = name.trim().to_owned();
        } else if let Some(name) = line.strip_prefix("- record:") {
            // The rule's `expr:` is the next one after its `record:`.
            let expr = exprs
                .range(i + 1..)
                .next()
                .map(|(_, e)| e.clone())
                .unwrap_or_default();
            rules.push((group.clone(), name.trim().to_owned(), expr));
        }
    }
    rules
}

#[test]
fn recording_rule_names_are_level_metric_operations_with_the_window_and_no_total_after_an_increase()
{
    let rules = recording_rules();
    let mut current = BTreeSet::new();
    for (group, name, _) in rules.iter().filter(|r| r.0 != DEPRECATED) {
        let parts: Vec<&str> = name.split(':').collect();
        assert_eq!(
            parts.len(),
            3,
            "{group}: `{name}` is level:metric:operations"
        );
        let (level, metric, operations) = (parts[0], parts[1], parts[2]);
        assert!(
            !level.is_empty() && level.split('_').all(|l| !l.is_empty()),
            "`{name}`: level"
        );
        assert!(metric.starts_with("mcp_readiness_"), "`{name}`: metric");
        // Prometheus' practice: a counter loses `_total` once an increase or rate is taken.
        assert!(
            !metric.ends_with("_total") && !metric.contains("_total_"),
            "`{name}`: `_total` in the metric of a recorded name"
        );
        assert!(!operations.is_empty(), "`{name}`: operations");
        // An increase or a rate names its window (`increase25h`, `ratio_increase1h`).
        for op in ["increase", "rate"] {
            if let Some(at) = operations.find(op) {
                let window = &operations[at + op.len()..];
                assert!(
                    window.starts_with(|c: char| c.is_ascii_digit()),
                    "`{name}`: `{op}` without its window"
                );
            }
        }
        current.insert(name.clone());
    }
    // The names before issue 36, one release: each recorded from a current name only.
    let aliases: Vec<_> = rules.iter().filter(|r| r.0 == DEPRECATED).collect();
    assert_eq!(aliases.len(), 15, "{aliases:?}");
    for (_, old, expr) in aliases {
        assert!(
            !current.contains(old),
            "`{old}` is both current and deprecated"
        );
        let source = expr.split_whitespace().next().unwrap_or_default();
        assert!(
            current.contains(source),
            "deprecated `{old}` reads `{source}`, not a current name"
        );
        let docs = std::fs::read_to_string(repo().join("docs/metrics.md")).unwrap();
        assert!(
            docs.contains(&format!("`{old}`")),
            "docs/metrics.md does not list the deprecated `{old}`"
        );
    }
}

/// The group that records the names before issue 36 for one release.
const DEPRECATED: &str = "mcp-readiness.deprecated-aliases";
