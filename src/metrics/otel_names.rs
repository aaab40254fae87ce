//! The OpenTelemetry instrument of every metric (feature `otel-metrics`): its name, unit and kind,
//! and the attribute key of every label. A contract like [`names`]: never change.
//!
//! The names are derived from the Prometheus names, so that OpenTelemetry's own translation to
//! Prometheus (dots to underscores, the unit's suffix, `_total` on a counter; what the Prometheus
//! OTLP receiver and the Collector's Prometheus exporters apply) gives back exactly the names of
//! [`names::ALL`]:
//!
//! - `mcp_client_operation_duration_seconds` is `mcp.client.operation.duration` (unit `s`), as the
//!   OpenTelemetry MCP semantic conventions name it;
//! - every other `mcp_readiness_<rest>` is `mcp_readiness.<rest>` without the unit suffix
//!   (`_seconds`) and `_total`, `_` between words becoming `.`; a time is unit `s`, a count has an
//!   annotation such as `{call}` (which no translation turns into a suffix), a 1-or-0 gauge none.
//!
//! Attributes: the label `L` of a readiness metric is the attribute `L` (`server`, `state`,
//! `tool`, ...), so that the translation also gives back the labels the shipped alerts,
//! recording rules and dashboards select on; the operation histogram's labels are the
//! semantic-convention attributes they come from (`mcp.method.name`, `gen_ai.tool.name`,
//! `error.type`, set only when the operation failed) and `server`. Over OTLP the operation
//! histogram also carries the conventions' recommended attributes that have no label on the
//! scrape ([`OTLP_ONLY_OPERATION_ATTRIBUTES`]): `gen_ai.operation.name = "execute_tool"` on
//! `tools/call`, `network.transport`, `server.address` and `server.port`, `mcp.protocol.version`,
//! and `rpc.response.status_code` on a JSON-RPC error. Drop those, and every OTLP series is a
//! scrape series with the same labels and values (zero-valued ones included).

use super::names;

/// What kind of instrument a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstrumentKind {
    /// A histogram, recorded where the Prometheus histogram is observed, with the same bucket
    /// bounds (explicit bucket boundaries advice).
    Histogram,
    /// A monotonic counter, observed (an asynchronous counter) from the recorder's value.
    Counter,
    /// A gauge, observed (an asynchronous gauge) from the recorder's value.
    Gauge,
}

/// One metric as an OpenTelemetry instrument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instrument {
    /// The instrument name.
    pub name: &'static str,
    /// The UCUM unit (`s`, or an annotation such as `{call}`; empty for a 1-or-0 gauge).
    pub unit: &'static str,
    /// The instrument kind.
    pub kind: InstrumentKind,
    /// The Prometheus metric it mirrors (one of [`names::ALL`]).
    pub prometheus: &'static str,
}

const fn i(
    name: &'static str,
    unit: &'static str,
    kind: InstrumentKind,
    prometheus: &'static str,
) -> Instrument {
    Instrument {
        name,
        unit,
        kind,
        prometheus,
    }
}

use InstrumentKind::{Counter, Gauge, Histogram};

/// `mcp.client.operation.duration`: the OpenTelemetry MCP semantic-convention histogram.
pub const MCP_CLIENT_OPERATION_DURATION: &str = "mcp.client.operation.duration";

