//! The standalone exporter end to end: `mcp-readiness check` and `mcp-readiness serve` run as real
//! processes against real MCP servers (the fixture server of `fixtures/src/server.rs` over
//! stdio and streamable HTTP, and `@modelcontextprotocol/server-filesystem` from the npm registry),
//! with `/metrics` read over a real socket, checked by the real `promtool` and scraped by a real
//! Prometheus server: [`check`], [`serve`], [`scraped_by_prometheus`], and [`faults`] (reload churn,
//! idle clients, few file descriptors). The helpers they share are here.
#![cfg(target_os = "linux")]

mod check;
mod faults;
mod forecast;
mod renewal;
mod scraped_by_prometheus;
mod serve;
mod status_api;
mod tls;

use mcp_readiness_fixtures::configure::{
    scratch_with_fixture, started, stdio_fixture, write_config,
};
use mcp_readiness_fixtures::process::{Guard, assert_all_gone, command_line, descendants, signal};
use mcp_readiness_fixtures::run::Run;
use mcp_readiness_fixtures::serve::Serve;
use mcp_readiness_fixtures::{Scratch, alive, eventually, tools};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

// ---------------------------------------------------------------------------------------------
// helpers: binaries, scratch directories, processes

/// The token the HTTP fixture accepts; never given to the exporter.
const RIGHT_TOKEN: &str = "right-token-7f3a9c";
/// The token the configurations send; must never be printed.
const WRONG_TOKEN: &str = "wrong-token-b41d2e";

/// The fixture over streamable HTTP on 127.0.0.1, accepting only `RIGHT_TOKEN`.
async fn http_fixture(scratch: &Scratch) -> (Guard, u16) {
    mcp_readiness_fixtures::configure::http_fixture(scratch, RIGHT_TOKEN).await
}

// ---------------------------------------------------------------------------------------------
// helpers: configurations

/// A stdio fixture entry logging to `log-<name>`, with extra environment variables.
/// The HTTP fixture with the wrong token, given through `${MCP_TEST_TOKEN}` expansion.
fn http_entry(port: u16) -> Value {
    json!({
        "type": "http",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": { "Authorization": "Bearer ${MCP_TEST_TOKEN}" }
    })
}

fn absent_entry() -> Value {
    json!({ "command": "/nonexistent/mcp-readiness-test/no-such-server", "args": [] })
}

// ---------------------------------------------------------------------------------------------
// helpers: `check`

async fn check(config: &Path, flags: &[&str]) -> Run {
    let env = [("MCP_TEST_TOKEN", WRONG_TOKEN), ("RUST_LOG", "info")];
    mcp_readiness_fixtures::run::check(config, flags, &env).await
}

fn assert_no_token(what: &str, text: &str) {
    for token in [RIGHT_TOKEN, WRONG_TOKEN] {
        assert!(!text.contains(token), "{what} shows a token:\n{text}");
    }
}

/// The table's rows by step id: `[tool, state, waited_ms, decision]`.
fn table_rows(stdout: &str) -> BTreeMap<String, [String; 4]> {
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        header,
        ["STEP", "TOOL", "STATE", "WAITED", "DECISION", "REASON"],
        "{stdout}"
    );
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert!(cells.len() >= 7 && cells[4] == "ms", "row `{l}`");
            (
                cells[0].to_owned(),
                [cells[1], cells[2], cells[3], cells[5]].map(str::to_owned),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// helpers: `serve` and /metrics

/// The environment `serve` runs with here: both tokens, and the state-change log lines.
const SERVE_ENV: &[(&str, &str)] = &[
    ("MCP_TEST_TOKEN", WRONG_TOKEN),
    ("MCP_RIGHT_TOKEN", RIGHT_TOKEN),
    ("RUST_LOG", "info"),
];

/// One parsed scrape of `serve`.
async fn scrape_of(serve: &Serve) -> Scrape {
    Scrape::parse(&serve.metrics().await)
}

/// One scrape: the raw text and the samples by name and labels.
struct Scrape {
    text: String,
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

impl Scrape {
    fn parse(text: &str) -> Scrape {
        let samples = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').expect("`series value`");
                let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in `{l}`"));
                let (name, labels) = match series.split_once('{') {
                    Some((name, rest)) => {
                        let labels = rest
                            .trim_end_matches('}')
                            .split("\",")
                            .filter(|p| !p.is_empty())
                            .map(|pair| {
                                let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
                                (k.to_owned(), v.trim_end_matches('"').to_owned())
                            })
                            .collect();
                        (name.to_owned(), labels)
                    }
                    None => (series.to_owned(), BTreeMap::new()),
                };
                (name, labels, value)
            })
            .collect();
        Scrape {
            text: text.to_owned(),
            samples,
        }
    }
    /// The value of the one series with this name and (at least) these labels.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let matching: Vec<f64> = self
            .samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|(_, _, v)| *v)
            .collect();
        assert!(matching.len() <= 1, "{name} {labels:?} is not one series");
        matching.first().copied()
    }
    /// The one-hot state of a server: the state whose gauge is 1, after checking all four
    /// series exist and exactly one is 1.
    fn state(&self, server: &str) -> Option<&'static str> {
        let mut current = None;
        for state in ["ready", "connecting", "unauthenticated", "absent"] {
            let value = self.get(
                "mcp_readiness_server_state",
                &[("server", server), ("state", state)],
            )?;
            assert!(value == 0.0 || value == 1.0, "{server}/{state} = {value}");
            if value == 1.0 {
                assert!(
                    current.is_none(),
                    "`{server}` is in two states:\n{}",
                    self.text
                );
                current = Some(state);
            }
        }
        assert!(
            current.is_some(),
            "`{server}` is in no state:\n{}",
            self.text
        );
        current
    }
    fn servers(&self) -> BTreeSet<String> {
        self.samples
            .iter()
            .filter_map(|(_, l, _)| l.get("server").cloned())
            .collect()
    }
    fn connects(&self, server: &str, result: &str) -> f64 {
        self.get(
            "mcp_readiness_connects_total",
            &[("server", server), ("result", result)],
        )
        .unwrap_or_else(|| panic!("no connects_total for {server}/{result}"))
    }
}

/// Scrapes until every server is in its expected state; returns that scrape.
async fn settle(serve: &Serve, expected: &[(&str, &str)], limit: Duration) -> Scrape {
    let what = format!("the states to settle to {expected:?}");
    eventually(&what, limit, async || {
        let scrape = scrape_of(serve).await;
        let states: Vec<_> = expected.iter().map(|(s, _)| scrape.state(s)).collect();
        if expected
            .iter()
            .zip(&states)
            .all(|((_, want), got)| Some(*want) == *got)
        {
            return Ok(scrape);
        }
        Err(format!("{states:?}\nstderr:\n{}", serve.stderr()))
    })
    .await
}

/// The entry of `server` in a `/status.json` document, if it has one.
fn status_entry<'a>(status: &'a Value, server: &str) -> Option<&'a Value> {
    status["servers"]
        .as_array()?
        .iter()
        .find(|s| s["server"] == server)
}
