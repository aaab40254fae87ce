use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::future::BoxFuture;
use pin_project_lite::pin_project;
use rmcp::model::CallToolResult;
use tower::BoxError;
use tracing::Span;

use super::classify_result::{ClassifiedCall, classify_result};
use super::handles::CallHandles;
use super::hooks::OnOutcome;
use super::span::record_error;
use crate::ready_path::{CallStart, Padded, Recycled};
use crate::state::{CallOutcome, ToolName};

pin_project! {
    /// The response future of [`ReadinessService`](super::ReadinessService). Polled inside the
    /// call's span; records the call's outcome exactly once, as `cancelled` if it is dropped first.
    pub struct ResponseFuture<F, O: OnOutcome> {
        #[pin]
        kind: Kind<F>,
        span: Span,
        recorder: Option<Recorder<O>>,
    }

    impl<F, O: OnOutcome> PinnedDrop for ResponseFuture<F, O> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(recorder) = this.recorder.take() {
                recorder.finish(
                    &ClassifiedCall { outcome: CallOutcome::Cancelled, error_type: Some("cancelled".into()), stale_ready: false },
                    this.span,
                );
            }
        }
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        /// A ready cache hit: the inner service's own future.
        Calling { #[pin] future: F },
        /// Resolving first (maybe waiting), then calling.
        Resolving { future: BoxFuture<'static, Result<CallToolResult, BoxError>> },
    }
}

impl<F, O: OnOutcome> ResponseFuture<F, O> {
    pub(crate) fn calling(future: F, span: Span, recorder: Recorder<O>) -> Self {
        ResponseFuture {
            kind: Kind::Calling { future },
            span,
            recorder: Some(recorder),
        }
    }

    pub(crate) fn resolving(
        future: BoxFuture<'static, Result<CallToolResult, BoxError>>,
        span: Span,
        recorder: Recorder<O>,
    ) -> Self {
        ResponseFuture {
            kind: Kind::Resolving { future },
            span,
            recorder: Some(recorder),
        }
    }
}

impl<F, E, O> Future for ResponseFuture<F, O>
where
    F: Future<Output = Result<CallToolResult, E>>,
    E: Into<BoxError>,
    O: OnOutcome,
{
    type Output = Result<CallToolResult, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let result = match this.kind.project() {
            KindProj::Calling { future } => ready!(future.poll(cx)).map_err(Into::into),
            KindProj::Resolving { future } => ready!(future.as_mut().poll(cx)),
        };
        if let Some(recorder) = this.recorder.take() {
            recorder.finish(&classify_result(&result), this.span);
        }
        Poll::Ready(result)
    }
}

impl<F, O: OnOutcome> fmt::Debug for ResponseFuture<F, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("span", &self.span)
            .field("finished", &self.recorder.is_none())
            .finish_non_exhaustive()
    }
}

/// Records one call's outcome into metrics, the span and the hook.
pub(crate) struct Recorder<O> {
    /// For the hook; `None` when it observes nothing.
    tool: Option<ToolName>,
    record: Option<Arc<Padded<CallHandles>>>,
    start: CallStart,
    on_outcome: O,
}

impl<O: OnOutcome> Recorder<O> {
    /// A recorder for a call that started at `start`.
    pub(crate) fn new(
        tool: &ToolName,
        record: Option<Arc<Padded<CallHandles>>>,
        on_outcome: O,
        start: CallStart,
    ) -> Self {
        Recorder {
            tool: O::OBSERVES.then(|| tool.clone()),
            record,
            start,
            on_outcome,
        }
    }

    fn finish(self, classified: &ClassifiedCall, span: &Span) {
        let metrics = self
            .record
            .as_ref()
            .and_then(|record| record.metrics.as_ref());
        // The second clock read, only when something records the duration.
        let elapsed =
            (metrics.is_some() || self.tool.is_some()).then(|| self.start.elapsed_nanos());
        let error_type = classified.error_type.as_deref();
        if let (Some(metrics), Some(elapsed)) = (metrics, elapsed) {
            metrics.observe_tool_call_nanos(classified.outcome, error_type, elapsed);
        }
        // The connection was found dead (or no longer ready): the next call re-checks instead
        // of trusting the ready entry for the rest of its lifetime.
        if classified.stale_ready
            && let Some(slot) = self.record.as_ref().and_then(|record| record.slot.as_ref())
        {
            slot.forget_ready();
        }
        if let Some(error_type) = error_type {
            record_error(
                span,
                error_type,
                classified.outcome == CallOutcome::ToolError,
            );
        }
        if let (Some(tool), Some(elapsed)) = (&self.tool, elapsed) {
            self.on_outcome
                .on_outcome(tool, classified.outcome, Duration::from_nanos(elapsed));
        }
        if let Some(record) = self.record {
            CallHandles::give_back(record);
        }
    }
}