/// Every instrument, in the order of [`names::ALL`].
pub const ALL: [Instrument; 25] = [
    i(
        "mcp_readiness.server.state",
        "{state}",
        Gauge,
        names::SERVER_STATE,
    ),
    i(
        "mcp_readiness.server.state.changed.timestamp",
        "s",
        Gauge,
        names::SERVER_STATE_CHANGED_TIMESTAMP_SECONDS,
    ),
    i(
        "mcp_readiness.server.tools",
        "{tool}",
        Gauge,
        names::SERVER_TOOLS,
    ),
    i(
        "mcp_readiness.resolve.wait",
        "s",
        Histogram,
        names::RESOLVE_WAIT_SECONDS,
    ),
    i(
        "mcp_readiness.waste",
        "s",
        Counter,
        names::WASTE_SECONDS_TOTAL,
    ),
    i(
        "mcp_readiness.avoided.wait",
        "s",
        Counter,
        names::AVOIDED_WAIT_SECONDS_TOTAL,
    ),
    i(
        "mcp_readiness.budget.exhausted",
        "{resolution}",
        Counter,
        names::BUDGET_EXHAUSTED_TOTAL,
    ),
    i(
        "mcp_readiness.tool.calls",
        "{call}",
        Counter,
        names::TOOL_CALLS_TOTAL,
    ),
    i(
        "mcp_readiness.tool.absent",
        "{call}",
        Counter,
        names::TOOL_ABSENT_TOTAL,
    ),
    i(
        "mcp_readiness.connects",
        "{attempt}",
        Counter,
        names::CONNECTS_TOTAL,
    ),
    i(
        "mcp_readiness.connect.duration",
        "s",
        Histogram,
        names::CONNECT_DURATION_SECONDS,
    ),
    i(
        "mcp_readiness.wait.budget",
        "s",
        Gauge,
        names::WAIT_BUDGET_SECONDS,
    ),
    i(
        "mcp_readiness.reconnects",
        "{reconnect}",
        Counter,
        names::RECONNECTS_TOTAL,
    ),
    i(
        "mcp_readiness.stream.reopens",
        "{reopen}",
        Counter,
        names::STREAM_REOPENS_TOTAL,
    ),
    i(
        "mcp_readiness.cooldown.rejections",
        "{call}",
        Counter,
        names::COOLDOWN_REJECTIONS_TOTAL,
    ),
    i("mcp_readiness.build.info", "", Gauge, names::BUILD_INFO),
    i(
        "mcp_readiness.server.state.changes",
        "{change}",
        Counter,
        names::SERVER_STATE_CHANGES_TOTAL,
    ),
    i(
        "mcp_readiness.config.last.reload.successful",
        "",
        Gauge,
        names::CONFIG_LAST_RELOAD_SUCCESSFUL,
    ),
    i(
        "mcp_readiness.config.last.reload.success.timestamp",
        "s",
        Gauge,
        names::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS,
    ),
    i(
        "mcp_readiness.probe.modules",
        "{module}",
        Gauge,
        names::PROBE_MODULES,
    ),
    i("mcp_readiness.server.info", "", Gauge, names::SERVER_INFO),
    i(
        "mcp_readiness.credential.expiry.timestamp",
        "s",
        Gauge,
        names::CREDENTIAL_EXPIRY_TIMESTAMP_SECONDS,
    ),
    i(
        "mcp_readiness.server.next_attempt.timestamp",
        "s",
        Gauge,
        names::SERVER_NEXT_ATTEMPT_TIMESTAMP_SECONDS,
    ),
    i(
        "mcp_readiness.tls.certificate.expiry.timestamp",
        "s",
        Gauge,
        names::TLS_CERTIFICATE_EXPIRY_TIMESTAMP_SECONDS,
    ),
    i(
        MCP_CLIENT_OPERATION_DURATION,
        "s",
        Histogram,
        names::MCP_CLIENT_OPERATION_DURATION_SECONDS,
    ),
];

/// The instrument that mirrors the Prometheus metric `prometheus`.
pub fn instrument(prometheus: &str) -> Option<&'static Instrument> {
    ALL.iter().find(|i| i.prometheus == prometheus)
}

/// Attribute `mcp.method.name` (label `mcp_method_name`).
pub const ATTR_MCP_METHOD_NAME: &str = "mcp.method.name";
/// Attribute `gen_ai.tool.name` (label `gen_ai_tool_name`).
pub const ATTR_GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// Attribute `error.type` (label `error_type`; set only when the operation failed).
pub const ATTR_ERROR_TYPE: &str = "error.type";
/// Attribute `gen_ai.operation.name`, `execute_tool` on a `tools/call` operation (over OTLP
/// only; no label on the scrape).
pub const ATTR_GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// Attribute `server` (label `server`).
pub const ATTR_SERVER: &str = names::LABEL_SERVER;
/// Attribute `network.transport` of the operation histogram, over OTLP only: `pipe` (stdio) or
/// `tcp` (streamable HTTP); unset when the connection's transport is not known.
pub const ATTR_NETWORK_TRANSPORT: &str = "network.transport";
/// Attribute `server.address` of the operation histogram, over OTLP only: the host of an HTTP
/// server's URL.
pub const ATTR_SERVER_ADDRESS: &str = "server.address";
/// Attribute `server.port` of the operation histogram, over OTLP only: the port of an HTTP
/// server's URL (or its scheme's default), an integer.
pub const ATTR_SERVER_PORT: &str = "server.port";
/// Attribute `mcp.protocol.version` of the operation histogram, over OTLP only: the protocol
/// version of the connection's handshake.
pub const ATTR_MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// Attribute `rpc.response.status_code` of the operation histogram, over OTLP only: the JSON-RPC
/// error code when the server answered with one (then equal to `error.type`).
pub const ATTR_RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";

