//! The end-to-end tests in one test binary: real processes (the `mcp-readiness` binary, the
//! fixture MCP server), real sockets, Prometheus, Alertmanager, Chromium, the Python and npm MCP
//! servers. One module per component; `cargo test -p mcp-readiness-e2e --test e2e <module>` runs
//! one. Tests that change process-wide state have binaries of their own: `semconv.rs`,
//! `trace_propagation.rs` (the tracing callsite cache) and `global_propagator.rs` (the global
//! OpenTelemetry propagator).

mod adapter;
mod bounded;
mod call;
mod cli;
mod config;
mod demo;
mod end_to_end;
mod examples;
mod exporter;
mod exposition;
mod oauth;
mod oauth_dpop;
mod oauth_grants;
mod oauth_unattended;
mod oncall;
mod protocol;
mod run_trace;
mod scale_prometheus;
mod secrets;
mod supervise;
