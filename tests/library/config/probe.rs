//! `readiness.probe`: what it configures, and the exact error of each mistake (file and JSON path).

use mcp_readiness::client::ProtocolGenerations;

use super::*;

#[test]
fn a_probe_block_configures_the_allow_list_the_bound_and_modules_with_secret_headers() {
    let config = parse(&with_readiness(
        r#"{ "probe": {
              "targets": ["http://127.0.0.1:*/mcp"],
              "max_in_flight": 4,
              "timeout": "5s",
              "modules": {
                "github": {
                  "targets": ["https://*.example.com/mcp"],
                  "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" },
                  "timeout": "15s",
                  "protocol_generations": ["2025-11-25"]
                },
                "slow": { "timeout": "30s" }
              }
           } }"#,
    ))
    .unwrap();
    let probe = config.readiness.probe.expect("probe configured");
    assert_eq!(probe.max_in_flight, 4);
    assert_eq!(probe.default_module.timeout, Duration::from_secs(5));
    assert!(!probe.default_module.has_credentials());
    let github = &probe.modules["github"];
    assert_eq!(
        github.headers["Authorization"],
        Secret::new(format!("Bearer {TOKEN}"))
    );
    assert_eq!(github.timeout, Duration::from_secs(15));
    assert_eq!(github.generations, ProtocolGenerations::Initialize);
    assert_eq!(github.targets[0].to_string(), "https://*.example.com/mcp");
    // A module without credentials inherits the default allow-list and timeout.
    let slow = &probe.modules["slow"];
    assert_eq!(slow.targets, probe.default_module.targets);
    assert_eq!(slow.generations, ProtocolGenerations::Both);
    assert!(!format!("{github:?}").contains(TOKEN));
}

#[test]
fn without_a_probe_block_the_endpoint_is_off() {
    assert_eq!(parse(&with_readiness("{}")).unwrap().readiness.probe, None);
}

#[test]
fn every_bad_probe_block_gives_its_exact_error() {
    let cases = [
        (
            r#"{ "probe": {} }"#,
            "conf/mcp.json: readiness.probe.targets: missing: `readiness.probe` needs the allow-list of URL patterns probes may reach (e.g. [\"http://127.0.0.1:*/mcp\"]); a probe endpoint without one would fetch any URL",
        ),
        (
            r#"{ "probe": { "targets": [], "max_inflight": 3 } }"#,
            "conf/mcp.json: readiness.probe.max_inflight: unknown key (did you mean `max_in_flight`?): `readiness.probe` allows only `targets`, `max_in_flight`, `timeout`, `modules`",
        ),
        (
            r#"{ "probe": { "targets": ["http://*/mcp"] } }"#,
            "conf/mcp.json: readiness.probe.targets[0]: a bare `*` host allows every host (a request-forgery tool): name the hosts, or `*.domain`",
        ),
        (
            r#"{ "probe": { "targets": [], "max_in_flight": 0 } }"#,
            "conf/mcp.json: readiness.probe.max_in_flight: expected a whole number from 1 to 1024",
        ),
        (
            r#"{ "probe": { "targets": [], "modules": { "gh": { "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" } } } } }"#,
            "conf/mcp.json: readiness.probe.modules.gh.targets: missing: a module with credentials (`headers` or `oauth`) names the targets they may be sent to; they go nowhere else",
        ),
        (
            r#"{ "probe": { "targets": [], "modules": { "gh": { "tagets": [] } } } }"#,
            "conf/mcp.json: readiness.probe.modules.gh.tagets: unknown key (did you mean `targets`?): a probe module allows only `targets`, `headers`, `oauth`, `timeout`, `protocol_generations`",
        ),
        (
            r#"{ "probe": { "targets": [], "modules": { "gh": { "protocol_generations": ["2025-06-18"] } } } }"#,
            "conf/mcp.json: readiness.probe.modules.gh.protocol_generations[0]: expected \"2026-07-28\" (server/discover) or \"2025-11-25\" (initialize, which also accepts servers down to 2024-11-05)",
        ),
        (
            r#"{ "probe": { "targets": [], "modules": { "gh": { "headers": { "X-Key": "${MISSING}" }, "targets": [] } } } }"#,
            "conf/mcp.json: readiness.probe.modules.gh.headers.X-Key: environment variable `MISSING` is not set: set it, or write `${MISSING:-default}` to give a default",
        ),
    ];
    for (block, expected) in cases {
        let err = parse(&with_readiness(block)).unwrap_err();
        assert_eq!(err.to_string(), expected, "{block}");
    }
}
