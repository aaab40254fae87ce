//! [`ToolMetrics`]: the pre-resolved handle of every series of one tool of one server, so
//! recording a call is an atomic add with no label hashing.

use crate::util::RwLockExt as _;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use super::names::OTHER_ERROR_TYPE;
#[cfg(feature = "otel-metrics")]
use super::otel_connection::{OperationKey, OperationSeries};
use super::server_handle::ServerCore;
use crate::exposition::{Histogram, IntCounter};
use crate::state::CallOutcome;

/// How many distinct (`mcp_method_name`, `error_type`) pairs one tool records before the rest are
/// counted as `_OTHER`.
const MAX_OPERATIONS_PER_TOOL: usize = 32;

struct Operation {
    method: Box<str>,
    error_type: Box<str>,
    histogram: Histogram,
    /// The series' OpenTelemetry twin, when a meter records it too.
    #[cfg(feature = "otel-metrics")]
    otel: OperationSeries,
}

struct ToolInner {
    core: Arc<ServerCore>,
    tool: Arc<str>,
    calls: [OnceLock<IntCounter>; CallOutcome::ALL.len()],
    absent: OnceLock<IntCounter>,
    operations: RwLock<Vec<Operation>>,
    /// The series every successful call through the layer records into, resolved once: the
    /// hot path takes no lock.
    ok_call: OnceLock<Histogram>,
    /// The OpenTelemetry twin of `ok_call`, bound once per connection (see `otel_connection`).
    #[cfg(feature = "otel-metrics")]
    otel_ok_call: OperationSeries,
}

/// Every series of one tool of one server, resolved once: the tool tier of recording (calls,
/// calls to an absent tool, operation durations). Cheap to clone; get it from
/// [`ServerMetrics::tool`](super::ServerMetrics::tool).
#[derive(Clone)]
pub struct ToolMetrics {
    inner: Arc<ToolInner>,
}

impl fmt::Debug for ToolMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolMetrics")
            .field("server", &&*self.inner.core.name)
            .field("tool", &self.name())
            .finish()
    }
}

impl ToolMetrics {
    pub(super) fn new(core: Arc<ServerCore>, tool: Arc<str>) -> ToolMetrics {
        ToolMetrics {
            inner: Arc::new(ToolInner {
                core,
                tool,
                calls: Default::default(),
                absent: OnceLock::new(),
                operations: RwLock::new(Vec::new()),
                ok_call: OnceLock::new(),
                #[cfg(feature = "otel-metrics")]
                otel_ok_call: OperationSeries::default(),
            }),
        }
    }

    /// The `tool` label value: the tool's name, or `other` when it came beyond the cap.
    pub fn name(&self) -> &str {
        &self.inner.tool
    }

    /// Counts one call that ended with `outcome` in `mcp_readiness_tool_calls_total`.
    #[inline]
    pub fn observe_call(&self, outcome: CallOutcome) {
        let inner = &*self.inner;
        let core = &inner.core;
        core.lazy(
            &inner.calls[outcome.index()],
            &core.fam.tool_calls,
            &[&core.name, &inner.tool, outcome.as_str()],
        )
        .inc();
    }

    /// Creates the series a first call to this tool while it is absent would create
    /// (`mcp_readiness_tool_absent_total`) at 0 if it does not exist yet, so `increase()` counts
    /// that first call. For the tools you know you will call (`serve` declares the configured
    /// steps).
    ///
    /// ```
    /// use mcp_readiness::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.server("github").tool("search_issues").declare();
    /// assert!(metrics.render().contains(
    ///     r#"mcp_readiness_tool_absent_total{server="github",tool="search_issues"} 0"#
    /// ));
    /// ```
    pub fn declare(&self) {
        self.absent_series();
    }

    /// Counts one call to this tool while its ready server does not offer it
    /// (`mcp_readiness_tool_absent_total`).
    pub fn observe_absent(&self) {
        self.absent_series().inc();
    }

    /// This tool's `mcp_readiness_tool_absent_total` series, made on first use.
    fn absent_series(&self) -> &IntCounter {
        let inner = &*self.inner;
        let core = &inner.core;
        core.lazy(
            &inner.absent,
            &core.fam.tool_absent,
            &[&core.name, &inner.tool],
        )
    }

    /// Observes one MCP operation on this tool in `mcp_client_operation_duration_seconds`, with
    /// `mcp_method_name = method` (e.g. `tools/call`) and `error_type` the OpenTelemetry
    /// `error.type` (`None` on success).
    ///
    /// A successful operation has `error_type=""`. The OpenTelemetry-to-Prometheus mapping drops
    /// an attribute that is not set, and Prometheus treats a label with an empty value exactly as
    /// a missing label (`{error_type=""}` selects both), so this is the same series a collector
    /// would produce, while every series of the family keeps one label set (as a
    /// `prometheus::Registry` requires of a family).
    ///
    /// `method` and `error_type` must come from small fixed sets: after 32 distinct pairs on one
    /// tool, further pairs are counted with both labels `_OTHER`.
    #[inline]
    pub fn observe_operation(&self, method: &str, error_type: Option<&str>, duration: Duration) {
        if method == "tools/call" && error_type.is_none() {
            // Not a counted call (see `observe_tool_call`): the series' uncounted half.
            self.ok_call().uncounted().observe(duration);
            self.observe_ok_call_otel(duration);
            return;
        }
        self.observe_other_operation(method, error_type.unwrap_or(""), duration);
    }

