//! Scrapes at scale: concurrent scrapes share one render, a scraper that accepts gzip gets it
//! gzipped (a real Prometheus among them, watched through a recording proxy), and a scraper that
//! asks for OpenMetrics gets the text format 0.0.4 with its own `Content-Type`.

use std::io::Read as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_readiness::Metrics;
use mcp_readiness::State;
use mcp_readiness::exporter::{self, CONTENT_TYPE};
use mcp_readiness::state::{ConnectionEvent, EventSink};
use mcp_readiness_fixtures::agent_service::AgentService;
use mcp_readiness_fixtures::clock::unix_now;
use mcp_readiness_fixtures::http::url_encode;
use mcp_readiness_fixtures::oauth::jwt;
use mcp_readiness_fixtures::oncall::{
    WRONG_TOKEN, absent_entry, fixture_entry, http_entry, http_fixture, start_serve,
};
use mcp_readiness_fixtures::process::Guard;
use mcp_readiness_fixtures::prometheus::{Prometheus, pushgateway_scraped, start_daemon};
use mcp_readiness_fixtures::tools::{prometheus, pushgateway};
use mcp_readiness_fixtures::{Scratch, eventually, repo};
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A recorder of `servers` ready servers with 20 tools each and their wait budgets.
fn fleet(servers: usize) -> Metrics {
    let metrics = Metrics::new();
    for i in 0..servers {
        let server = format!("server-{i:05}");
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: server.as_str().into(),
            state: State::Ready,
        });
        metrics.on_event(&ConnectionEvent::ToolsChanged {
            server: server.as_str().into(),
            count: 20,
        });
        metrics
            .server(&server)
            .set_wait_budget(Duration::from_secs(20));
    }
    metrics
}

/// One scrape of `/metrics` with extra header lines (`Name: value\r\n` each); the head (lower
/// case) and the raw body bytes.
async fn get(addr: &str, headers: &str) -> (String, Vec<u8>) {
    let headers: Vec<(&str, &str)> = headers
        .split("\r\n")
        .filter_map(|l| l.split_once(": "))
        .collect();
    let answer = mcp_readiness_fixtures::http::request(addr, "GET", "/metrics", &headers, b"")
        .await
        .unwrap();
    (answer.head.to_ascii_lowercase(), answer.body)
}

