use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Writes the W3C trace context (`traceparent`, and `tracestate` when there is one) of `span` into
/// an MCP request's `params._meta`, so the server's spans join the trace. When a global
/// propagator other than W3C trace context is installed
/// (`opentelemetry::global::set_text_map_propagator`, e.g. a composite or B3 one), it writes
/// its fields instead.
///
/// Writes nothing when the span is not recorded by a `tracing-opentelemetry` layer (no exporter
/// installed, or the span filtered out): there is no trace to join.
pub fn inject_trace_context(span: &tracing::Span, meta: &mut Map<String, Value>) {
    with_trace_to_join(span, |injection| injection.write(meta));
}

/// Puts `detached` (a span created with `parent: None`) into the OpenTelemetry trace of the
/// current span, as its child, without making it a `tracing` child: work that outlives its
/// caller (a connection attempt started by a run that has since ended) must not hold the caller's
/// span open in the subscriber, which would delay its export until the work ends. Does nothing
/// when the current span has no OpenTelemetry context.
#[cfg(feature = "hub")]
pub(crate) fn join_current_trace(detached: &tracing::Span) {
    let current = tracing::Span::current();
    if current.is_none() {
        return;
    }
    let cx = current.context();
    if cx.span().span_context().is_valid() {
        let _ = detached.set_parent(cx);
    }
}

/// [`inject_trace_context`] into an optional `_meta`, creating it only when there is a trace to
/// join (so calls without OpenTelemetry carry no empty `_meta`).
#[inline]
pub(crate) fn inject_into_optional_meta(
    span: &tracing::Span,
    meta: &mut Option<Map<String, Value>>,
) {
    // Inlined, so a call whose span is disabled costs one comparison.
    if !span.is_disabled() {
        inject_into_optional_meta_slow(span, meta);
    }
}

fn inject_into_optional_meta_slow(span: &tracing::Span, meta: &mut Option<Map<String, Value>>) {
    with_trace_to_join(span, |injection| {
        injection.write(meta.get_or_insert_with(Map::new));
    });
}

/// Calls `write` with `span`'s OpenTelemetry span context, when it has a valid one.
fn with_trace_to_join(span: &tracing::Span, write: impl FnOnce(Injection<'_>)) {
    // A disabled span has no subscriber, so no OpenTelemetry context: skip building an empty one.
    if span.is_disabled() {
        return;
    }
    let cx = span.context();
    let current = cx.span();
    if !current.span_context().is_valid() {
        return;
    }
    // W3C trace context is written directly (fast); a global propagator the user installed
    // (composite, B3, ...) writes its own fields instead.
    let w3c = opentelemetry::global::get_text_map_propagator(is_w3c_or_none);
    if w3c {
        write(Injection::W3c(current.span_context()));
    } else {
        write(Injection::Global(&cx));
    }
}

/// How a trace context is written.
enum Injection<'a> {
    /// By [`write_trace_context`].
    W3c(&'a SpanContext),
    /// By the global propagator.
    Global(&'a opentelemetry::Context),
}

impl Injection<'_> {
    fn write(self, meta: &mut Map<String, Value>) {
        match self {
            Injection::W3c(span_context) => write_trace_context(span_context, meta),
            Injection::Global(cx) => opentelemetry::global::get_text_map_propagator(|p| {
                p.inject_context(cx, &mut MetaInjector(meta));
            }),
        }
    }
}

/// Whether the propagator writes W3C trace context alone (the SDK's `TraceContextPropagator`) or
/// nothing (no global propagator installed: W3C is the default here).
fn is_w3c_or_none(propagator: &dyn TextMapPropagator) -> bool {
    let mut fields = propagator.fields();
    matches!(
        (fields.next(), fields.next(), fields.next()),
        (None, _, _)
            | (Some("traceparent"), Some("tracestate"), None)
            | (Some("tracestate"), Some("traceparent"), None)
    )
}

struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl opentelemetry::propagation::Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// Writes `traceparent`, and `tracestate` unless it is empty: the text `TraceContextPropagator`
/// writes (a test checks they agree), without its `format!`, whose padding and `u128`
/// formatting were the larger part of injecting on every call.
fn write_trace_context(span_context: &SpanContext, meta: &mut Map<String, Value>) {
    let Some(traceparent) = traceparent(span_context) else {
        return;
    };
    meta.insert("traceparent".to_owned(), Value::String(traceparent));
    let state = span_context.trace_state().header();
    if !state.is_empty() {
        meta.insert("tracestate".to_owned(), Value::String(state));
    }
}

/// `00-{trace id}-{span id}-{flags}` in lowercase hex, with only the sampled flag kept (as the
/// propagator does). Every length is fixed, so it is never `None`.
fn traceparent(span_context: &SpanContext) -> Option<String> {
    let mut text = [0u8; 55];
    text[..3].copy_from_slice(b"00-");
    encode_hex(&span_context.trace_id().to_bytes(), &mut text[3..35]);
    text[35] = b'-';
    encode_hex(&span_context.span_id().to_bytes(), &mut text[36..52]);
    text[52] = b'-';
    let flags = span_context.trace_flags() & TraceFlags::SAMPLED;
    encode_hex(&[flags.to_u8()], &mut text[53..]);
    std::str::from_utf8(&text).ok().map(str::to_owned)
}

/// Writes `bytes` to `out` (twice as long) in lowercase hex: three calls above, not a crate.
fn encode_hex(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (byte, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
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

struct MetaExtractor<'a>(&'a Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanId, TraceId, TraceState};
    use proptest::prelude::*;

    /// What the SDK's propagator writes for `span_context`.
    fn by_the_propagator(span_context: &SpanContext) -> Map<String, Value> {
        let cx = opentelemetry::Context::new().with_remote_span_context(span_context.clone());
        let mut meta = Map::new();
        TraceContextPropagator::new().inject_context(&cx, &mut MetaInjector(&mut meta));
        meta
    }

    proptest! {
        #[test]
        fn traceparent_is_what_the_propagator_writes(
            trace in 1u128..,
            span in 1u64..,
            flags: u8,
            with_state: bool,
        ) {
            let state = if with_state {
                TraceState::from_key_value([("vendor", "value")]).unwrap()
            } else {
                TraceState::default()
            };
            let span_context = SpanContext::new(
                TraceId::from(trace),
                SpanId::from(span),
                TraceFlags::new(flags),
                false,
                state,
            );
            let mut ours = Map::new();
            write_trace_context(&span_context, &mut ours);
            let mut theirs = by_the_propagator(&span_context);
            // The propagator also writes an empty `tracestate`; an empty one means none.
            if theirs.get("tracestate").and_then(Value::as_str) == Some("") {
                theirs.remove("tracestate");
            }
            prop_assert_eq!(ours, theirs);
        }
    }
}
