//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! `conformance/npm/package.json`, with the Node >= 22 it needs) drives `conformance-client`
//! through every client scenario of both dated revisions. A failure that is not in
//! `conformance/expected-failures.yml` fails the test, and so does a listed scenario that starts
//! passing (the suite's own `--expected-failures` check), as rmcp's baseline does.
//!
//! The suite's summary of each run is kept in `target/test-artifacts/conformance-<revision>.txt`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The suite runs a revision's scenarios in parallel; two revisions at once would run ~50 clients
/// on a 2-core machine against the suite's 30 s per-scenario limit.
static ONE_SUITE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn package_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn node_bin() -> PathBuf {
    package_dir().join("npm/node_modules/.bin")
}

/// Runs `conformance client --suite all --spec-version <revision>` (plus `extra` arguments) and
/// returns its exit status and output, or `None` after a loud skip (a failure under `CI=true`).
/// An empty `revision` runs without `--spec-version` (the extension scenarios).
fn run_suite(revision: &str, extra: &[&str]) -> Option<(bool, String)> {
    let bin = node_bin();
    let suite = mcp_readiness_fixtures::tools::required(
        Some(bin.join("conformance")).filter(|p| p.exists()),
        "the MCP conformance suite is not installed: run `npm ci --prefix conformance/npm` (scripts/test does)",
    )?;
    let _one = ONE_SUITE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new(suite)
        .arg("client")
        .args(["--command", env!("CARGO_BIN_EXE_conformance-client")])
        .args(
            Some(revision)
                .filter(|r| !r.is_empty())
                .map(|r| ["--spec-version", r])
                .into_iter()
                .flatten(),
        )
        .args(extra)
        .arg("--expected-failures")
        .arg(package_dir().join("expected-failures.yml"))
        .env("PATH", path)
        // The client's own log (info) goes to the suite's per-scenario stderr; keep it short.
        .env("RUST_LOG", "warn,conformance_client=info")
        .output()
        .expect("the conformance suite runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let artifacts = package_dir().join("../target/test-artifacts");
    let _ = std::fs::create_dir_all(&artifacts);
    let name = if revision.is_empty() {
        extra
            .last()
            .map_or("extension", |s| s.trim_start_matches("auth/"))
    } else {
        revision
    };
    let _ = std::fs::write(artifacts.join(format!("conformance-{name}.txt")), &text);
    Some((output.status.success(), text))
}

/// The suite's summary lines: one per scenario, the total and the baseline verdict.
fn summary(text: &str) -> String {
    text.lines()
        .filter(|l| {
            l.starts_with('✓')
                || l.starts_with('✗')
                || l.starts_with("Total:")
                || l.contains("Baseline")
                || l.contains("baseline")
                || l.trim_start().starts_with('~')
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_suite_passes(revision: &str) {
    let Some((passed, text)) = run_suite(revision, &["--suite", "all"]) else {
        return;
    };
    println!("{}", summary(&text));
    assert!(
        passed,
        "the {revision} client suite has failures outside the baseline, or stale baseline entries:\n{text}"
    );
    assert!(
        text.contains("Baseline check passed"),
        "the suite did not judge the baseline:\n{text}"
    );
}

#[test]
fn the_2025_11_25_client_suite_passes_but_for_the_baseline() {
    assert_suite_passes("2025-11-25");
}

#[test]
fn the_2026_07_28_client_suite_passes_but_for_the_baseline() {
    assert_suite_passes("2026-07-28");
}

/// The client-credentials extension scenarios (machine to machine: `"grant": "client_credentials"`
/// with a client secret, or a `private_key_jwt` assertion), one at a time.
#[test]
fn the_client_credentials_extension_scenarios_pass() {
    for scenario in [
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
    ] {
        let Some((passed, text)) = run_suite("", &["--scenario", scenario]) else {
            return;
        };
        println!("{scenario}: {}", summary(&text));
        assert!(passed, "{scenario} fails:\n{text}");
        assert!(
            text.contains("OVERALL: PASSED"),
            "{scenario} was not judged passed:\n{text}"
        );
    }
}
