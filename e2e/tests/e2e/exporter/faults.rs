//! The exporter under faults: every scrape during reload churn is one-hot, half-sent requests
//! are closed by the header timeout, idle clients cannot starve child restarts under a small
//! file-descriptor limit, a non-loopback listen address is warned about, and a configuration
//! path that is a FIFO is refused without blocking (`check` exits 2, `serve` refuses the reload).
//!
//! `MCP_READINESS_SOAK=1` lengthens the churn test (see docs/guarantees.md).

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mcp_readiness_fixtures::configure::{
    scratch_with_fixture, started, stdio_fixture, write_config,
};
use mcp_readiness_fixtures::eventually;
use mcp_readiness_fixtures::exposition::assert_one_hot;
use mcp_readiness_fixtures::process::{Guard, Reaper, signal};
use mcp_readiness_fixtures::run::soak;
use mcp_readiness_fixtures::serve::Serve;
use mcp_readiness_fixtures::{Scratch, cli};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scrape_during_reload_churn_is_one_hot_and_removed_servers_leave_no_series() {
    let scratch = Scratch::new("churn");
    let reloads = if soak() { 2_000 } else { 100 };
    let set = |names: &[&str]| {
        let mut servers = serde_json::Map::new();
        for name in names {
            servers.insert((*name).into(), stdio_fixture(&scratch, name, &[]));
        }
        servers.insert(
            "gone".into(),
            json!({ "command": "/nonexistent/mcp-readiness-test/none" }),
        );
        Value::Object(servers)
    };
    let readiness = json!({ "cooldown": "1s", "ping": "off" });
    let a = serde_json::to_string(
        &json!({ "mcpServers": set(&["a1", "a2", "both"]), "readiness": readiness }),
    )
    .unwrap();
    let b = serde_json::to_string(
        &json!({ "mcpServers": set(&["b1", "b2", "both"]), "readiness": readiness }),
    )
    .unwrap();
    let config = scratch.path("mcp.json");
    std::fs::write(&config, &a).unwrap();
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "warn")]).await;

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let scrapes = {
        let done = done.clone();
        let addr = serve.addr.clone();
        tokio::spawn(async move {
            let mut n = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let body = mcp_readiness_fixtures::http::get(&addr, "/metrics")
                    .await
                    .unwrap_or_else(|e| panic!("{e}"))
                    .text();
                assert_one_hot(&body, &format!("scrape {n}"));
                n += 1;
            }
            n
        })
    };
    for i in 0..reloads {
        std::fs::write(&config, if i % 2 == 0 { &b } else { &a }).unwrap();
        signal(serve.guard.pid(), "HUP");
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let scraped = scrapes.await.expect("every scrape was one-hot");
    // The last file written was `a` when `reloads` is even.
    let last = if reloads % 2 == 0 {
        ["a1", "a2"]
    } else {
        ["b1", "b2"]
    };
    let body = serve
        .scrape_until(Duration::from_secs(30), |body| {
            let servers: BTreeSet<String> = body
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| {
                    let at = l.find("server=\"")? + 8;
                    Some(l[at..][..l[at..].find('"')?].to_owned())
                })
                .collect();
            let want: BTreeSet<String> = last
                .iter()
                .chain(&["both", "gone"])
                .map(|s| s.to_string())
                .collect();
            servers == want
        })
        .await;
    assert_one_hot(&body, "after the churn");
    eprintln!("{reloads} reloads, {scraped} scrapes, all one-hot");
    assert!(scraped > 10, "only {scraped} scrapes ran during the churn");
}

/// Opens `n` connections that send half a request and never finish it.
async fn half_sent(addr: &str, n: usize) -> Vec<tokio::net::TcpStream> {
    let mut streams = Vec::new();
    for _ in 0..n {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write half a request");
        streams.push(stream);
    }
    streams
}

