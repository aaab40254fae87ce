use std::fmt;

use opentelemetry_sdk::trace::Sampler;

use super::error::TelemetryError;
use crate::secret::redact;

/// The log filter used when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "warn,mcp_readiness=info,rmcp=off";

/// The service name used when `OTEL_SERVICE_NAME` is not set.
pub const DEFAULT_SERVICE_NAME: &str = env!("CARGO_PKG_NAME");

/// Everything [`Telemetry`](super::Telemetry) needs; build it from the standard environment
/// variables ([`TelemetryConfig::from_env`]) or by hand.
///
/// ```
/// use mcp_readiness::telemetry::{OtlpConfig, TelemetryConfig};
///
/// let env = |name: &str| match name {
///     "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318".to_owned()),
///     "OTEL_SERVICE_NAME" => Some("nightly-agent".to_owned()),
///     _ => None,
/// };
/// let config = TelemetryConfig::from_env_with(env).unwrap();
/// assert_eq!(config.otlp, Some(OtlpConfig::http("http://collector:4318/v1/traces")));
/// assert_eq!(config.service_name, "nightly-agent");
///
/// // Without an endpoint variable, no exporter: only the log lines on stderr.
/// assert_eq!(TelemetryConfig::from_env_with(|_| None).unwrap().otlp, None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetryConfig {
    /// `tracing-subscriber` filter directives (`RUST_LOG`; default [`DEFAULT_FILTER`]).
    pub filter: String,
    /// Whether to print log lines to stderr (the `fmt` layer). Default `true`.
    pub fmt: bool,
    /// The resource's `service.name` (`OTEL_SERVICE_NAME`; default [`DEFAULT_SERVICE_NAME`]).
    pub service_name: String,
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Vec<(String, String)>,
    /// Where to export spans; `None` installs no exporter.
    pub otlp: Option<OtlpConfig>,
    /// Which traces to record (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`).
    pub sampler: TraceSampler,
}

impl Default for TelemetryConfig {
    /// Logs at `info` to stderr, no exporter.
    fn default() -> Self {
        TelemetryConfig {
            filter: DEFAULT_FILTER.to_owned(),
            fmt: true,
            service_name: DEFAULT_SERVICE_NAME.to_owned(),
            resource_attributes: Vec::new(),
            otlp: None,
            sampler: TraceSampler::default(),
        }
    }
}

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP over gRPC (`grpc`, usually port 4317).
    Grpc,
    /// OTLP protobuf over HTTP (`http/protobuf`, usually port 4318, path `/v1/traces`).
    HttpProtobuf,
}

impl Protocol {
    /// The protocol used when no `OTEL_EXPORTER_OTLP_*PROTOCOL` variable names one:
    /// `http/protobuf`, as the specification says, when this program was built with it (feature
    /// `otlp-http`); otherwise `grpc`, the one it was built with, so the default always works.
    pub const DEFAULT: Protocol = Protocol::default_of(cfg!(feature = "otlp-http"));

    /// The default for a build that has (or lacks) the HTTP exporter (see [`Protocol::DEFAULT`]).
    const fn default_of(http_built: bool) -> Protocol {
        if http_built {
            Protocol::HttpProtobuf
        } else {
            Protocol::Grpc
        }
    }

    /// The protocol's name in `OTEL_EXPORTER_OTLP_PROTOCOL`: `grpc` or `http/protobuf`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::HttpProtobuf => "http/protobuf",
        }
    }
}

/// Where spans go.
#[derive(Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// The exact URL: the gRPC endpoint, or the HTTP URL spans are POSTed to (with its
    /// `/v1/traces` path).
    pub endpoint: String,
    /// The transport.
    pub protocol: Protocol,
}

impl OtlpConfig {
    /// OTLP/gRPC to `endpoint`, e.g. `http://127.0.0.1:4317`.
    pub fn grpc(endpoint: impl Into<String>) -> Self {
        OtlpConfig {
            endpoint: endpoint.into(),
            protocol: Protocol::Grpc,
        }
    }

