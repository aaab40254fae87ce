//! Every metric and label name of DESIGN.md's metrics table, and the histogram buckets. These
//! names are a contract with dashboards and alerts: never change them.

/// Gauge {`server`, `state`}: one-hot, 1 for the current state and 0 for the other three; all four
/// series exist for every known server.
pub const SERVER_STATE: &str = "mcp_readiness_server_state";
/// Gauge {`server`}: Unix time of the last state change.
pub const SERVER_STATE_CHANGED_TIMESTAMP_SECONDS: &str =
    "mcp_readiness_server_state_changed_timestamp_seconds";
/// Gauge {`server`}: tools the server offers now.
pub const SERVER_TOOLS: &str = "mcp_readiness_server_tools";
/// Histogram {`server`, `state`}: how long each resolution waited, by its verdict.
pub const RESOLVE_WAIT_SECONDS: &str = "mcp_readiness_resolve_wait_seconds";
/// Counter {`server`, `state`}: seconds waited in resolutions whose verdict was not `ready`.
pub const WASTE_SECONDS_TOTAL: &str = "mcp_readiness_waste_seconds_total";
/// Counter {`server`, `state`}: budget not spent because the state was known not to heal.
pub const AVOIDED_WAIT_SECONDS_TOTAL: &str = "mcp_readiness_avoided_wait_seconds_total";
/// Counter {`server`}: resolutions whose budget ran out while the server was still connecting.
pub const BUDGET_EXHAUSTED_TOTAL: &str = "mcp_readiness_budget_exhausted_total";
/// Counter {`server`, `tool`, `outcome`}: every call through the layer.
pub const TOOL_CALLS_TOTAL: &str = "mcp_readiness_tool_calls_total";
/// Counter {`server`, `tool`}: calls to a tool that a ready server does not offer.
pub const TOOL_ABSENT_TOTAL: &str = "mcp_readiness_tool_absent_total";
/// Counter {`server`, `result`}: connection attempts.
pub const CONNECTS_TOTAL: &str = "mcp_readiness_connects_total";
/// Histogram {`server`, `result`}: how long each connection attempt took.
pub const CONNECT_DURATION_SECONDS: &str = "mcp_readiness_connect_duration_seconds";
/// Gauge {`server`}: the wait budget in force for the server's tools.
pub const WAIT_BUDGET_SECONDS: &str = "mcp_readiness_wait_budget_seconds";
/// Counter {`server`}: reconnections after a dropped connection.
pub const RECONNECTS_TOTAL: &str = "mcp_readiness_reconnects_total";
/// Counter {`server`}: event streams an HTTP connection opened again (a storm of re-opens shows
/// here; created with the first re-open).
pub const STREAM_REOPENS_TOTAL: &str = "mcp_readiness_stream_reopens_total";
/// Counter {`server`}: calls failed fast while a server cools down.
pub const COOLDOWN_REJECTIONS_TOTAL: &str = "mcp_readiness_cooldown_rejections_total";
/// Gauge {`version`}: always 1.
pub const BUILD_INFO: &str = "mcp_readiness_build_info";
/// Counter {`server`, `state`}: state changes, by the state entered (flapping, crash loops); all
/// four series exist at 0 for every configured server.
pub const SERVER_STATE_CHANGES_TOTAL: &str = "mcp_readiness_server_state_changes_total";
/// Gauge (no labels): 1 if the last configuration (re)load succeeded, else 0.
pub const CONFIG_LAST_RELOAD_SUCCESSFUL: &str = "mcp_readiness_config_last_reload_successful";
/// Gauge (no labels): Unix time of the last successful configuration (re)load.
pub const CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS: &str =
    "mcp_readiness_config_last_reload_success_timestamp_seconds";
