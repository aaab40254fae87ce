use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Writes the W3C trace context (`traceparent`, and `tracestate` when there is one) of `span` into
/// an MCP request's `params._meta`, so the server's spans join the trace.
///
/// Writes nothing when the span is not recorded by a `tracing-opentelemetry` layer (no exporter
/// installed, or the span filtered out): there is no trace to join.
pub fn inject_trace_context(span: &tracing::Span, meta: &mut Map<String, Value>) {
    let cx = span.context();
    TraceContextPropagator::new().inject_context(&cx, &mut MetaInjector(meta));
}

/// [`inject_trace_context`] into an optional `_meta`, creating it only when there is a trace to
/// join (so calls without OpenTelemetry carry no empty `_meta`).
pub(crate) fn inject_into_optional_meta(
    span: &tracing::Span,
    meta: &mut Option<Map<String, Value>>,
) {
    use opentelemetry::trace::TraceContextExt;
    let cx = span.context();
    if cx.span().span_context().is_valid() {
        TraceContextPropagator::new()
            .inject_context(&cx, &mut MetaInjector(meta.get_or_insert_with(Map::new)));
    }
}

/// [`inject_trace_context`] for the current span.
pub fn inject_current_trace_context(meta: &mut Map<String, Value>) {
    inject_trace_context(&tracing::Span::current(), meta);
}

/// Reads a W3C trace context out of a request's `_meta` (the server side of
/// [`inject_trace_context`]); use the result with `OpenTelemetrySpanExt::set_parent`.
pub fn extract_trace_context(meta: &Map<String, Value>) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&MetaExtractor(meta))
}

struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

struct MetaExtractor<'a>(&'a Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}