fn gunzip(body: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(body)
        .read_to_string(&mut text)
        .expect("a gzip body");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_that_accepts_gzip_gets_the_same_text_gzipped_to_under_a_tenth() {
    let server = exporter::serve(fleet(1_000), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    let (plain_head, plain) = get(&addr, "").await;
    assert!(plain_head.contains(" 200"), "{plain_head}");
    assert!(!plain_head.contains("content-encoding"), "{plain_head}");
    assert!(plain_head.contains("vary: accept-encoding"), "{plain_head}");
    let (head, zipped) = get(&addr, "Accept-Encoding: gzip, deflate\r\n").await;
    assert!(head.contains("content-encoding: gzip"), "{head}");
    assert!(
        head.contains(&format!(
            "content-type: {}",
            CONTENT_TYPE.to_ascii_lowercase()
        )),
        "{head}"
    );
    let text = String::from_utf8(plain).unwrap();
    assert_eq!(gunzip(&zipped), text);
    let ratio = zipped.len() as f64 / text.len() as f64;
    eprintln!(
        "1,000 servers: text {} bytes, gzip {} bytes ({:.1} %)",
        text.len(),
        zipped.len(),
        ratio * 100.0
    );
    assert!(ratio < 0.10, "gzip is {:.1} % of the text", ratio * 100.0);
    let (refused, _) = get(&addr, "Accept-Encoding: gzip;q=0, br\r\n").await;
    assert!(!refused.contains("content-encoding"), "{refused}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_that_asks_for_openmetrics_gets_text_0_0_4_with_its_content_type() {
    let server = exporter::serve(fleet(3), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    for accept in [
        "application/openmetrics-text; version=1.0.0",
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    ] {
        let (head, body) = get(&addr, &format!("Accept: {accept}\r\n")).await;
        assert!(head.contains(" 200"), "{accept}: {head}");
        assert!(
            head.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
            "{accept}: {head}"
        );
        let body = String::from_utf8(body).unwrap();
        assert!(!body.contains("# EOF"), "text 0.0.4 has no EOF marker");
        assert!(
            body.contains("mcp_readiness_server_state{server=\"server-00002\",state=\"ready\"} 1")
        );
    }
    server.shutdown().await.unwrap();
}

/// A collector that counts how often the registry is gathered: once per render.
struct GatherCount(Arc<AtomicUsize>, Vec<Desc>);

impl Collector for GatherCount {
    fn desc(&self) -> Vec<&Desc> {
        self.1.iter().collect()
    }
    fn collect(&self) -> Vec<MetricFamily> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Vec::new()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_scrapes_share_one_render() {
    let metrics = fleet(5_000);
    let renders = Arc::new(AtomicUsize::new(0));
    metrics
        .registry()
        .register(Box::new(GatherCount(renders.clone(), Vec::new())))
        .unwrap();
    let server = exporter::serve(metrics, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    let scrapes: Vec<_> = (0..20)
        .map(|i| {
            let addr = addr.clone();
            tokio::spawn(async move {
                let gzip = if i % 2 == 0 {
                    "Accept-Encoding: gzip\r\n"
                } else {
                    ""
                };
                get(&addr, gzip).await
            })
        })
        .collect();
    let mut texts = Vec::new();
    for scrape in scrapes {
        let (head, body) = scrape.await.unwrap();
        texts.push(if head.contains("content-encoding: gzip") {
            gunzip(&body)
        } else {
            String::from_utf8(body).unwrap()
        });
    }
    let renders = renders.load(Ordering::SeqCst);
    eprintln!("20 concurrent scrapes of 5,000 servers: {renders} render(s)");
    // The scrapes connect over a few milliseconds; a render of 5,000 servers takes longer, so
    // nearly all of them join the first (never 20 renders, as before).
    assert!(renders <= 3, "{renders} renders for 20 concurrent scrapes");
    assert!(texts.iter().all(|t| t == &texts[0] && t.len() > 1_000_000));
    server.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------------

/// Relays `from` to `to`, keeping the head of the first chunk in `seen`.
async fn relay(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
) {
    let mut buf = vec![0; 64 * 1024];
    let mut first = true;
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 || to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        if first {
            first = false;
            let text = String::from_utf8_lossy(&buf[..n.min(2048)]);
            let head = text.split("\r\n\r\n").next().unwrap_or("").to_owned();
            seen.lock().unwrap().push(head.to_ascii_lowercase());
        }
    }
    let _ = to.shutdown().await;
}

/// A TCP proxy on loopback in front of `upstream` that keeps the head of every request and
/// answer it relays, to see what a real scraper asked for and got.
async fn recording_proxy(upstream: String) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let heads: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                continue;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::spawn(relay(client_read, server_write, seen.clone()));
            tokio::spawn(relay(server_read, client_write, seen.clone()));
        }
    });
    (addr, heads)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_prometheus_scrapes_the_gzipped_exposition_and_stores_every_series() {
    let Some(binary) = prometheus() else {
        return;
    };
    let scratch = Scratch::new("scale-prometheus");
    let servers = 200;
    let server = exporter::serve(fleet(servers), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (proxy, heads) = recording_proxy(server.local_addr().to_string()).await;
    let rules = vec![repo().join("alerts/rules.yml")];
    let prometheus = Prometheus::start(&binary, &scratch, &[("scale", vec![proxy])], &rules).await;
    eventually(
        "Prometheus to store the fleet",
        Duration::from_secs(60),
        async || {
            let stored = prometheus
                .query("count(mcp_readiness_server_state{job=\"scale\",state=\"ready\"} == 1)")
                .await
                .unwrap_or_default();
            let fleet_view = prometheus
                .query("count(server:mcp_readiness_server_state:worst)")
                .await
                .unwrap_or_default();
            let count = |v: &[serde_json::Value]| v.first().map(|s| s["value"][1].clone());
            if count(&stored) == Some(serde_json::json!(servers.to_string()))
                && count(&fleet_view).is_some()
            {
                return Ok(());
            }
            Err(format!(
                "Prometheus did not store the fleet: {stored:?} {fleet_view:?}\n{}",
                prometheus.log()
            ))
        },
    )
    .await;
    let heads = heads.lock().unwrap().clone();
    let asked = heads
        .iter()
        .find(|h| h.starts_with("get /metrics"))
        .expect("Prometheus's request");
    assert!(asked.contains("accept-encoding: gzip"), "{asked}");
    let answered = heads
        .iter()
        .find(|h| h.starts_with("http/1.1 200"))
        .expect("the answer");
    assert!(answered.contains("content-encoding: gzip"), "{answered}");
    server.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// Short runs push: `check --push` to Debian's Pushgateway, scraped by a real Prometheus that loads
// the shipped rules and alerts.

/// An instant query's result vector, through the raw HTTP helper.
async fn query(addr: &str, expr: &str) -> Vec<serde_json::Value> {
    let target = format!("/api/v1/query?query={}", url_encode(expr));
    let Ok(answer) = mcp_readiness_fixtures::http::get(addr, &target).await else {
        return Vec::new();
    };
    serde_json::from_slice::<serde_json::Value>(&answer.body)
        .ok()
        .and_then(|v| v["data"]["result"].as_array().cloned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_pushes_its_run_to_a_pushgateway_that_prometheus_scrapes_with_the_shipped_rules() {
    let (Some(prometheus), Some(gateway)) = (prometheus(), pushgateway()) else {
        return;
    };
    let scratch = Scratch::new("scale-push");
    let (_gateway, gateway_addr, central) =
        pushgateway_scraped(&prometheus, &gateway, &scratch).await;
    let addr = central.addr.clone();

    let config = scratch.path("mcp.json");
    let body = serde_json::json!({
        "mcpServers": {
            "files": fixture_entry(&[]),
            "gone": { "command": scratch.path("no-such-server").to_string_lossy(), "args": [] },
        },
        "readiness": { "budget": "10s", "poll": "100ms", "ping": "off" },
    });
    std::fs::write(&config, body.to_string()).unwrap();
    let output = tokio::process::Command::new(mcp_readiness_fixtures::cli())
        .arg("check")
        .arg("--config")
        .arg(&config)
        .args(["--json", "--push", &format!("http://{gateway_addr}")])
        .args(["--push-job", "preflight", "--push-label", "team=ops/oncall"])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("Pushgateway"), "the push failed: {stderr}");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the run record");
    assert_eq!(record["absent"], serde_json::json!(["gone"]));

    let value = |v: &[serde_json::Value]| v.first().map(|s| s["value"][1].clone());
    eventually("Prometheus to get the pushed run", Duration::from_secs(60), async || {
        let ready = query(
            &addr,
            "mcp_readiness_run_steps{job=\"preflight\",team=\"ops/oncall\",state=\"ready\"}",
        )
        .await;
        let absent = query(
            &addr,
            "mcp_readiness_run_steps{job=\"preflight\",state=\"absent\"}",
        )
        .await;
        let servers = query(
            &addr,
            "mcp_readiness_run_servers{job=\"preflight\",list=\"absent\"}",
        )
        .await;
        // The fleet recording rules evaluate on the pushed states too.
        let worst = query(
            &addr,
            "server:mcp_readiness_server_state:worst{job=\"preflight\",server=\"gone\",state=\"absent\"}",
        )
        .await;
        if value(&ready) == Some(serde_json::json!("1"))
            && value(&absent) == Some(serde_json::json!("1"))
            && value(&servers) == Some(serde_json::json!("1"))
            && value(&worst) == Some(serde_json::json!("1"))
        {
            return Ok(());
        }
        Err(format!(
            "Prometheus did not get the pushed run: ready {ready:?} absent {absent:?} servers {servers:?} worst {worst:?}\n{}",
            central.log()
        ))
    })
    .await;
}

/// The forecast end to end: `check --next-run-in 6h --push` against a server whose bearer JWT
/// expires in 2 h pushes to Debian's Pushgateway; a real Prometheus scrapes the gateway with the
/// shipped rules and `MCPCredentialExpiresBeforeNextRun` fires (after its `for: 1m`), labelled
/// with the server and `action="reauthorize"`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_forecast_makes_prometheus_fire_the_credential_expires_before_next_run_alert() {
    let (Some(prometheus), Some(gateway)) = (prometheus(), pushgateway()) else {
        return;
    };
    let scratch = Scratch::new("scale-push-forecast");
    let (_gateway, gateway_addr, central) =
        pushgateway_scraped(&prometheus, &gateway, &scratch).await;
    let addr = central.addr.clone();
    let token =
        jwt(&serde_json::json!({ "sub": "svc-pushed-forecast-12", "exp": unix_now() + 2 * 3600 }));
    let (_http, port) = mcp_readiness_fixtures::configure::http_fixture(&scratch, &token).await;
    let config = scratch.path("mcp.json");
    let body = serde_json::json!({
        "mcpServers": {
            "jwt": {
                "type": "http",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": { "Authorization": format!("Bearer {token}") }
            },
        },
        "readiness": { "budget": "10s", "poll": "100ms", "ping": "off" },
    });
    std::fs::write(&config, body.to_string()).unwrap();
    let output = tokio::process::Command::new(mcp_readiness_fixtures::cli())
        .arg("check")
        .arg("--config")
        .arg(&config)
        .args(["--json", "--next-run-in", "6h"])
        .args([
            "--push",
            &format!("http://{gateway_addr}"),
            "--push-job",
            "nightly",
        ])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Pushgateway"), "the push failed: {stderr}");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the run record");
    assert_eq!(
        record["expiring_before_next_run"],
        serde_json::json!(["jwt"])
    );
    // The gateway holds what was pushed: the next run's time and the credential's expiry.
    let held = mcp_readiness_fixtures::http::get(&gateway_addr, "/metrics")
        .await
        .unwrap()
        .text();
    assert!(
        held.lines().any(
            |l| l.starts_with("mcp_readiness_run_next_timestamp_seconds{")
                && l.contains("job=\"nightly\"")
        ),
        "{held}"
    );
    assert!(!held.contains(&token), "the JWT on the gateway");

    let started = tokio::time::Instant::now();
    let alert = "ALERTS{alertname=\"MCPCredentialExpiresBeforeNextRun\",job=\"nightly\",server=\"jwt\",action=\"reauthorize\",severity=\"critical\"";
    // Pending first (the expression holds on the scraped series), firing after its `for: 1m`.
    for (state, within) in [("pending", 30), ("firing", 100)] {
        let expr = format!("{alert},alertstate=\"{state}\"}}");
        eventually(
            &format!("MCPCredentialExpiresBeforeNextRun {state}"),
            Duration::from_secs(within),
            async || {
                let found = query(&addr, &expr).await;
                if found.is_empty() {
                    return Err(format!("not {state} yet\n{}", central.log()));
                }
                Ok(())
            },
        )
        .await;
    }
    assert!(
        started.elapsed() >= Duration::from_secs(55),
        "fired only after its `for`: {:?}",
        started.elapsed()
    );
}

// ---------------------------------------------------------------------------------------------
// A two-tier Prometheus: an agent-mode Prometheus next to the exporters remote-writes to a central
// one that loads alerts/; the fleet rules and a state alert run on the central side.

/// A Prometheus in `mode` (a flag) with `yml` as its configuration and its storage (`tsdb` or
/// `agent`) in `dir` of the scratch; waits until it is ready.
async fn prometheus_with(
    binary: &std::path::Path,
    scratch: &Scratch,
    tag: &str,
    yml: String,
    mode: &str,
    (storage, dir): (&str, &str),
) -> (Guard, String) {
    let config = scratch.path(&format!("{tag}.yml"));
    std::fs::write(&config, yml).unwrap();
    let flags = |addr: &str| {
        vec![
            format!("--config.file={}", config.display()),
            format!("--web.listen-address={addr}"),
            mode.to_string(),
            format!("--storage.{storage}.path={}", scratch.path(dir).display()),
        ]
    };
    start_daemon(
        scratch,
        tag,
        binary,
        &flags,
        "/-/ready",
        Duration::from_secs(60),
    )
    .await
}

/// The job names of docs/scale.md's agent-mode example (`agent.yml`), in order: the test
/// scrapes `serve` and the agent service under them.
fn documented_agent_jobs() -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/scale.md")).unwrap();
    let block = doc
        .split("# agent.yml")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/scale.md has the agent.yml example");
    block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- job_name: "))
        .map(|job| job.trim().to_owned())
        .collect()
}

/// The `job` matcher of the exporter alerts (`_config.exporterSelector`) in alerts/alerts.yml.
fn exporter_selector() -> String {
    let alerts = std::fs::read_to_string(repo().join("alerts/alerts.yml")).unwrap();
    let (_, rest) = alerts
        .split_once("up{job=~\"")
        .expect("alerts.yml selects exporter jobs");
    rest.split_once("\"}").unwrap().0.to_owned()
}

fn count(result: &[serde_json::Value]) -> f64 {
    result
        .first()
        .and_then(|s| s["value"][1].as_str()?.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_mode_prometheus_remote_writes_to_a_central_one_where_the_fleet_rules_and_alerts_run()
 {
    let Some(binary) = prometheus() else {
        return;
    };
    // The documented example's jobs are exporter jobs: the exporter alerts see their targets
    // even before a first scrape (MCPReadinessExporterDown, not a false
    // MCPReadinessExporterAbsent "no exporter is discovered").
    let jobs = documented_agent_jobs();
    let selector = exporter_selector();
    assert_eq!(selector, "mcp-readiness.*");
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(
        jobs.iter().all(|j| j.starts_with("mcp-readiness")),
        "docs/scale.md's agent.yml jobs {jobs:?} do not match job=~\"{selector}\""
    );
    let (serve_job, agent_job) = (jobs[0].as_str(), jobs[1].as_str());
    let scratch = Scratch::new("two-tier");
    let (_http, port) = http_fixture(&scratch, "tier").await;
    let servers = serde_json::json!({
        "files": fixture_entry(&[]),
        "github": http_entry(port),
        "gone": absent_entry(),
    });
    let (_serve, serve_addr) = start_serve(
        &scratch,
        "tier",
        servers,
        serde_json::json!({ "ping": "1s" }),
        WRONG_TOKEN,
    )
    .await;
    let agent_service = AgentService::start().await;

    let rules: String = ["rules.yml", "alerts.yml"]
        .iter()
        .map(|f| format!("  - '{}'\n", repo().join("alerts").join(f).display()))
        .collect();
    let central_yml =
        format!("global:\n  evaluation_interval: 1s\nrule_files:\n{rules}scrape_configs: []\n");
    let (_central, central) = prometheus_with(
        &binary,
        &scratch,
        "central",
        central_yml,
        "--web.enable-remote-write-receiver",
        ("tsdb", "central-tsdb"),
    )
    .await;
    let agent_yml = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  external_labels:\n    cluster: edge-1\n\
         scrape_configs:\n  - job_name: {serve_job}\n    static_configs:\n      - targets: ['{serve_addr}']\n\
         \x20 - job_name: {agent_job}\n    static_configs:\n      - targets: ['{}']\n\
         remote_write:\n  - url: http://{central}/api/v1/write\n    queue_config:\n      batch_send_deadline: 1s\n",
        agent_service.addr
    );
    let (_agent, _agent_addr) = prometheus_with(
        &binary,
        &scratch,
        "agent",
        agent_yml,
        "--enable-feature=agent",
        ("agent", "agent-wal"),
    )
    .await;

    eventually("the central Prometheus to get the fleet view and the alert", Duration::from_secs(90), async || {
        // The fleet rules keep the group labels: the agent's external label `cluster` is on
        // the fleet-view series as on the alert.
        let worst = query(
            &central,
            &format!("server:mcp_readiness_server_state:worst{{job=\"{serve_job}\",server=\"github\",state=\"unauthenticated\",cluster=\"edge-1\"}}"),
        )
        .await;
        let by_state = query(
            &central,
            &format!("state:mcp_readiness_server_state:servers{{job=\"{agent_job}\",state=\"absent\",cluster=\"edge-1\"}}"),
        )
        .await;
        let alert = query(
            &central,
            &format!("ALERTS{{alertname=\"MCPServerUnauthenticated\",job=\"{serve_job}\",server=\"github\",cluster=\"edge-1\"}}"),
        )
        .await;
        if count(&worst) == 1.0 && count(&by_state) >= 1.0 && !alert.is_empty() {
            return Ok(());
        }
        Err(format!(
            "the central Prometheus did not get the fleet view and the alert: worst {worst:?} by_state {by_state:?} alert {alert:?}"
        ))
    })
    .await;
    // Remote write sends in shards, each on its own batch deadline, so one series (a target's
    // `up`, one histogram) can land a batch after the rules above already saw the others. Every
    // count below is therefore read until it holds, and the wait fails with the last figures.
    let costs = eventually(
        "every remote-written series the cost figures count",
        Duration::from_secs(30),
        async || {
            let costs = CentralCosts::read(&central, &selector, serve_job, agent_job).await;
            match costs.mismatches() {
                mismatches if mismatches.is_empty() => Ok(costs),
                mismatches => Err(format!("{} in {costs:?}", mismatches.join("; "))),
            }
        },
    )
    .await;
    eprintln!(
        "central series per server: ready {}, failing (spawn) {}, unauthenticated {}, \
         ready and called (2 tools) {}; {} raw mcp_* series; fleet view: {} series (one server: {}); \
         called: {} verdict states, {} tool outcomes, {} operation histograms, {} absent tools",
        costs.ready,
        costs.failing,
        costs.unauthenticated,
        costs.called,
        costs.raw,
        costs.fleet,
        costs.fleet_per_server,
        costs.verdicts,
        costs.outcomes,
        costs.operations,
        costs.absent_tools,
    );
    agent_service.stop().await;
}

/// What the central Prometheus holds of the two-tier fleet, read in one pass (see
/// docs/scale.md, "What the series cost").
#[derive(Debug)]
struct CentralCosts {
    /// `count(up{job=~selector})`: both remote-written targets match the exporter selector.
    selected: f64,
    ready: f64,
    failing: f64,
    unauthenticated: f64,
    called: f64,
    raw: f64,
    fleet: f64,
    fleet_per_server: f64,
    verdicts: f64,
    outcomes: f64,
    operations: f64,
    absent_tools: f64,
}

impl CentralCosts {
    async fn read(central: &str, selector: &str, serve_job: &str, agent_job: &str) -> CentralCosts {
        let number = async |expr: String| count(&query(central, &expr).await);
        let series_of = async |job: &str, server: &str| {
            number(format!(
                "count({{__name__=~\"mcp_.+\",job=\"{job}\",server=\"{server}\"}})"
            ))
            .await
        };
        let called_files = format!("{{job=\"{agent_job}\",server=\"files\"}}");
        CentralCosts {
            selected: number(format!("count(up{{job=~\"{selector}\"}})")).await,
            ready: series_of(serve_job, "files").await,
            failing: series_of(serve_job, "gone").await,
            unauthenticated: series_of(serve_job, "github").await,
            called: series_of(agent_job, "files").await,
            raw: number("count({__name__=~\"mcp_.+\"})".into()).await,
            fleet: number("count({__name__=~\"server:mcp_readiness_server_state:worst|state:mcp_readiness_server_state:servers\"})".into()).await,
            fleet_per_server: number(format!(
                "count(server:mcp_readiness_server_state:worst{{server=\"github\",job=\"{serve_job}\"}})"
            ))
            .await,
            verdicts: number(format!(
                "count(count by (state) (mcp_readiness_resolve_wait_seconds_count{called_files}))"
            ))
            .await,
            outcomes: number(format!("count(mcp_readiness_tool_calls_total{called_files})")).await,
            operations: number(format!(
                "count(mcp_client_operation_duration_seconds_count{called_files})"
            ))
            .await,
            absent_tools: number(format!("count(mcp_readiness_tool_absent_total{called_files})"))
                .await,
        }
    }

    /// Each way these figures differ from what docs/scale.md states; empty when they hold.
    fn mismatches(&self) -> Vec<String> {
        // Called through the layer: a resolve-wait histogram (21) per verdict state it resolved
        // to, and per tool one call counter per outcome and an operation histogram (17) per error
        // type, plus the counter of each tool it does not offer.
        let called = 48.0
            + 21.0 * self.verdicts
            + self.outcomes
            + 17.0 * self.operations
            + self.absent_tools;
        let checks = [
            (
                self.selected == 2.0,
                "up of both targets matches the exporter selector",
            ),
            (self.ready == 48.0, "a ready server costs 48 series"),
            (
                self.failing == 69.0,
                "a server whose connects fail costs 69 series (68 and its next attempt's time)",
            ),
            (
                self.unauthenticated == 68.0,
                "an unauthenticated server costs 68 series",
            ),
            (
                self.verdicts >= 1.0
                    && self.outcomes >= 2.0
                    && self.operations >= 2.0
                    && self.absent_tools >= 1.0,
                "the called server has a verdict, two outcomes, two operations and an absent tool",
            ),
            (
                self.called == called,
                "a ready server called through the layer costs 48 + its calls' series",
            ),
            (
                self.fleet < self.raw && self.fleet_per_server == 4.0,
                "the fleet view is smaller than the raw series, 4 per server",
            ),
        ];
        checks
            .into_iter()
            .filter(|(holds, _)| !holds)
            .map(|(_, what)| what.to_owned())
            .collect()
    }
}
