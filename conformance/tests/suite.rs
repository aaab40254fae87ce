//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! `conformance/npm/package.json`, with the Node >= 22 it needs) drives `conformance-client`
//! through every client scenario of both dated revisions. A failure that is not in
//! `conformance/expected-failures.yml` fails the test, and so does a listed scenario that starts
//! passing (the suite's own `--expected-failures` check), as rmcp's baseline does.
//!
//! The suite judges a revision's scenarios run together by their checks only; run alone, a
//! scenario also fails when the client exits with an error (unless the scenario allows it). So
//! every scenario whose client exited with an error in the run of the whole revision is run
//! again alone, without the baseline, and must be judged `OVERALL: PASSED` as the suite judges
//! it then. conformance-client names the scenario it failed on stderr, which the suite repeats.
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

/// Runs `conformance client --spec-version <revision>` plus `extra` arguments (`--suite all`, or
/// `--scenario NAME`), judged against the baseline when `baseline` is set, and returns its exit
/// status and output, or `None` after a loud skip (a failure under `CI=true`). An empty
/// `revision` runs without `--spec-version` (the extension scenarios).
fn run_suite(revision: &str, extra: &[&str], baseline: bool) -> Option<(bool, String)> {
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
        .args(
            baseline
                .then(|| {
                    [
                        "--expected-failures".into(),
                        package_dir().join("expected-failures.yml").into_os_string(),
                    ]
                })
                .into_iter()
                .flatten(),
        )
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
    let scenario = extra
        .windows(2)
        .find(|pair| pair[0] == "--scenario")
        .map(|pair| pair[1].replace('/', "-"));
    let name = match (revision, scenario) {
        ("", Some(scenario)) => scenario,
        ("", None) => "extension".to_owned(),
        (revision, Some(scenario)) => format!("{revision}-{scenario}"),
        (revision, None) => revision.to_owned(),
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

/// The scenarios whose client exited with an error in a suite run's `text`: the suite prints
/// `Client exited with code N` and then the client's stderr, where conformance-client names its
/// scenario. `Err` when an exit names no scenario (a client that crashed before saying which).
fn exited_with_error(text: &str) -> Result<Vec<String>, String> {
    const NAMED: &str = "conformance-client failed scenario `";
    let exits = text.matches("Client exited with code").count();
    let mut named: Vec<String> = text
        .lines()
        .filter_map(|line| line.split_once(NAMED))
        .filter_map(|(_, rest)| rest.split_once('`'))
        .map(|(scenario, _)| scenario.to_owned())
        .collect();
    named.sort();
    named.dedup();
    if named.len() < exits {
        return Err(format!(
            "{exits} clients exited with an error but only {} named their scenario ({named:?})",
            named.len()
        ));
    }
    Ok(named)
}

fn assert_suite_passes(revision: &str) {
    let Some((passed, text)) = run_suite(revision, &["--suite", "all"], true) else {
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
    // Judged as when run alone: a client that exited with an error is judged again, alone.
    let again = exited_with_error(&text).unwrap_or_else(|why| panic!("{why}:\n{text}"));
    for scenario in again {
        let Some((passed, alone)) = run_suite(revision, &["--scenario", &scenario], false) else {
            return;
        };
        println!("{scenario} alone: {}", summary(&alone));
        assert!(
            passed && alone.contains("OVERALL: PASSED"),
            "{scenario} ({revision}) fails when the suite runs it alone:\n{alone}"
        );
    }
}

#[test]
fn a_client_exit_is_traced_to_its_scenario() {
    let text = "Client exited with code 1\n\nStderr:\nconformance-client failed scenario \
                `json-schema-ref-no-deref`: `lookup_user` failed\n";
    assert_eq!(
        exited_with_error(text).unwrap(),
        vec!["json-schema-ref-no-deref".to_owned()]
    );
    assert!(exited_with_error("Client exited with code 101\n thread main panicked").is_err());
    assert!(
        exited_with_error("✓ tools_call: 1 passed")
            .unwrap()
            .is_empty()
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

/// The six auth extension scenarios, one at a time: client credentials
/// (`"grant": "client_credentials"` with a client secret, or a `private_key_jwt` assertion),
/// workload identity (`"grant": "workload_identity"`, the JWT-bearer grant),
/// enterprise-managed authorization (`"grant": "enterprise_managed"`: the RFC 8693 token
/// exchange at the identity provider, then the JWT-bearer grant), and DPoP (RFC 9449, used where
/// the authorization server's metadata offers it: a proof at the token endpoint and on every MCP
/// request, the `DPoP` scheme, and the nonces of the authorization server and of the MCP server
/// honoured with one retry each).
#[test]
fn all_six_auth_extension_scenarios_pass() {
    for scenario in [
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
        "auth/wif-jwt-bearer",
        "auth/enterprise-managed-authorization",
        "auth/dpop",
        "auth/dpop-nonce",
    ] {
        let Some((passed, text)) = run_suite("", &["--scenario", scenario], true) else {
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
