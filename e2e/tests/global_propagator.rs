//! A text-map propagator the user installed globally (`opentelemetry::global`) is the one that
//! writes the trace context into a call's `_meta`.
//!
//! Alone in its binary on purpose: it installs a process-wide propagator, which every other test
//! that injects trace context in the same process would then see.

use serde_json::Value;

#[test]
fn a_global_propagator_the_user_installed_writes_the_trace_context_into_meta() {
    use opentelemetry::propagation::text_map_propagator::FieldIter;
    use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
    use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
    use tracing_subscriber::layer::SubscriberExt as _;

    /// A B3-style single-header propagator.
    #[derive(Debug)]
    struct SingleHeader(Vec<String>);

    impl TextMapPropagator for SingleHeader {
        fn inject_context(&self, cx: &opentelemetry::Context, injector: &mut dyn Injector) {
            let span = cx.span();
            let sc = span.span_context();
            injector.set("b3", format!("{}-{}-1", sc.trace_id(), sc.span_id()));
        }
        fn extract_with_context(
            &self,
            cx: &opentelemetry::Context,
            _extractor: &dyn Extractor,
        ) -> opentelemetry::Context {
            cx.clone()
        }
        fn fields(&self) -> FieldIter<'_> {
            FieldIter::new(&self.0)
        }
    }

    opentelemetry::global::set_text_map_propagator(SingleHeader(vec!["b3".into()]));
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("tools/call echo");
        let mut meta = serde_json::Map::new();
        mcp_readiness::telemetry::inject_trace_context(&span, &mut meta);
        assert!(
            meta.get("b3")
                .and_then(Value::as_str)
                .is_some_and(|v| v.ends_with("-1")),
            "{meta:?}"
        );
        assert!(!meta.contains_key("traceparent"), "{meta:?}");
    });
}