/// The attributes `mcp.client.operation.duration` carries over OTLP beyond the Prometheus
/// labels: the semantic conventions' recommended ones. Each is fixed for a given `server`
/// connection (`network.transport`, `server.address`, `server.port`, `mcp.protocol.version`), for
/// a given `mcp.method.name` (`gen_ai.operation.name`) or equal to `error.type`
/// (`rpc.response.status_code`), so no series of the scrape is split by them (until a server
/// changes address or protocol version). Translated to Prometheus they are extra labels
/// (`network_transport`, ...) that the shipped rules and dashboards aggregate away.
pub const OTLP_ONLY_OPERATION_ATTRIBUTES: [&str; 6] = [
    ATTR_GEN_AI_OPERATION_NAME,
    ATTR_NETWORK_TRANSPORT,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
    ATTR_MCP_PROTOCOL_VERSION,
    ATTR_RPC_RESPONSE_STATUS_CODE,
];

/// The attribute key of the Prometheus label `label`: the semantic-convention attribute it comes
/// from for the operation histogram's labels, the label itself for every other one (so that the
/// OTLP-to-Prometheus translation gives back the labels the shipped rules and dashboards select on).
pub fn attribute_key(label: &'static str) -> &'static str {
    match label {
        names::LABEL_MCP_METHOD_NAME => ATTR_MCP_METHOD_NAME,
        names::LABEL_GEN_AI_TOOL_NAME => ATTR_GEN_AI_TOOL_NAME,
        names::LABEL_ERROR_TYPE => ATTR_ERROR_TYPE,
        label => label,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenTelemetry's metric name translation to Prometheus (the Prometheus compatibility
    /// specification: `.` to `_`, the unit's suffix unless the name has it, `_total` on a
    /// monotonic counter; annotations in braces add nothing).
    fn to_prometheus(instrument: &Instrument) -> String {
        let mut name = instrument.name.replace('.', "_");
        let suffix = match instrument.unit {
            "s" => "_seconds",
            unit => {
                assert!(
                    unit.is_empty() || (unit.starts_with('{') && unit.ends_with('}')),
                    "{unit}"
                );
                ""
            }
        };
        if !name.ends_with(suffix) {
            name.push_str(suffix);
        }
        if instrument.kind == Counter {
            name.push_str("_total");
        }
        name
    }

    #[test]
    fn every_instrument_translates_back_to_its_prometheus_name() {
        for (instrument, prometheus) in ALL.iter().zip(names::ALL) {
            assert_eq!(instrument.prometheus, prometheus);
            assert_eq!(to_prometheus(instrument), prometheus, "{instrument:?}");
        }
    }

    #[test]
    fn the_operation_histogram_is_named_as_the_semantic_conventions_say() {
        let operation = instrument(names::MCP_CLIENT_OPERATION_DURATION_SECONDS).unwrap();
        assert_eq!(
            (operation.name, operation.unit, operation.kind),
            ("mcp.client.operation.duration", "s", Histogram)
        );
        assert_eq!(
            attribute_key(names::LABEL_MCP_METHOD_NAME),
            "mcp.method.name"
        );
        assert_eq!(attribute_key(names::LABEL_ERROR_TYPE), "error.type");
        assert_eq!(
            attribute_key(names::LABEL_GEN_AI_TOOL_NAME),
            "gen_ai.tool.name"
        );
        assert_eq!(attribute_key(names::LABEL_SERVER), "server");
    }

    /// The translation's label rule (`.` to `_`) gives back every label: the shipped rules and
    /// dashboards select the same series whether Prometheus scraped `/metrics` or took OTLP in.
    #[test]
    fn every_attribute_translates_back_to_its_label() {
        for label in [
            names::LABEL_SERVER,
            names::LABEL_STATE,
            names::LABEL_TOOL,
            names::LABEL_OUTCOME,
            names::LABEL_RESULT,
            names::LABEL_VERSION,
            names::LABEL_CREDENTIAL,
            names::LABEL_RENEWABLE,
            names::LABEL_PROTOCOL_VERSION,
            names::LABEL_SERVER_NAME,
            names::LABEL_SERVER_VERSION,
            names::LABEL_MCP_METHOD_NAME,
            names::LABEL_GEN_AI_TOOL_NAME,
            names::LABEL_ERROR_TYPE,
        ] {
            assert_eq!(attribute_key(label).replace('.', "_"), label);
        }
    }
}