#[tokio::test]
async fn half_sent_requests_are_closed_by_the_header_timeout_and_scrapes_keep_working() {
    let (scratch, config) = scratch_with_fixture("idle", "one", &[], json!({}));
    let serve = Serve::start(&scratch, &config, &[]).await;
    let mut idle = half_sent(&serve.addr, 60).await;
    // Scrapes are served meanwhile.
    let body = serve.metrics().await;
    assert!(body.contains("mcp_readiness_build_info"), "{body}");
    // Every half-sent request is closed by the server within the header-read timeout (5 s).
    let start = Instant::now();
    for (i, stream) in idle.iter_mut().enumerate() {
        let mut buf = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(15), stream.read_to_end(&mut buf)).await;
        assert!(
            closed.is_ok(),
            "connection {i} was still open {:?} after sending half a request",
            start.elapsed()
        );
    }
    eprintln!("60 half-sent requests closed after {:?}", start.elapsed());
    assert!(
        start.elapsed() < Duration::from_secs(9),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn with_few_file_descriptors_idle_clients_cannot_starve_child_restarts() {
    let (scratch, config) = scratch_with_fixture("fd-limit", "one", &[], json!({ "ping": "off" }));
    let (_serve, addr, err) =
        mcp_readiness_fixtures::serve::serve_under(&scratch, "ulimit -n 64 &&", &config).await;
    let first = eventually("the child to start", Duration::from_secs(20), async || {
        started(&scratch, "one").first().copied()
    })
    .await;
    let _idle = half_sent(&addr, 60).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    signal(first, "KILL");
    let _cleanup = Reaper(vec![first]);
    let restarted = eventually(
        "the killed child to be restarted while 60 idle clients are connected",
        Duration::from_secs(4),
        async || {
            let pids = started(&scratch, "one");
            if pids.len() >= 2 {
                return Ok(pids);
            }
            let stderr = std::fs::read_to_string(&err).unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(format!("stderr:\n{}", tail.join("\n")))
        },
    )
    .await;
    let _restarted = Reaper(restarted);
}

#[tokio::test]
async fn listening_on_a_non_loopback_address_logs_a_warning() {
    let scratch = Scratch::new("wildcard");
    let config = write_config(&scratch, "mcp.json", json!({}), json!({}));
    let out = scratch.path("serve.out");
    let err = scratch.path("serve.err");
    let child = Command::new(cli())
        .args(["serve", "--listen", "0.0.0.0:0", "--config"])
        .arg(&config)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start serve");
    let mut serve = Guard::adopt("serve", child);
    eventually("serve's address", Duration::from_secs(20), async || {
        std::fs::read_to_string(&out)
            .ok()?
            .contains("listening on")
            .then_some(())
    })
    .await;
    signal(serve.pid(), "TERM");
    serve.exit_within(Duration::from_secs(10)).await;
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        stderr.contains("WARN") && stderr.contains("other machines can reach"),
        "{stderr}"
    );
    // The start-up line names its own paths: log redaction leaves them alone.
    assert!(
        stderr.contains("serving /metrics and /status on 0.0.0.0:")
            && !stderr.contains("[redacted]"),
        "{stderr}"
    );
}

/// Makes a FIFO (named pipe) at `path`, with no writer.
fn mkfifo(path: &std::path::Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[tokio::test]
async fn check_on_a_fifo_with_no_writer_exits_2_at_once_naming_it() {
    let scratch = Scratch::new("fifo-check");
    let fifo = scratch.path("mcp.json");
    mkfifo(&fifo);
    let started = Instant::now();
    let run = tokio::time::timeout(
        Duration::from_secs(10),
        mcp_readiness_fixtures::run::run(&["check", "--config", fifo.to_str().unwrap()], &[]),
    )
    .await
    .expect("check on a FIFO returned instead of blocking");
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("is a FIFO (named pipe), not a regular file"),
        "{}",
        run.stderr
    );
    eprintln!("check on a FIFO: exit 2 after {:?}", started.elapsed());
}

