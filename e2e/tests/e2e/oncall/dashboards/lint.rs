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
    assert_eq!(count, 59, "36 recording rules and 23 alerts");
}
