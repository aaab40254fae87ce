//! Interoperability with a third-party server from the npm registry
//! (`@modelcontextprotocol/server-filesystem`).

use super::*;

#[tokio::test]
async fn the_hub_supervises_the_npm_filesystem_server() {
    let entry = mcp_readiness_fixtures::repo()
        .join("e2e/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !entry.exists() {
        let message = "@modelcontextprotocol/server-filesystem is not installed: run \
                       `npm ci --prefix e2e/npm` (or `npm install --prefix e2e/npm`)";
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
        return;
    }
    let scratch = Scratch::new("npm");
    std::fs::write(scratch.path("hello.txt"), "hello from the interop test").unwrap();
    let spec = command(
        "files",
        "node",
        vec![
            entry.to_string_lossy().into_owned(),
            scratch.0.to_string_lossy().into_owned(),
        ],
    );
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![spec], opts).unwrap();
    hub.connect_all();
    eventually("the filesystem server", WAIT, async || {
        hub.state("files") == Some(State::Ready)
    })
    .await;
    let snapshot = hub.snapshot().await;
    assert!(
        snapshot.ready_tools.contains("mcp__files__list_directory"),
        "{:?}",
        snapshot.ready_tools
    );

    let listing = hub
        .call(
            ToolCall::new("mcp__files__list_directory")
                .with_arguments(json!({"path": scratch.0.to_string_lossy()}))
                .idempotent(true),
        )
        .await
        .unwrap();
    assert!(text(&listing).contains("hello.txt"), "{}", text(&listing));
    assert_ne!(listing.is_error, Some(true));

    // Outside its allowed directories: the tool answers with an error, which is not retried.
    let denied = hub
        .call(
            ToolCall::new("mcp__files__list_directory")
                .with_arguments(json!({"path": "/"}))
                .idempotent(true),
        )
        .await;
    match denied {
        Ok(result) => assert_eq!(result.is_error, Some(true)),
        Err(error) => assert_eq!(error.kind(), CallErrorKind::Protocol),
    }
    assert_eq!(attempts(&events, ConnectResult::Ok), 1);
    let node = processes_mentioning(&scratch.0.to_string_lossy());
    assert!(!node.is_empty(), "the node server runs");
    hub.shutdown().await;
    assert_eq!(hub.state("files"), Some(State::Absent));
    assert_all_gone(&node).await;
}

/// Pids whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .filter(|pid| alive(*pid))
        .collect()
}
