use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::FutureExt;
use rmcp::model::CallToolResult;
use tower::{BoxError, Service};

use super::future::{Recorder, ResponseFuture};
use super::handles::{CallHandles, HandlesView, LayerShared, ReadyHit, ToolHandles};
use super::hooks::{OnNotReady, OnOutcome};
use super::not_ready::NotReady;
use super::span::{call_span, record_verdict};
use crate::ready_path::{CallStart, Recycled};
use crate::resolve::{Scope, Verdict};
use crate::state::{State, ToolCall};
use crate::telemetry::inject_into_optional_meta as inject_trace_context;

/// The service [`ReadinessLayer`](crate::ReadinessLayer) produces.
///
/// - `poll_ready` passes through to the inner service.
/// - `call` resolves the tool through the capability cache. A ready tool goes to the inner
///   service (a cache hit takes the fast path: no allocation for the resolution, no lock); anything
///   else returns [`NotReady`] **without calling the inner service**.
/// - Every call is classified exactly once: `ok`, `tool_error`, `not_ready`, `transport_error`,
///   `timeout`, or `cancelled` when the caller drops the future before it completes.
pub struct ReadinessService<S, N = (), O = ()> {
    pub(crate) inner: S,
    pub(crate) shared: Arc<LayerShared>,
    /// This service's view of `shared`'s handles map.
    pub(crate) handles: HandlesView,
    pub(crate) on_not_ready: N,
    pub(crate) on_outcome: O,
}

impl<S, N, O> Service<ToolCall> for ReadinessService<S, N, O>
where
    S: Service<ToolCall, Response = CallToolResult> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    N: OnNotReady,
    O: OnOutcome,
{
    type Response = CallToolResult;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, O>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut call: ToolCall) -> Self::Future {
        // Fast path: a fresh ready verdict for this very tool (one clock read serves the
        // freshness check and the call's start).
        if let Some(ReadyHit {
            start,
            record,
            span,
        }) = self
            .shared
            .ready_hit(&mut self.handles, &call.name, |handles| {
                call_span(
                    &call.name,
                    &handles.otel_name,
                    handles.transport,
                    Some(&Verdict::READY),
                )
            })
        {
            let recorder = Recorder::new(&call.name, record, self.on_outcome.clone(), start);
            inject_trace_context(&span, &mut call.meta);
            let future = {
                let _entered = span.enter();
                self.inner.call(call)
            };
            return ResponseFuture::calling(future, span, recorder);
        }

        // Slow path: resolve (maybe wait), then call the inner service that poll_ready readied.
        let ToolHandles {
            record,
            transport,
            otel_name,
            ..
        } = self.shared.handles(&call.name);
        let record = record.as_ref().map(CallHandles::take);
        let span = call_span(&call.name, &otel_name, transport, None);
        let absent_counter = record.clone();
        let start = CallStart::tokio_now();
        let recorder = Recorder::new(&call.name, record, self.on_outcome.clone(), start);
        let ready_inner = {
            let clone = self.inner.clone();
            std::mem::replace(&mut self.inner, clone)
        };
        let shared = self.shared.clone();
        let on_not_ready = self.on_not_ready.clone();
        let call_span = span.clone();
        let future = async move {
            let verdict = shared.cache.resolve(&call.name).await;
            shared.observe_resolution(&call.name, &verdict);
            record_verdict(&call_span, &verdict);
            if let Some(mut not_ready) = NotReady::from_verdict(&call.name, &verdict) {
                if not_ready.state == State::Connecting {
                    not_ready.retry_after =
                        shared.cache.inventory().next_attempt(call.name.server());
                }
                if not_ready.state == State::Absent
                    && not_ready.scope == Scope::Tool
                    && let Some(tool) = absent_counter.as_ref().and_then(|r| r.metrics.as_ref())
                {
                    tool.observe_absent();
                }
                on_not_ready.on_not_ready(&not_ready);
                return Err(Box::new(not_ready) as BoxError);
            }
            inject_trace_context(&call_span, &mut call.meta);
            let mut inner = ready_inner;
            inner.call(call).await.map_err(Into::into)
        }
        .boxed();
        ResponseFuture::resolving(future, span, recorder)
    }
}

impl<S: Clone, N: Clone, O: Clone> Clone for ReadinessService<S, N, O> {
    fn clone(&self) -> Self {
        ReadinessService {
            inner: self.inner.clone(),
            shared: self.shared.clone(),
            handles: self.handles.clone(),
            on_not_ready: self.on_not_ready.clone(),
            on_outcome: self.on_outcome.clone(),
        }
    }
}

impl<S: fmt::Debug, N, O> fmt::Debug for ReadinessService<S, N, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadinessService")
            .field("inner", &self.inner)
            .field("cache", &self.shared.cache)
            .finish_non_exhaustive()
    }
}
