//! The panels as on-call reads them: now-panels query the instant, the state colours, the fleet
//! table first with who must act, for which action, since when, on how many replicas.

use super::*;

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
fn the_fleet_table_comes_first_and_lists_only_who_must_act_for_which_alert_since_when_on_how_many_replicas()
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
        "alertname, action) (ALERTS{alertname=~\"MCP.*\", alertstate=\"firing\"",
        "ALERTS_FOR_STATE",
        "instance_server:mcp_readiness_server_state:last3m{state=\"ready\"",
        "server:mcp_readiness_tool_calls_not_ready:increase1h",
        "server:mcp_readiness_tool_calls_failed:increase1h",
    ] {
        assert!(
            exprs.iter().any(|e| e.contains(needle)),
            "{needle}: {exprs:?}"
        );
    }
    // Only servers with a firing alert or a state other than ready: every query is filtered.
    for expr in &exprs {
        assert!(
            expr.contains("server:mcp_readiness_server_state:worst_rank{")
                && expr.contains(") > 0 or max by"),
            "{expr}"
        );
    }
    // Sorted by the hidden key: firing and severity, then the state.
    assert_eq!(table["transformations"][1]["id"], "sortBy");
    let renamed = &table["transformations"][2]["options"]["renameByName"];
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
        "severity",
        "refused calls (1h)",
        "failed calls (1h)",
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
    // The row's whole workload: the group labels (`_config.groupLabels`) as well as job and server.
    for var in [
        "var-cluster=${__data.fields.cluster}",
        "var-namespace=${__data.fields.namespace}",
        "var-job=${__data.fields.job}",
        "var-server=${__value.raw}",
    ] {
        assert!(links["server"].contains(var), "{var}: {links:?}");
    }
    assert!(
        links["alert"].contains("runbook.md#${__value.raw}"),
        "{links:?}"
    );
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
