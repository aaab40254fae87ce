//! Several `serve` processes on one Prometheus roll up per server, and a lost one raises
//! `MCPReadinessExporterDown`.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_serve_processes_on_one_prometheus_roll_up_per_server_and_a_lost_one_raises_exporter_down()
 {
    // The committed mixin with the budget advisor every second (3 minutes as committed).
    let Some(rig) = Rig::new("oncall-fleet", json!({ "advisorInterval": "1s" })) else {
        return;
    };
    let (_http, port) = http_fixture(&rig.scratch, "fleet").await;
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
        replicas.push(start_serve(&rig.scratch, tag, servers, json!({}), token).await);
    }
    let targets: Vec<String> = replicas.iter().map(|(_, addr)| addr.clone()).collect();
    let prometheus = Prometheus::start(
        &rig.prometheus,
        &rig.scratch,
        &[("mcp-readiness", targets.clone())],
        &rig.rules,
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
            .query(r#"sum by (server, state) (instance_server:mcp_readiness_server_state:last3m{server="files",state="ready"})"#)
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
    rig.progress(format_args!("oncall fleet: rolled up: {worst:?}"));

    // How many replicas see each state of `github`: 1 unauthenticated, 2 ready.
    let github: BTreeMap<String, f64> = prometheus
        .query(r#"sum by (server, state) (instance_server:mcp_readiness_server_state:last3m{server="github"})"#)
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
    rig.progress("oncall fleet: exporter down seen");
    drop(prometheus);
}