    /// One tool call that ended with `outcome` after `duration`, as the readiness layer records
    /// it: [`ToolMetrics::observe_call`] and [`ToolMetrics::observe_operation`] (`tools/call`,
    /// with `error_type` the OpenTelemetry `error.type`, `None` on success) together. A
    /// successful call costs two atomic adds (its bucket and the sum): the `ok` series of
    /// `mcp_readiness_tool_calls_total` counts the observations of the successful `tools/call`
    /// series instead of making a third. Calls recorded either way add up.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_readiness::Metrics;
    /// use mcp_readiness::state::CallOutcome;
    ///
    /// let metrics = Metrics::new();
    /// let read = metrics.server("files").tool("read");
    /// read.observe_tool_call(CallOutcome::Ok, None, Duration::from_millis(40));
    /// read.observe_call(CallOutcome::Ok);
    /// assert!(metrics.render().contains(
    ///     r#"mcp_readiness_tool_calls_total{outcome="ok",server="files",tool="read"} 2"#
    /// ));
    /// ```
    #[inline]
    pub fn observe_tool_call(
        &self,
        outcome: CallOutcome,
        error_type: Option<&str>,
        duration: Duration,
    ) {
        self.observe_tool_call_nanos(outcome, error_type, crate::util::nanos(duration));
    }

    /// [`ToolMetrics::observe_tool_call`] with the duration in nanoseconds (the layer's clock
    /// reads them).
    #[inline]
    pub(crate) fn observe_tool_call_nanos(
        &self,
        outcome: CallOutcome,
        error_type: Option<&str>,
        nanos: u64,
    ) {
        if outcome != CallOutcome::Ok || error_type.is_some() {
            self.observe_call(outcome);
            self.observe_operation("tools/call", error_type, Duration::from_nanos(nanos));
            return;
        }
        let inner = &*self.inner;
        let core = &inner.core;
        let histogram = self.ok_call();
        let counter = core.lazy(
            &inner.calls[CallOutcome::Ok.index()],
            &core.fam.tool_calls,
            &[&core.name, &inner.tool, CallOutcome::Ok.as_str()],
        );
        if counter.counts(histogram) {
            histogram.observe_nanos(nanos);
        } else {
            // The counter counts another histogram (one of a server removed and added again).
            counter.inc();
            histogram.uncounted().observe_nanos(nanos);
        }
        #[cfg(feature = "otel-metrics")]
        self.observe_ok_call_otel(Duration::from_nanos(nanos));
    }

    /// The series of successful `tools/call` operations.
    #[inline]
    fn ok_call(&self) -> &Histogram {
        let inner = &*self.inner;
        let core = &inner.core;
        core.lazy(
            &inner.ok_call,
            &core.fam.operation,
            &["tools/call", &inner.tool, "", &core.name],
        )
    }

    #[inline]
    fn observe_ok_call_otel(&self, duration: Duration) {
        #[cfg(feature = "otel-metrics")]
        self.observe_otel(&self.inner.otel_ok_call, "tools/call", "", duration);
        #[cfg(not(feature = "otel-metrics"))]
        let _ = duration;
    }

    /// [`ToolMetrics::observe_operation`] for anything but a successful `tools/call`.
    fn observe_other_operation(&self, method: &str, error_type: &str, duration: Duration) {
        {
            let operations = self.inner.operations.read_unpoisoned();
            if let Some(op) = find(&operations, method, error_type) {
                op.histogram.observe(duration);
                #[cfg(feature = "otel-metrics")]
                self.observe_otel(&op.otel, method, error_type, duration);
                return;
            }
        }
        let mut operations = self.inner.operations.write_unpoisoned();
        let (method, error_type) = if find(&operations, method, error_type).is_none()
            && operations.len() >= MAX_OPERATIONS_PER_TOOL
        {
            (OTHER_ERROR_TYPE, OTHER_ERROR_TYPE)
        } else {
            (method, error_type)
        };
        if let Some(op) = find(&operations, method, error_type) {
            op.histogram.observe(duration);
            #[cfg(feature = "otel-metrics")]
            self.observe_otel(&op.otel, method, error_type, duration);
            return;
        }
        let core = &self.inner.core;
        let histogram = core.create(
            &core.fam.operation,
            &[method, &self.inner.tool, error_type, &core.name],
        );
        histogram.observe(duration);
        #[cfg(feature = "otel-metrics")]
        let otel = OperationSeries::default();
        #[cfg(feature = "otel-metrics")]
        self.observe_otel(&otel, method, error_type, duration);
        operations.push(Operation {
            method: method.into(),
            error_type: error_type.into(),
            histogram,
            #[cfg(feature = "otel-metrics")]
            otel,
        });
    }
}

#[cfg(feature = "otel-metrics")]
impl ToolMetrics {
    /// Records into `series`, the OpenTelemetry twin of the operation (`method`, `error_type`),
    /// when a meter records too.
    fn observe_otel(
        &self,
        series: &OperationSeries,
        method: &str,
        error_type: &str,
        duration: Duration,
    ) {
        let inner = &*self.inner;
        if let Some(otel) = &inner.core.fam.otel {
            let key = OperationKey {
                method,
                tool: &inner.tool,
                error_type,
                server: &inner.core.name,
            };
            series.record(otel, &inner.core.connection, key, duration.as_secs_f64());
        }
    }
}

fn find<'a>(operations: &'a [Operation], method: &str, error_type: &str) -> Option<&'a Operation> {
    operations
        .iter()
        .find(|op| &*op.method == method && &*op.error_type == error_type)
}
