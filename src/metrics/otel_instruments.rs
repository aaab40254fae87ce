//! The recorder's metrics through the OpenTelemetry metrics API (feature `otel-metrics`), on a
//! [`Meter`] given to [`MetricsBuilder::meter`](super::MetricsBuilder::meter).
//!
//! - Gauges and counters are asynchronous instruments whose callbacks read the recorder's series
//!   when the SDK collects (a reader's interval, a flush): recording them costs nothing more.
//! - The three histograms (resolve waits, connect durations, `mcp.client.operation.duration`) are
//!   recorded where the Prometheus histogram is observed, with the same bucket bounds.
//!
//! Names, units and attribute keys are in [`otel_names`](super::otel_names).

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{AsyncInstrument, BoundHistogram, Histogram, Meter};

use super::domain_families::Families;
use super::names::{self, OPERATION_BUCKETS, WAIT_BUCKETS};
use super::otel_connection::{Connection, OperationKey};
use super::otel_names::{
    self, ATTR_ERROR_TYPE, ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_NAME, ATTR_MCP_METHOD_NAME,
    ATTR_MCP_PROTOCOL_VERSION, ATTR_NETWORK_TRANSPORT, ATTR_RPC_RESPONSE_STATUS_CODE, ATTR_SERVER,
    ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, Instrument,
};
use crate::exposition::{Child, Counter, Family, Gauge, IntCounter, IntGauge};
use crate::state::{ConnectResult, State};

/// The synchronous instruments, recorded from the handles.
pub(crate) struct OtelInstruments {
    resolve_wait: Histogram<f64>,
    connect_duration: Histogram<f64>,
    operation: Histogram<f64>,
}

impl std::fmt::Debug for OtelInstruments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelInstruments").finish_non_exhaustive()
    }
}

fn spec(prometheus: &str) -> &'static Instrument {
    match otel_names::instrument(prometheus) {
        Some(instrument) => instrument,
        None => unreachable!("{prometheus} has no OpenTelemetry instrument"),
    }
}

fn histogram(
    meter: &Meter,
    family: &Family<crate::exposition::Histogram>,
    bounds: &[f64],
) -> Histogram<f64> {
    let spec = spec(family.name);
    meter
        .f64_histogram(spec.name)
        .with_unit(spec.unit)
        .with_description(family.desc.help.clone())
        .with_boundaries(bounds.to_vec())
        .build()
}

/// Every series of `family` now, with its labels as attributes.
fn each_series<M: Child>(family: &Family<M>, mut observe: impl FnMut(&M, &[KeyValue])) {
    let keys: Vec<&'static str> = family
        .label_names()
        .map(otel_names::attribute_key)
        .collect();
    let series = family.series();
    let mut attributes = Vec::with_capacity(keys.len());
    for (values, entry) in series.iter() {
        attributes.clear();
        attributes.extend(
            keys.iter()
                .zip(values.iter())
                .map(|(key, value)| KeyValue::new(*key, value.to_string())),
        );
        observe(&entry.child, &attributes);
    }
}

/// How a family is observed: by the kind of its series.
trait Observed: Child {
    fn register(meter: &Meter, family: Arc<Family<Self>>);
}

fn described<'a, I, M>(
    builder: opentelemetry::metrics::AsyncInstrumentBuilder<'a, I, M>,
    family: &Family<impl Child>,
) -> opentelemetry::metrics::AsyncInstrumentBuilder<'a, I, M> {
    let spec = spec(family.name);
    builder
        .with_unit(spec.unit)
        .with_description(Cow::Owned(family.desc.help.clone()))
}

impl Observed for IntCounter {
    fn register(meter: &Meter, family: Arc<Family<Self>>) {
        described(
            meter.u64_observable_counter(spec(family.name).name),
            &family,
        )
        .with_callback(move |observer: &dyn AsyncInstrument<u64>| {
            each_series(&family, |c, attributes| {
                observer.observe(c.get(), attributes)
            });
        })
        .build();
    }
}

impl Observed for Counter {
    fn register(meter: &Meter, family: Arc<Family<Self>>) {
        described(
            meter.f64_observable_counter(spec(family.name).name),
            &family,
        )
        .with_callback(move |observer: &dyn AsyncInstrument<f64>| {
            each_series(&family, |c, attributes| {
                observer.observe(c.get(), attributes)
            });
        })
        .build();
    }
}

impl Observed for IntGauge {
    fn register(meter: &Meter, family: Arc<Family<Self>>) {
        described(meter.i64_observable_gauge(spec(family.name).name), &family)
            .with_callback(move |observer: &dyn AsyncInstrument<i64>| {
                each_series(&family, |g, attributes| {
                    observer.observe(g.get(), attributes)
                });
            })
            .build();
    }
}

impl Observed for Gauge {
    fn register(meter: &Meter, family: Arc<Family<Self>>) {
        described(meter.f64_observable_gauge(spec(family.name).name), &family)
            .with_callback(move |observer: &dyn AsyncInstrument<f64>| {
                each_series(&family, |g, attributes| {
                    observer.observe(g.get(), attributes)
                });
            })
            .build();
    }
}

fn observe<M: Observed>(meter: &Meter, family: &Arc<Family<M>>) {
    M::register(meter, family.clone());
}