    /// OTLP/HTTP protobuf POSTed to `traces_url`, e.g. `http://127.0.0.1:4318/v1/traces`.
    pub fn http(traces_url: impl Into<String>) -> Self {
        OtlpConfig {
            endpoint: traces_url.into(),
            protocol: Protocol::HttpProtobuf,
        }
    }
}

impl fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpConfig")
            .field("endpoint", &redact(&self.endpoint, &[]))
            .field("protocol", &self.protocol)
            .finish()
    }
}

/// The standard samplers of `OTEL_TRACES_SAMPLER`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TraceSampler {
    /// `always_on`.
    AlwaysOn,
    /// `always_off`.
    AlwaysOff,
    /// `traceidratio` with its ratio.
    TraceIdRatio(f64),
    /// `parentbased_always_on` (the default).
    #[default]
    ParentBasedAlwaysOn,
    /// `parentbased_always_off`.
    ParentBasedAlwaysOff,
    /// `parentbased_traceidratio` with its ratio.
    ParentBasedTraceIdRatio(f64),
}

impl TraceSampler {
    /// The SDK sampler.
    pub fn to_sampler(self) -> Sampler {
        match self {
            TraceSampler::AlwaysOn => Sampler::AlwaysOn,
            TraceSampler::AlwaysOff => Sampler::AlwaysOff,
            TraceSampler::TraceIdRatio(r) => Sampler::TraceIdRatioBased(r),
            TraceSampler::ParentBasedAlwaysOn => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
            TraceSampler::ParentBasedAlwaysOff => {
                Sampler::ParentBased(Box::new(Sampler::AlwaysOff))
            }
            TraceSampler::ParentBasedTraceIdRatio(r) => {
                Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(r)))
            }
        }
    }
}

impl TelemetryConfig {
    /// Reads the process environment: see [`TelemetryConfig::from_env_with`].
    pub fn from_env() -> Result<Self, TelemetryError> {
        TelemetryConfig::from_env_with(|name| std::env::var(name).ok())
    }

    /// Reads the standard variables through `env` (an empty value counts as unset):
    ///
    /// - `RUST_LOG`: the log filter;
    /// - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (HTTP
    ///   appends `/v1/traces`): without either, no exporter is installed;
    /// - `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`: `grpc` or
    ///   `http/protobuf` (the default when this program has it: [`Protocol::DEFAULT`]);
    /// - `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`);
    /// - `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`;
    /// - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn the exporter off.
    ///
    /// The exporter itself still reads `OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`,
    /// `..._COMPRESSION` and the `OTEL_BSP_*` batch settings from the process environment.
    pub fn from_env_with(env: impl Fn(&str) -> Option<String>) -> Result<Self, TelemetryError> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut config = TelemetryConfig::default();
        if let Some(filter) = var("RUST_LOG") {
            config.filter = filter;
        }
        (config.service_name, config.resource_attributes) = resource_from_env(&var)?;
        config.sampler = sampler(&var, &invalid)?;
        config.otlp = otlp_from_env(&var, Signal::TRACES)?;
        Ok(config)
    }
}

fn invalid(name: &str, value: &str, expected: &str) -> TelemetryError {
    TelemetryError::InvalidVariable {
        name: name.to_owned(),
        value: value.to_owned(),
        expected: expected.to_owned(),
    }
}

/// The resource's `service.name` and other attributes: `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`.
pub(super) fn resource_from_env(
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, Vec<(String, String)>), TelemetryError> {
    let mut attributes = Vec::new();
    for (name, value) in var("OTEL_RESOURCE_ATTRIBUTES")
        .iter()
        .flat_map(|v| v.split(','))
        .filter(|kv| !kv.trim().is_empty())
        .map(|kv| (kv, kv.split_once('=')))
    {
        match value {
            Some((k, v)) if !k.trim().is_empty() => {
                attributes.push((k.trim().to_owned(), v.trim().to_owned()));
            }
            _ => {
                let all = var("OTEL_RESOURCE_ATTRIBUTES").unwrap_or_default();
                return Err(invalid(
                    "OTEL_RESOURCE_ATTRIBUTES",
                    &all,
                    &format!("key=value pairs separated by commas (`{name}` has no key)"),
                ));
            }
        }
    }
    let service_name = if let Some(name) = var("OTEL_SERVICE_NAME") {
        name
    } else if let Some((_, name)) = attributes.iter().find(|(k, _)| k == "service.name") {
        name.clone()
    } else {
        DEFAULT_SERVICE_NAME.to_owned()
    };
    Ok((service_name, attributes))
}

