//! The server dashboard's *Event stream re-opens* panel on a live Prometheus: `serve` over an
//! HTTP server that cuts every event stream right after its headers (a reconnect storm without
//! the client's pacing). The panel has data, reads a few re-opens a minute (paced, not
//! thousands), and the server raises no alert: it stays ready and its calls work.

use super::*;

use mcp_readiness_fixtures::configure::http_fixture_with_env;

/// The expressions of the server dashboard's panel `title`.
fn panel_exprs(title: &str) -> Vec<String> {
    let text =
        std::fs::read_to_string(repo().join("dashboards/mcp-readiness-server.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let mut panels: Vec<&Value> = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        panels.push(panel);
        panels.extend(panel["panels"].as_array().into_iter().flatten());
    }
    let panel = panels
        .into_iter()
        .find(|p| p["title"] == title)
        .unwrap_or_else(|| panic!("no panel `{title}` in the server dashboard"));
    assert_eq!(
        panel["fieldConfig"]["defaults"]["unit"], "opm",
        "re-opens per minute"
    );
    panel["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cuts_every_event_stream_shows_a_few_reopens_a_minute_on_the_server_dashboard_and_raises_no_alert()
 {
    let Some(binary) = mcp_readiness_fixtures::tools::prometheus() else {
        return;
    };
    let exprs = panel_exprs("Event stream re-opens");
    let scratch = Scratch::new("oncall-streams");
    let (_http, port) =
        http_fixture_with_env(&scratch, RIGHT_TOKEN, &[("FIXTURE_CUT_STREAMS", "cut")]).await;
    let (_serve, serve_addr) = start_serve(
        &scratch,
        "streams",
        json!({ "cut": http_entry(port) }),
        json!({}),
        RIGHT_TOKEN,
    )
    .await;
    let rules = vec![
        repo().join("alerts/rules.yml"),
        repo().join("alerts/alerts.yml"),
    ];
    let prometheus = Prometheus::start(
        &binary,
        &scratch,
        &[("mcp-readiness", vec![serve_addr])],
        &rules,
    )
    .await;
    let started = unix_secs();

    // The panel's query, as Grafana sends it for "All" with a 1 s scrape interval, has data
    // once the first re-open created the counter.
    let queries: Vec<String> = exprs
        .iter()
        .map(|e| {
            e.replace("$__rate_interval", "4s")
                .replace("$cluster", ".*")
                .replace("$namespace", ".*")
                .replace("$job", ".+")
                .replace("$instance", ".+")
                .replace("$server", ".+")
        })
        .collect();
    eventually(
        "data in the re-opens panel",
        Duration::from_secs(60),
        async || {
            for expr in &queries {
                let result = prometheus.query_range(expr, started - 5.0).await?;
                let has = result.iter().any(|s| {
                    label(s, "server") == "cut"
                        && s["values"].as_array().is_some_and(|v| !v.is_empty())
                });
                if !has {
                    return Err(format!("no data for `cut` yet: {expr}: {result:?}"));
                }
            }
            Ok(())
        },
    )
    .await;

    // Over 30 s: a few re-opens a minute (the pacing: 0.5 s, 1 s, 2 s ... up to 30 s), where an
    // unpaced client re-opened about 2,500 a minute against this fixture.
    tokio::time::sleep(Duration::from_secs(30)).await;
    let per_minute = prometheus
        .query(r#"sum(increase(mcp_readiness_stream_reopens_total{server="cut"}[30s])) * 2"#)
        .await
        .unwrap();
    let per_minute: f64 = per_minute
        .first()
        .and_then(|s| s["value"][1].as_str()?.parse().ok())
        .expect("a re-open rate");
    eprintln!("a server that cuts every event stream: {per_minute:.1} re-opens a minute");
    assert!(
        (1.0..=60.0).contains(&per_minute),
        "{per_minute} re-opens a minute"
    );
    // It stays ready and raises no alert: the storm is the proxy's or the server's problem,
    // shown on the dashboard, not paged (docs/oncall.md).
    let ready = prometheus
        .query(r#"mcp_readiness_server_state{server="cut",state="ready"} == 1"#)
        .await
        .unwrap();
    assert_eq!(ready.len(), 1, "{ready:?}");
    let alerts = alerts_by_server(&prometheus).await.unwrap();
    assert!(alerts.is_empty(), "{alerts:?}");
}