/// Gauge (no labels): how many probe modules `serve` answers `GET /probe` with (the default
/// module and each named one; 0 while probes are off). Set by `serve` only: a probe-only `serve`
/// (no `mcpServers`) reads > 0, so `MCPReadinessNoServers` leaves it alone.
pub const PROBE_MODULES: &str = "mcp_readiness_probe_modules";
/// Gauge {`server`, `protocol_version`, `server_name`, `server_version`}: always 1, for a server
/// that completed a handshake (one series per server: the last handshake's).
pub const SERVER_INFO: &str = "mcp_readiness_server_info";
/// Gauge {`server`, `credential`, `renewable`}: Unix time a credential of the server expires, for
/// every credential whose expiry is known. `renewable="false"` is a credential that cannot renew
/// itself (a refresh token, an access token without a refresh token, a static bearer JWT): what
/// `MCPCredentialExpiringSoon` watches.
pub const CREDENTIAL_EXPIRY_TIMESTAMP_SECONDS: &str =
    "mcp_readiness_credential_expiry_timestamp_seconds";
/// Gauge {`server`}: Unix time the next connection attempt to a server that is not ready is
/// due (the end of a failed connect's backoff, a crash loop's backoff or a `Retry-After`); no
/// series while none is waiting for a time.
pub const SERVER_NEXT_ATTEMPT_TIMESTAMP_SECONDS: &str =
    "mcp_readiness_server_next_attempt_timestamp_seconds";
/// Gauge {`server`}: Unix time the leaf TLS certificate the server presented expires (its
/// notAfter): for a supervised HTTPS server, set at each successful connect; on a `/probe`
/// answer over HTTPS. No series for plain HTTP or stdio. `MCPServerTLSCertificateExpiring`
/// watches it.
pub const TLS_CERTIFICATE_EXPIRY_TIMESTAMP_SECONDS: &str =
    "mcp_readiness_tls_certificate_expiry_timestamp_seconds";
/// Histogram {`mcp_method_name`, `gen_ai_tool_name`, `error_type`, `server`}: the OpenTelemetry
/// MCP semantic-convention client operation duration.
pub const MCP_CLIENT_OPERATION_DURATION_SECONDS: &str = "mcp_client_operation_duration_seconds";

/// Gauge (no labels), on a `/probe` answer only: 1 if the probed server is `ready`, else 0.
pub const PROBE_SUCCESS: &str = "mcp_readiness_probe_success";
/// Gauge (no labels), on a `/probe` answer only: how long the probe took, in seconds.
pub const PROBE_DURATION_SECONDS: &str = "mcp_readiness_probe_duration_seconds";
/// Gauge {`phase`}, on a `/probe` answer only: how long each phase of the probe took that it
/// measured: `resolve` (the host's addresses), `connect` (TCP), `tls` (HTTPS only), `handshake`
/// (the HTTP client's own connection and the MCP `server/discover` or `initialize`), `tools_list`.
pub const PROBE_PHASE_DURATION_SECONDS: &str = "mcp_readiness_probe_phase_duration_seconds";

/// Gauge (no labels), in the recorder's own registry only (`Metrics::new`, `serve`): Unix time
/// the recorder was built, at the process's start; the restart alert counts its changes.
pub const PROCESS_START_TIME_SECONDS: &str = "process_start_time_seconds";

/// Every metric name this crate registers (the `/probe` answer's own two, [`PROBE_SUCCESS`] and
/// [`PROBE_DURATION_SECONDS`], are not registered: they exist on probe answers only), in the order of DESIGN.md's table.
pub const ALL: [&str; 25] = [
    SERVER_STATE,
    SERVER_STATE_CHANGED_TIMESTAMP_SECONDS,
    SERVER_TOOLS,
    RESOLVE_WAIT_SECONDS,
    WASTE_SECONDS_TOTAL,
    AVOIDED_WAIT_SECONDS_TOTAL,
    BUDGET_EXHAUSTED_TOTAL,
    TOOL_CALLS_TOTAL,
    TOOL_ABSENT_TOTAL,
    CONNECTS_TOTAL,
    CONNECT_DURATION_SECONDS,
    WAIT_BUDGET_SECONDS,
    RECONNECTS_TOTAL,
    STREAM_REOPENS_TOTAL,
    COOLDOWN_REJECTIONS_TOTAL,
    BUILD_INFO,
    SERVER_STATE_CHANGES_TOTAL,
    CONFIG_LAST_RELOAD_SUCCESSFUL,
    CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS,
    PROBE_MODULES,
    SERVER_INFO,
    CREDENTIAL_EXPIRY_TIMESTAMP_SECONDS,
    SERVER_NEXT_ATTEMPT_TIMESTAMP_SECONDS,
    TLS_CERTIFICATE_EXPIRY_TIMESTAMP_SECONDS,
    MCP_CLIENT_OPERATION_DURATION_SECONDS,
];

