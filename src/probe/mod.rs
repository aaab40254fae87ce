//! Probing any MCP server by URL (feature `hub`): the multi-target exporter pattern of
//! Prometheus' blackbox_exporter, for MCP. `GET /probe?target=URL[&module=NAME][&server=NAME]` on
//! `serve` (or on `exporter::probe_router`) makes one
//! streamable-HTTP handshake and one `tools/list` against `target` and answers with that one
//! server's series, named and labelled as the supervised ones (so the shipped alerts and
//! dashboards read probe targets too), plus `mcp_readiness_probe_success`,
//! `mcp_readiness_probe_duration_seconds`, `mcp_readiness_probe_phase_duration_seconds{phase}`
//! (`resolve`, `connect`, `tls`, `handshake`, `tools_list`) and, over HTTPS,
//! `mcp_readiness_tls_certificate_expiry_timestamp_seconds`.
//!
//! - A 401 (or a 403 with a challenge) reads `unauthenticated`; a refused connection, a DNS
//!   failure or an endpoint that is not MCP `absent`; a handshake still running at the deadline,
//!   or a 429 / 503 with `Retry-After`, `connecting`.
//! - The deadline is the module's `timeout`, or the scrape's own timeout
//!   (`X-Prometheus-Scrape-Timeout-Seconds`) less [`SCRAPE_TIMEOUT_MARGIN`] when shorter.
//! - Safe by default: off unless `readiness.probe` is configured; a target must match its
//!   module's allow-list ([`TargetPattern`]) or it is refused (`403`) before any connection; a
//!   module's credentials go only to its own targets; at most `max_in_flight` probes run, as many
//!   wait (at most [`MAX_QUEUE_WAIT`]), and the rest are answered `503` at once.
//!
//! Files: `target_pattern.rs` (the allow-list), `probe_config.rs` (`readiness.probe`),
//! `prober.rs` (admission and the attempt), `phases.rs` (the probe's own resolve, connect and
//! TLS, each timed), `outcome.rs` (the state a probe found),
//! `history.rs` (attempt counts per probed server, bounded), `answer.rs` (the exposition text).
//!
//! See `docs/probe.md` for the Prometheus side: `file_sd_configs`, relabeling and `hashmod`.

mod answer;
mod history;
mod outcome;
mod phases;
mod probe_config;
mod prober;
mod target_pattern;

pub use outcome::{ProbeOutcome, ProbePhase};
#[cfg(feature = "http")]
pub(crate) use phases::unix_time;
pub use probe_config::{ProbeConfig, ProbeModule};
pub use prober::{
    MAX_QUEUE_WAIT, ProbeAnswer, ProbeRefusal, ProbeRequest, ProbeSetupError, Prober,
    SCRAPE_TIMEOUT_MARGIN,
};
pub use target_pattern::{PatternError, ProbeTarget, TargetError, TargetPattern};
