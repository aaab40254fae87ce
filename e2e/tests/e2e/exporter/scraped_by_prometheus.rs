//! A real Prometheus server (Debian's package) scraping the exporter sees the ready server.

use super::*;

#[tokio::test]
async fn a_real_prometheus_scrapes_the_exporter_and_sees_the_ready_server() {
    let Some(prometheus) = tools::prometheus() else {
        return;
    };
    let scratch = Scratch::new("prometheus");
    let config = write_config(
        &scratch,
        "serve.json",
        json!({
            "ready": stdio_fixture(&scratch, "ready", &[]),
            "gone": absent_entry(),
        }),
        json!({}),
    );
    let serve = Serve::start(&scratch, &config, SERVE_ENV).await;
    settle(
        &serve,
        &[("ready", "ready"), ("gone", "absent")],
        Duration::from_secs(20),
    )
    .await;

    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let prometheus_yml = scratch.path("prometheus.yml");
    std::fs::write(
        &prometheus_yml,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: mcp-readiness\n    static_configs:\n      \
             - targets: ['{}']\n",
            serve.addr
        ),
    )
    .unwrap();
    let listen = format!("127.0.0.1:{port}");
    let prometheus_guard = Guard::spawn(
        "prometheus",
        Command::new(prometheus)
            .arg(format!("--config.file={}", prometheus_yml.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                scratch.path("tsdb").display()
            ))
            .arg(format!("--web.listen-address={listen}"))
            .stdout(std::fs::File::create(scratch.path("prometheus.out")).unwrap())
            .stderr(std::fs::File::create(scratch.path("prometheus.err")).unwrap()),
    );

    let query = "/api/v1/query?query=mcp_readiness_server_state%7Bstate%3D%22ready%22%7D";
    let start = Instant::now();
    let scraped = async || {
        // Not listening yet, or 503 while its storage starts: ask again.
        let answer = mcp_readiness_fixtures::http::get(&listen, query)
            .await
            .ok()
            .and_then(|a| serde_json::from_slice::<Value>(&a.body).ok());
        let results = answer
            .as_ref()
            .and_then(|a| a["data"]["result"].as_array().cloned())
            .unwrap_or_default();
        if results.len() >= 2 {
            return Ok(results);
        }
        Err(format!("{answer:?}\n{}", scratch.read("prometheus.err")))
    };
    let results = eventually(
        "Prometheus to scrape the exporter",
        Duration::from_secs(30),
        scraped,
    )
    .await;
    eprintln!("prometheus: series visible after {:?}", start.elapsed());
    let value_of = |server: &str| {
        results
            .iter()
            .find(|r| r["metric"]["server"] == server)
            .and_then(|r| r["value"][1].as_str())
            .unwrap_or_else(|| panic!("no series for {server}: {results:?}"))
            .to_owned()
    };
    assert_eq!(value_of("ready"), "1");
    assert_eq!(value_of("gone"), "0");
    assert!(
        results.iter().all(|r| r["metric"]["job"] == "mcp-readiness"
            && r["metric"]["__name__"] == "mcp_readiness_server_state"),
        "{results:?}"
    );
    drop(prometheus_guard);
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    let status = serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_eq!(status.code(), Some(0), "{}", serve.stderr());
    assert_all_gone(
        "after the test",
        &started(&scratch, "ready"),
        Duration::from_secs(5),
    )
    .await;
}