/// One OTLP signal's variables: `OTEL_EXPORTER_OTLP_{name}_ENDPOINT` and `_PROTOCOL`, the generic
/// endpoint's HTTP path, and the `OTEL_{name}_EXPORTER` switch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Signal {
    endpoint: &'static str,
    protocol: &'static str,
    http_path: &'static str,
    exporter: &'static str,
}

impl Signal {
    pub(super) const TRACES: Signal = Signal {
        endpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        protocol: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        http_path: "/v1/traces",
        exporter: "OTEL_TRACES_EXPORTER",
    };
    #[cfg(feature = "otel-metrics")]
    pub(super) const METRICS: Signal = Signal {
        endpoint: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        protocol: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        http_path: "/v1/metrics",
        exporter: "OTEL_METRICS_EXPORTER",
    };
}

/// Where the signal goes: `None` without an endpoint variable, or when `OTEL_SDK_DISABLED=true`
/// or the signal's exporter is `none`.
pub(super) fn otlp_from_env(
    var: &dyn Fn(&str) -> Option<String>,
    signal: Signal,
) -> Result<Option<OtlpConfig>, TelemetryError> {
    let protocol_var = [signal.protocol, "OTEL_EXPORTER_OTLP_PROTOCOL"]
        .into_iter()
        .find_map(|name| var(name).map(|value| (name, value)));
    let protocol = match protocol_var {
        None => Protocol::DEFAULT,
        Some((name, value)) => match value.trim() {
            "grpc" => Protocol::Grpc,
            "http/protobuf" => Protocol::HttpProtobuf,
            _ => return Err(invalid(name, &value, "`grpc` or `http/protobuf`")),
        },
    };

    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let exporter_on = match var(signal.exporter).as_deref().map(str::trim) {
        None | Some("otlp") => true,
        Some("none") => false,
        Some(other) => {
            return Err(invalid(signal.exporter, other, "`otlp` or `none`"));
        }
    };
    let endpoint = if let Some(url) = var(signal.endpoint) {
        Some((signal.endpoint, url.trim().to_owned()))
    } else {
        var("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| {
            let base = base.trim();
            let url = match protocol {
                Protocol::Grpc => base.to_owned(),
                Protocol::HttpProtobuf => {
                    format!("{}{}", base.trim_end_matches('/'), signal.http_path)
                }
            };
            ("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        })
    };
    let Some((name, url)) = endpoint else {
        return Ok(None);
    };
    if !exporter_on || disabled {
        return Ok(None);
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Err(invalid(
            name,
            &redact(&url, &[]),
            "an http:// or https:// URL",
        ));
    }
    Ok(Some(OtlpConfig {
        endpoint: url,
        protocol,
    }))
}

fn sampler(
    var: &dyn Fn(&str) -> Option<String>,
    invalid: &dyn Fn(&str, &str, &str) -> TelemetryError,
) -> Result<TraceSampler, TelemetryError> {
    let Some(name) = var("OTEL_TRACES_SAMPLER") else {
        return Ok(TraceSampler::default());
    };
    let ratio = || -> Result<f64, TelemetryError> {
        match var("OTEL_TRACES_SAMPLER_ARG") {
            None => Ok(1.0),
            Some(arg) => arg
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| invalid("OTEL_TRACES_SAMPLER_ARG", &arg, "a ratio between 0 and 1")),
        }
    };
    Ok(match name.trim() {
        "always_on" => TraceSampler::AlwaysOn,
        "always_off" => TraceSampler::AlwaysOff,
        "traceidratio" => TraceSampler::TraceIdRatio(ratio()?),
        "parentbased_always_on" => TraceSampler::ParentBasedAlwaysOn,
        "parentbased_always_off" => TraceSampler::ParentBasedAlwaysOff,
        "parentbased_traceidratio" => TraceSampler::ParentBasedTraceIdRatio(ratio()?),
        _ => {
            return Err(invalid(
                "OTEL_TRACES_SAMPLER",
                &name,
                "always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio",
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<TelemetryConfig, TelemetryError> {
        TelemetryConfig::from_env_with(crate::telemetry::shutdown::env_of(vars))
    }

    #[test]
    fn the_default_protocol_is_always_one_this_program_was_built_with() {
        assert_eq!(Protocol::default_of(true), Protocol::HttpProtobuf);
        assert_eq!(Protocol::default_of(false), Protocol::Grpc);
        let built = match Protocol::DEFAULT {
            Protocol::Grpc => cfg!(feature = "otlp-grpc"),
            Protocol::HttpProtobuf => cfg!(feature = "otlp-http"),
        };
        assert!(built, "{:?} is not built", Protocol::DEFAULT);
        let config = from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]).unwrap();
        assert_eq!(config.otlp.unwrap().protocol, Protocol::DEFAULT);
    }

    #[test]
    fn without_an_endpoint_variable_no_exporter_is_configured() {
        let config = from(&[
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_SERVICE_NAME", "x"),
        ])
        .unwrap();
        assert_eq!(config.otlp, None);
        assert_eq!(config.filter, DEFAULT_FILTER);
        assert_eq!(
            from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]).unwrap().otlp,
            None
        );
    }

    #[test]
    fn the_standard_variables_choose_the_traces_endpoint() {
        for (vars, expected) in
            crate::telemetry::shutdown::endpoint_cases("TRACES", "METRICS", "/v1/traces")
        {
            let vars: Vec<(&str, &str)> =
                vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(from(&vars).unwrap().otlp, expected, "{vars:?}");
        }
    }

    #[test]
    fn service_name_and_resource_attributes_follow_the_spec_precedence() {
        let config = from(&[(
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=from-attrs, deployment.environment=prod",
        )])
        .unwrap();
        assert_eq!(config.service_name, "from-attrs");
        assert_eq!(
            config.resource_attributes[1],
            ("deployment.environment".to_owned(), "prod".to_owned())
        );
        let config = from(&[
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=a"),
            ("OTEL_SERVICE_NAME", "b"),
        ])
        .unwrap();
        assert_eq!(config.service_name, "b");
        assert_eq!(from(&[]).unwrap().service_name, "mcp-readiness");
    }

    #[test]
    fn samplers_parse_with_their_ratio() {
        let s = |name: &str, arg: Option<&str>| {
            let mut vars = vec![("OTEL_TRACES_SAMPLER", name)];
            vars.extend(arg.map(|a| ("OTEL_TRACES_SAMPLER_ARG", a)));
            from(&vars).map(|c| c.sampler)
        };
        assert_eq!(s("always_off", None).unwrap(), TraceSampler::AlwaysOff);
        assert_eq!(
            s("traceidratio", Some("0.25")).unwrap(),
            TraceSampler::TraceIdRatio(0.25)
        );
        assert_eq!(
            s("parentbased_traceidratio", None).unwrap(),
            TraceSampler::ParentBasedTraceIdRatio(1.0)
        );
        assert_eq!(
            s("traceidratio", Some("2")).unwrap_err().to_string(),
            "OTEL_TRACES_SAMPLER_ARG=\"2\" is not valid: expected a ratio between 0 and 1"
        );
        assert!(
            s("xray", None)
                .unwrap_err()
                .to_string()
                .starts_with("OTEL_TRACES_SAMPLER=\"xray\" is not valid")
        );
    }

    #[test]
    fn bad_values_name_the_variable_and_hide_credentials() {
        assert_eq!(
            from(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")])
                .unwrap_err()
                .to_string(),
            "OTEL_EXPORTER_OTLP_PROTOCOL=\"http/json\" is not valid: expected `grpc` or `http/protobuf`"
        );
        let err = from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://user:hunter2@c")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "OTEL_EXPORTER_OTLP_ENDPOINT=\"ftp://[redacted]@c/[redacted]\" is not valid: expected an http:// or https:// URL"
        );
        let debug = format!(
            "{:?}",
            from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://u:hunter2@c")]).unwrap()
        );
        assert!(!debug.contains("hunter2"), "{debug}");
    }
}