/// Label of `mcp_readiness_server_info`: the negotiated MCP protocol version.
pub const LABEL_PROTOCOL_VERSION: &str = "protocol_version";
/// Label of `mcp_readiness_server_info`: the server's `serverInfo.name`.
pub const LABEL_SERVER_NAME: &str = "server_name";
/// Label of `mcp_readiness_server_info`: the server's `serverInfo.version`.
pub const LABEL_SERVER_VERSION: &str = "server_version";

/// Label: the MCP server's configured name.
pub const LABEL_SERVER: &str = "server";
/// Label: a readiness state (`ready`, `connecting`, `unauthenticated`, `absent`).
pub const LABEL_STATE: &str = "state";
/// Label: the tool name as the server lists it (capped; see [`OTHER`]).
pub const LABEL_TOOL: &str = "tool";
/// Label: how a call through the layer ended (see [`CallOutcome`](crate::state::CallOutcome)).
pub const LABEL_OUTCOME: &str = "outcome";
/// Label: how a connection attempt ended (see [`ConnectResult`](crate::state::ConnectResult)).
pub const LABEL_RESULT: &str = "result";
/// Label: the crate version in `mcp_readiness_build_info`.
pub const LABEL_VERSION: &str = "version";
/// Label: which credential an expiry is about (`access_token`, `refresh_token`, `bearer_token`).
pub const LABEL_CREDENTIAL: &str = "credential";
/// Label: whether the credential renews itself unattended (`true`) or a human must re-authorize
/// before it expires (`false`).
pub const LABEL_RENEWABLE: &str = "renewable";
/// Label (OpenTelemetry `mcp.method.name`): the MCP method, e.g. `tools/call`.
pub const LABEL_MCP_METHOD_NAME: &str = "mcp_method_name";
/// Label (OpenTelemetry `gen_ai.tool.name`): the tool name (capped like `tool`).
pub const LABEL_GEN_AI_TOOL_NAME: &str = "gen_ai_tool_name";
/// Label (OpenTelemetry `error.type`): empty when the operation succeeded.
pub const LABEL_ERROR_TYPE: &str = "error_type";

/// The label value that tool names beyond the cap, and servers beyond the unconfigured-server
/// cap, are counted under.
pub const OTHER: &str = "other";

/// The `error_type` value for operations beyond the per-tool (method, error type) cap, as the
/// OpenTelemetry semantic conventions spell the catch-all.
pub const OTHER_ERROR_TYPE: &str = "_OTHER";

/// Buckets of `mcp_readiness_resolve_wait_seconds` and `mcp_readiness_connect_duration_seconds`:
/// fine across the wait-budget range (the default budget is 20 s).
pub const WAIT_BUCKETS: [f64; 18] = [
    0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
    120.0,
];

/// Buckets of `mcp_client_operation_duration_seconds`, as the OpenTelemetry MCP semantic
/// conventions advise.
pub const OPERATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

// The run record pushed to a Pushgateway (`exporter::push`).
/// Gauge {`state`}: steps of the pushed run, by the state they resolved to (all four states).
pub const RUN_STEPS: &str = "mcp_readiness_run_steps";
/// Gauge: steps of the pushed run that ran.
pub const RUN_RAN_STEPS: &str = "mcp_readiness_run_ran_steps";
/// Gauge {`list`}: servers named in the run record's `blocked_by_auth`, `still_connecting` and
/// `absent` lists.
pub const RUN_SERVERS: &str = "mcp_readiness_run_servers";
/// Gauge: Unix time the run was pushed.
pub const RUN_TIMESTAMP_SECONDS: &str = "mcp_readiness_run_timestamp_seconds";
/// Gauge: Unix time the next run is due, pushed by `check` when the next run is known
/// (`--next-run-in`, `readiness.schedule.every`).
pub const RUN_NEXT_TIMESTAMP_SECONDS: &str = "mcp_readiness_run_next_timestamp_seconds";
