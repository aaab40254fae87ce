//! The alert rules: only the six action alerts carry an action, every alert has a severity and a
//! runbook, and every aggregation keeps the group labels.

use super::*;

#[test]
fn only_the_six_action_alerts_carry_an_action_and_every_alert_has_a_severity_and_a_runbook() {
    let actions: BTreeMap<&str, &str> = [
        ("MCPServerUnauthenticated", "reauthorize"),
        ("MCPCredentialExpiringSoon", "reauthorize"),
        ("MCPServerAbsent", "add_connection"),
        ("MCPToolAbsent", "add_connection"),
        ("MCPResolveBudgetExhausted", "extend_wait_budget"),
        // The pre-flight's forecast (mixin/forecast.libsonnet).
        ("MCPCredentialExpiresBeforeNextRun", "reauthorize"),
    ]
    .into_iter()
    .collect();
    let rules = alert_rules();
    assert_eq!(
        rules.len(),
        23,
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
        // Critical only for the alerts whose calls are refused or whose credential runs out
        // (now, or before a scheduled run's next run).
        if severity == "critical" {
            assert!(
                [
                    "MCPServerUnauthenticated",
                    "MCPServerAbsent",
                    "MCPCredentialExpiringSoon",
                    "MCPCredentialExpiresBeforeNextRun",
                    "MCPToolCallsFailing",
                    // A server's TLS certificate within a week of its end: critical to the
                    // server's operator (mixin/tls.libsonnet), not to platform.
                    "MCPServerTLSCertificateExpiring",
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
