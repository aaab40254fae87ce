//! A probe's answer: the exposition text of one probed server, written by the same families and
//! the same text encoder as `/metrics` (same names, labels, HELP and escaping), so the shipped
//! rules, alerts and dashboards read a probe target as they read a supervised server.
//!
//! | series | value |
//! |---|---|
//! | `mcp_readiness_server_state{server, state}` | one-hot, all four states |
//! | `mcp_readiness_server_tools{server}` | tools listed (0 when the server did not list them) |
//! | `mcp_readiness_server_info{server, protocol_version, server_name, server_version}` | 1, after a completed handshake |
//! | `mcp_readiness_credential_expiry_timestamp_seconds{server, credential, renewable}` | where the module's credential says it |
//! | `mcp_readiness_connects_total{server, result}` | this exporter's probes of this server, by result (the evidence `MCPServerAbsent` needs) |
//! | `mcp_readiness_probe_success` | 1 if `ready`, else 0 |
//! | `mcp_readiness_probe_duration_seconds` | how long the probe took |
//! | `mcp_readiness_probe_phase_duration_seconds{phase}` | how long each phase took that the probe went through: `resolve`, `connect`, `tls` (HTTPS only), `handshake` (the HTTP client's own connection and `initialize`), `tools_list` |
//! | `mcp_readiness_tls_certificate_expiry_timestamp_seconds{server}` | over HTTPS: the leaf certificate's notAfter |

use crate::exposition::{Encode, Family, Gauge};
use crate::metrics::Families;
use crate::metrics::MetricsError;
use crate::metrics::names::{PROBE_DURATION_SECONDS, PROBE_PHASE_DURATION_SECONDS, PROBE_SUCCESS};
use crate::state::{ConnectResult, State};

use super::outcome::ProbeOutcome;

/// The exposition text of one probe of `server`; `connects` are the attempts counted so far, in
/// the order of [`ConnectResult::ALL`].
pub(crate) fn render(
    server: &str,
    outcome: &ProbeOutcome,
    connects: &[u64; ConnectResult::ALL.len()],
) -> Result<String, MetricsError> {
    let fam = Families::new()?;
    for state in State::ALL {
        fam.server_state
            .get_or_create(&[server, state.as_str()])
            .set(i64::from(state == outcome.state));
    }
    fam.server_tools
        .get_or_create(&[server])
        .set(i64::try_from(outcome.tools.unwrap_or(0)).unwrap_or(i64::MAX));
    if let Some(identity) = &outcome.identity {
        fam.set_server_info(server, identity);
    }
    for expiry in &outcome.expiries {
        fam.set_credential_expiry(server, expiry);
    }
    for (result, count) in ConnectResult::ALL.iter().zip(connects) {
        if *count > 0 {
            fam.connects
                .get_or_create(&[server, result.as_str()])
                .inc_by(*count);
        }
    }
    let declare = |name, help| {
        Family::<Gauge>::new(name, help, &[], ())
            .map_err(|source| MetricsError::Declare { name, source })
    };
    let success = declare(
        PROBE_SUCCESS,
        "Whether the probed MCP server is ready (1) or not (0).",
    )?;
    success
        .get_or_create(&[])
        .set(f64::from(u8::from(outcome.success())));
    let duration = declare(
        PROBE_DURATION_SECONDS,
        "How long the probe took, in seconds.",
    )?;
    duration
        .get_or_create(&[])
        .set(outcome.duration.as_secs_f64());

    let phases = Family::<Gauge>::new(
        PROBE_PHASE_DURATION_SECONDS,
        "How long each phase of the probe took, in seconds.",
        &["phase"],
        (),
    )
    .map_err(|source| MetricsError::Declare {
        name: PROBE_PHASE_DURATION_SECONDS,
        source,
    })?;
    for phase in &outcome.phases {
        phases
            .get_or_create(&[phase.name])
            .set(phase.duration.as_secs_f64());
    }

    if let Some(not_after) = outcome.tls_certificate_expiry {
        // Unix seconds of a certificate fit an f64 exactly (well below 2^53).
        #[allow(clippy::cast_precision_loss)]
        fam.tls_certificate_expiry
            .get_or_create(&[server])
            .set(not_after as f64);
    }

    let mut families: Vec<&dyn Encode> = fam.sorted();
    families.push(&success);
    families.push(&duration);
    families.push(&phases);
    families.sort_by_key(|f| f.name());
    let mut out = String::with_capacity(2048);
    for family in families {
        family.encode(&mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::state::ServerIdentity;

    #[test]
    fn an_answer_holds_only_the_probed_servers_series_and_the_two_probe_gauges() {
        let outcome = ProbeOutcome {
            state: State::Ready,
            result: ConnectResult::Ok,
            reason: None,
            tools: Some(3),
            identity: Some(ServerIdentity {
                protocol_version: "2025-11-25".into(),
                server_name: "fix\"ture".into(),
                server_version: "1.0".into(),
            }),
            expiries: Vec::new(),
            duration: Duration::from_millis(1500),
            phases: vec![
                super::super::outcome::ProbePhase {
                    name: "handshake",
                    started: Duration::ZERO,
                    duration: Duration::from_millis(1200),
                    ok: true,
                    detail: None,
                },
                super::super::outcome::ProbePhase {
                    name: "tools_list",
                    started: Duration::from_millis(1200),
                    duration: Duration::from_millis(250),
                    ok: true,
                    detail: None,
                },
            ],
            tls_certificate_expiry: Some(1_800_000_000),
            http_answers: Vec::new(),
        };
        let mut connects = [0; ConnectResult::ALL.len()];
        connects[0] = 2;
        let text = render("api", &outcome, &connects).unwrap();
        for line in [
            r#"mcp_readiness_server_state{server="api",state="ready"} 1"#,
            r#"mcp_readiness_server_state{server="api",state="absent"} 0"#,
            r#"mcp_readiness_server_tools{server="api"} 3"#,
            r#"mcp_readiness_server_info{protocol_version="2025-11-25",server="api",server_name="fix\"ture",server_version="1.0"} 1"#,
            r#"mcp_readiness_connects_total{result="ok",server="api"} 2"#,
            "mcp_readiness_probe_success 1",
            "mcp_readiness_probe_duration_seconds 1.5",
            r#"mcp_readiness_probe_phase_duration_seconds{phase="handshake"} 1.2"#,
            r#"mcp_readiness_probe_phase_duration_seconds{phase="tools_list"} 0.25"#,
            r#"mcp_readiness_tls_certificate_expiry_timestamp_seconds{server="api"} 1800000000"#,
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in:\n{text}");
        }
        let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(samples.len(), 4 + 1 + 1 + 1 + 2 + 2 + 1, "{text}");
        assert!(!text.contains("build_info"), "{text}");
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "families in name order");
    }
}
