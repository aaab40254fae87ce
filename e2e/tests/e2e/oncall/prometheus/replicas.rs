//! Replacing every `serve` replica one after the other keeps one continuous page per server, and
//! so does an exporter outage of the last one.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_every_serve_replica_one_after_the_other_then_losing_the_last_exporter_keeps_one_continuous_page_per_server()
 {
    // The mixin rendered with short `for`s and a 10 s blip window, so a rollout fits in a
    // minute; everything else as committed.
    let Some(rig) = Rig::new(
        "oncall-rollout",
        json!({
            "stateBlipWindow": "10s",
            "for": { "MCPServerUnauthenticated": "5s", "MCPServerAbsent": "5s" },
        }),
    ) else {
        return;
    };
    let (_http, port) = http_fixture(&rig.scratch, "rollout").await;
    // Every replica has the same servers: `authz` with a token the server refuses, `gone` whose
    // command does not exist.
    let servers = json!({ "authz": http_entry(port), "gone": absent_entry() });
    let addrs: Vec<String> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let start = |tag: &'static str, addr: &String| {
        start_serve_at(
            &rig.scratch,
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
        &rig.prometheus,
        &rig.scratch,
        &[("mcp-readiness", addrs.clone())],
        &rig.rules,
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
        all_firing(
            &now,
            watched
                .iter()
                .map(|(alert, server, _)| (alert.to_string(), server.to_string())),
        )
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
    rig.progress(format_args!("oncall rollout: both pages firing: {first:?}"));

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

    // 2. Replace a by c: stop a and take it out of discovery (as a rollout does), start c; wait
    // until c reports both and a's evidence expired.
    drop(a);
    prometheus.set_targets("mcp-readiness", &addrs[1..]);
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
    rig.progress("oncall rollout: a replaced by c");

    // 3. Stop b too (out of discovery): only c, which was not there when the pages started,
    // holds them now.
    drop(b);
    prometheus.set_targets("mcp-readiness", &addrs[2..]);
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
    let all = all_alerts(&prometheus).await.unwrap();
    let description = all
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
    rig.progress("oncall rollout: one continuous page per server through a, b -> c");

    // 4. c's exporter goes down but stays in discovery (`up` 0): its last verdicts hold, so
    // both pages keep firing with the same activeAt well past the 10 s blip window.
    drop(c);
    eventually("c down", Duration::from_secs(30), async || {
        let up = prometheus
            .query(&format!(r#"up{{instance="{}"}} == 0"#, addrs[2]))
            .await?;
        if up.is_empty() {
            Err("c still up".to_owned())
        } else {
            Ok(())
        }
    })
    .await;
    for _ in 0..40 {
        check(&prometheus).await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(for_state().await.unwrap(), active_since);
    rig.progress(format_args!(
        "oncall rollout: both pages held through c's exporter outage ({observations} observations)"
    ));
    drop(prometheus);
}

/// `(alertname, server) -> (state, activeAt)` of the warning-severity MCP alerts now.
async fn pages(
    prometheus: &Prometheus,
) -> Result<BTreeMap<(String, String), (String, String)>, String> {
    Ok(all_alerts(prometheus)
        .await?
        .iter()
        .filter(|a| a["labels"]["severity"] == "warning" && a["labels"]["server"].is_string())
        .map(|a| {
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