#[tokio::test]
async fn a_sighup_while_the_config_is_a_fifo_is_a_refused_reload_and_serve_keeps_serving() {
    let (scratch, config) = scratch_with_fixture("fifo-reload", "one", &[], json!({}));
    let mut serve = Serve::start(&scratch, &config, &[]).await;
    serve
        .scrape_until(Duration::from_secs(20), |body| {
            body.contains("mcp_readiness_config_last_reload_successful 1")
                && body.contains(r#"mcp_readiness_server_state{server="one",state="ready"} 1"#)
        })
        .await;
    let child = started(&scratch, "one");
    let _cleanup = Reaper(child.clone());

    std::fs::remove_file(&config).unwrap();
    mkfifo(&config);
    signal(serve.guard.pid(), "HUP");
    let body = serve
        .scrape_until(Duration::from_secs(10), |body| {
            body.contains("mcp_readiness_config_last_reload_successful 0")
        })
        .await;
    assert!(
        body.contains(r#"mcp_readiness_server_state{server="one",state="ready"} 1"#),
        "the running configuration is kept:\n{body}"
    );
    assert!(
        serve.stderr().contains("reload refused")
            && serve
                .stderr()
                .contains("is a FIFO (named pipe), not a regular file"),
        "{}",
        serve.stderr()
    );
    // Still answering scrapes and signals.
    let _ = serve.metrics().await;
    signal(serve.guard.pid(), "TERM");
    let status = serve.guard.exit_within(Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(0), "{}", serve.stderr());
}

/// A reload with entries this build cannot serve (a URL that is not http(s), a header rmcp sets
/// itself) applies the rest of the file, as start-up does: those servers read `absent` with a
/// reason naming the key, the server the reload adds starts, the running one is kept, and
/// `mcp_readiness_config_last_reload_successful` stays 1. It reads 0 for a file that does not
/// parse, which changes nothing.
#[tokio::test]
async fn a_reload_with_entries_this_build_cannot_serve_applies_the_rest_and_those_servers_read_absent()
 {
    let scratch = Scratch::new("unservable-reload");
    let one = stdio_fixture(&scratch, "one", &[]);
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "one": one.clone() }),
        json!({}),
    );
    let mut serve = Serve::start(&scratch, &config, &[]).await;
    let state = |server: &str, state: &str| {
        format!("mcp_readiness_server_state{{server=\"{server}\",state=\"{state}\"}} 1")
    };
    serve
        .scrape_until(Duration::from_secs(20), |body| {
            body.contains("mcp_readiness_config_last_reload_successful 1")
                && body.contains(&state("one", "ready"))
        })
        .await;
    let _cleanup = Reaper(started(&scratch, "one"));

    write_config(
        &scratch,
        "mcp.json",
        json!({
            "one": one,
            "two": stdio_fixture(&scratch, "two", &[]),
            "wiki": { "type": "http", "url": "ftp://wiki.example/mcp" },
            "docs": { "url": "http://127.0.0.1:9/mcp", "headers": { "Accept": "text/plain" } },
        }),
        json!({}),
    );
    signal(serve.guard.pid(), "HUP");
    let body = serve
        .scrape_until(Duration::from_secs(20), |body| {
            body.contains(&state("two", "ready"))
                && body.contains(&state("wiki", "absent"))
                && body.contains(&state("docs", "absent"))
        })
        .await;
    let _cleanup_two = Reaper(started(&scratch, "two"));
    assert!(
        body.contains("mcp_readiness_config_last_reload_successful 1")
            && body.contains(&state("one", "ready")),
        "the reload applied and kept `one`:\n{body}"
    );
    let status: Value = serde_json::from_str(
        &mcp_readiness_fixtures::http::get(&serve.addr, "/status.json")
            .await
            .unwrap()
            .ok_text(),
    )
    .unwrap();
    let reason = |server: &str| {
        super::status_entry(&status, server)
            .and_then(|s| s["reason"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(reason("wiki").contains("fix `url`"), "{status}");
    assert!(
        reason("docs").contains("header `Accept` is one the MCP client sets itself")
            && reason("docs").contains("remove it from `headers`"),
        "{status}"
    );

    std::fs::write(&config, "{ \"mcpServers\": ").unwrap();
    signal(serve.guard.pid(), "HUP");
    let body = serve
        .scrape_until(Duration::from_secs(10), |body| {
            body.contains("mcp_readiness_config_last_reload_successful 0")
        })
        .await;
    assert!(body.contains(&state("two", "ready")), "kept:\n{body}");
    signal(serve.guard.pid(), "TERM");
    let status = serve.guard.exit_within(Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(0));
}