impl OtelInstruments {
    /// Declares every instrument of `fam` on `meter`: the asynchronous ones read `fam`'s series.
    pub(crate) fn new(meter: &Meter, fam: &Families) -> OtelInstruments {
        observe(meter, &fam.server_state);
        observe(meter, &fam.state_changed);
        observe(meter, &fam.server_tools);
        observe(meter, &fam.waste);
        observe(meter, &fam.avoided);
        observe(meter, &fam.budget_exhausted);
        observe(meter, &fam.tool_calls);
        observe(meter, &fam.tool_absent);
        observe(meter, &fam.connects);
        observe(meter, &fam.wait_budget);
        observe(meter, &fam.reconnects);
        observe(meter, &fam.stream_reopens);
        observe(meter, &fam.cooldown);
        observe(meter, &fam.build_info);
        observe(meter, &fam.state_changes);
        observe(meter, &fam.reload_ok);
        observe(meter, &fam.reload_time);
        observe(meter, &fam.probe_modules);
        observe(meter, &fam.server_info);
        observe(meter, &fam.credential_expiry);
        observe(meter, &fam.next_attempt);
        observe(meter, &fam.tls_certificate_expiry);
        OtelInstruments {
            resolve_wait: histogram(meter, &fam.resolve_wait, &WAIT_BUCKETS),
            connect_duration: histogram(meter, &fam.connect_duration, &WAIT_BUCKETS),
            operation: histogram(meter, &fam.operation, &OPERATION_BUCKETS),
        }
    }

    /// One series of `mcp_readiness.connect.duration`, bound once: what a server handle keeps per
    /// result. Binding makes the series exist at 0 over OTLP too (with cumulative temporality),
    /// as the scrape's zeroed `result="ok"` series does.
    pub(crate) fn connect_duration_series(
        &self,
        server: &Arc<str>,
        result: ConnectResult,
    ) -> BoundSeries {
        BoundSeries(self.connect_duration.bind(&[
            KeyValue::new(ATTR_SERVER, server.clone()),
            KeyValue::new(names::LABEL_RESULT, result.as_str()),
        ]))
    }

    /// One series of `mcp_readiness.resolve.wait`, bound once: what a handle keeps per state.
    pub(crate) fn resolve_wait_series(&self, server: &Arc<str>, state: State) -> BoundSeries {
        BoundSeries(self.resolve_wait.bind(&[
            KeyValue::new(ATTR_SERVER, server.clone()),
            KeyValue::new(names::LABEL_STATE, state.as_str()),
        ]))
    }

    /// One series of `mcp.client.operation.duration`, bound once: the scrape's labels as
    /// `mcp.method.name`, `gen_ai.tool.name`, `error.type` (when it failed: `error_type` not
    /// empty) and `server`, and the semantic conventions' recommended attributes the scrape has
    /// no label for: `gen_ai.operation.name = execute_tool` on `tools/call`, the connection's
    /// `network.transport`, `server.address`, `server.port` and `mcp.protocol.version` (as far
    /// as they are known), and `rpc.response.status_code` when `error_type` is a JSON-RPC code.
    pub(crate) fn operation_series(
        &self,
        key: &OperationKey<'_>,
        connection: &Connection,
    ) -> BoundSeries {
        let mut attributes = vec![
            KeyValue::new(ATTR_MCP_METHOD_NAME, key.method.to_owned()),
            KeyValue::new(ATTR_GEN_AI_TOOL_NAME, key.tool.clone()),
        ];
        if !key.error_type.is_empty() {
            attributes.push(KeyValue::new(ATTR_ERROR_TYPE, key.error_type.to_owned()));
            if key.error_type.parse::<i64>().is_ok() {
                attributes.push(KeyValue::new(
                    ATTR_RPC_RESPONSE_STATUS_CODE,
                    key.error_type.to_owned(),
                ));
            }
        }
        if key.method == "tools/call" {
            attributes.push(KeyValue::new(ATTR_GEN_AI_OPERATION_NAME, "execute_tool"));
        }
        attributes.push(KeyValue::new(ATTR_SERVER, key.server.clone()));
        if let Some(endpoint) = &connection.endpoint {
            if endpoint.transport != "unknown" {
                attributes.push(KeyValue::new(ATTR_NETWORK_TRANSPORT, endpoint.transport));
            }
            if let Some(address) = &endpoint.address {
                attributes.push(KeyValue::new(ATTR_SERVER_ADDRESS, address.clone()));
            }
            if let Some(port) = endpoint.port {
                attributes.push(KeyValue::new(ATTR_SERVER_PORT, i64::from(port)));
            }
        }
        if let Some(version) = &connection.protocol_version {
            attributes.push(KeyValue::new(ATTR_MCP_PROTOCOL_VERSION, version.clone()));
        }
        BoundSeries(self.operation.bind(&attributes))
    }
}

/// One histogram series with its attributes resolved once (the SDK's bound instrument): recording
/// takes no attribute lookup.
pub(crate) struct BoundSeries(BoundHistogram<f64>);

impl BoundSeries {
    pub(crate) fn record(&self, seconds: f64) {
        self.0.record(seconds);
    }
}
