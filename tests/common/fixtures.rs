//! The fixture MCP server (`examples/fixture_server.rs`) as the tests configure it: over
//! streamable HTTP behind a bearer token, as a stdio entry of a configuration file, and the
//! configuration files themselves.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::process::{Guard, wait_for};
use super::{Scratch, fixture};

/// The fixture over streamable HTTP on 127.0.0.1, accepting only `Bearer <token>`; returns its
/// guard and port.
pub async fn http_fixture(scratch: &Scratch, token: &str) -> (Guard, u16) {
    http_fixture_with_env(scratch, token, &[]).await
}

/// [`http_fixture`] with extra environment (e.g. `FIXTURE_LOG`).
pub async fn http_fixture_with_env(
    scratch: &Scratch,
    token: &str,
    env: &[(&str, &str)],
) -> (Guard, u16) {
    let mut command = Command::new(fixture());
    command
        .arg("--http")
        .env("FIXTURE_TOKEN", token)
        .envs(env.iter().copied());
    serve_http(command, &scratch.path("http.out"), "the HTTP fixture").await
}

/// Starts `command` (an HTTP server that prints `PORT <n>` on stdout, into `out`) and waits for
/// its port; returns its guard and port.
pub async fn serve_http(
    mut command: Command,
    out: &std::path::Path,
    name: &'static str,
) -> (Guard, u16) {
    let child = command
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {name}: {e}"));
    let guard = Guard { child, name };
    let port = wait_for(&format!("{name}'s port"), Duration::from_secs(20), || {
        std::fs::read_to_string(out)
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("PORT ")?.trim().parse::<u16>().ok())
    })
    .await;
    (guard, port)
}

/// A stdio `mcpServers` entry running the fixture as `name`, logging to `log-<name>` in `scratch`
/// (see [`started`]), with extra environment.
pub fn stdio_fixture(scratch: &Scratch, name: &str, env: &[(&str, &str)]) -> Value {
    let mut vars = serde_json::Map::new();
    vars.insert(
        "FIXTURE_LOG".into(),
        json!(scratch.path(&format!("log-{name}")).to_string_lossy()),
    );
    for (k, v) in env {
        vars.insert((*k).into(), json!(v));
    }
    json!({ "command": fixture().to_string_lossy(), "args": [], "env": vars })
}

/// The pids the fixture `name` logged (`start <pid>` lines), in order.
pub fn started(scratch: &Scratch, name: &str) -> Vec<u32> {
    scratch
        .read(&format!("log-{name}"))
        .lines()
        .filter_map(|l| l.strip_prefix("start ")?.parse().ok())
        .collect()
}

/// Writes `{"mcpServers": servers, "readiness": readiness}` to `file` in `scratch`.
pub fn write_config(scratch: &Scratch, file: &str, servers: Value, readiness: Value) -> PathBuf {
    let path = scratch.path(file);
    let config = json!({ "mcpServers": servers, "readiness": readiness });
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    path
}

/// A streamable-HTTP server entry for `url`, sending `Authorization: Bearer <token>` when a token
/// is given (the public builders a service would use).
pub fn http_spec(name: &str, url: &str, token: Option<&str>) -> mcp_readiness::ServerSpec {
    let transport = mcp_readiness::TransportSpec::http(url);
    let transport = match token {
        Some(token) => transport.bearer(token),
        None => transport,
    };
    mcp_readiness::ServerSpec::new(name, transport)
}
