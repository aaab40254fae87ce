use std::fmt;
use std::sync::Arc;

use tokio::time::Instant;
use tower::Layer;

use super::hooks::{OnNotReady, OnOutcome};
use super::service::ReadinessService;
use crate::metrics::{Metrics, ServerMetrics, ToolMetrics};
use crate::resolve::{Budget, CacheTtls, CapabilityCache, Inventory, ToolSlot, Verdict};
use crate::state::ToolName;
use crate::util::{CowMap, Padded, ShardedArc};

/// Wraps a `tower::Service<ToolCall>` so every call resolves its tool at the point of use first.
///
/// Built with [`ReadinessLayer::builder`]; clones share one [`CapabilityCache`] and one metrics
/// recorder. See the [module documentation](super) for an example.
pub struct ReadinessLayer<N = (), O = ()> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) on_not_ready: N,
    pub(crate) on_outcome: O,
}

/// What every clone of a layer and its services share.
pub(crate) struct Shared {
    pub(crate) cache: Arc<CapabilityCache>,
    pub(crate) metrics: Option<Metrics>,
    /// Per-tool handles: the metrics to record into and the transport of the tool's server.
    handles: CowMap<ToolHandles>,
}

/// Per-tool: the cache slot of its verdicts, its metrics handle (resolved once, so the hot path
/// does no label hashing) and the transport of its server. One probe of the handles map finds
/// everything the ready path needs.
#[derive(Clone)]
pub(crate) struct ToolHandles {
    /// `None` past the cache's tool-name cap (such tools always take the slow path).
    pub(crate) slot: Option<Arc<ToolSlot>>,
    /// One copy per thread shard: every call takes a reference to it for its recorder.
    pub(crate) metrics: Option<ShardedArc<ToolMetrics>>,
    pub(crate) transport: Option<&'static str>,
}

/// What the ready path takes from a fresh hit (the verdict is [`Verdict::READY`]).
pub(crate) struct ReadyHit {
    pub(crate) metrics: Option<Arc<Padded<ToolMetrics>>>,
    pub(crate) transport: Option<&'static str>,
}

impl Shared {
    /// The ready path: with one probe of the handles map, a fresh ready verdict for `tool` at
    /// `now` and this thread's references to its handles. Never waits, allocates or locks.
    pub(crate) fn ready_hit(&self, tool: &ToolName, now: Instant) -> Option<ReadyHit> {
        self.handles
            .with(tool.as_str(), |handles| {
                if !self.cache.is_ready_at(handles.slot.as_deref()?, now) {
                    return None;
                }
                Some(ReadyHit {
                    metrics: handles.metrics.as_ref().map(ShardedArc::get),
                    transport: handles.transport,
                })
            })
            .flatten()
    }

    /// The handles for `tool`, created on first use.
    pub(crate) fn handles(&self, tool: &ToolName) -> ToolHandles {
        if let Some(handles) = self.handles.with(tool.as_str(), ToolHandles::clone) {
            return handles;
        }
        let make = || ToolHandles {
            slot: self.cache.tool_slot(tool),
            metrics: self
                .server_metrics(tool)
                .map(|s| ShardedArc::new(s.tool(tool.tool()))),
            transport: self.cache.inventory().network_transport(tool.server()),
        };
        self.handles
            .get_or_insert_with(tool.as_arc(), make)
            .unwrap_or_else(make)
    }

    /// The server's metrics handle (not on the ready path); sets its wait-budget gauge.
    fn server_metrics(&self, tool: &ToolName) -> Option<ServerMetrics> {
        self.metrics.as_ref().map(|m| {
            let server = m.server(tool.server());
            server.set_wait_budget(self.cache.budget().wait());
            server
        })
    }

    pub(crate) fn observe_resolution(&self, tool: &ToolName, verdict: &Verdict) {
        if let Some(server) = self.server_metrics(tool) {
            server.observe_resolution(verdict, self.cache.budget().wait());
        }
    }
}

impl ReadinessLayer {
    /// A layer over `inventory` with the default budget (20 s, poll 2 s), lifetimes and no metrics.
    pub fn new(inventory: impl Inventory) -> Self {
        ReadinessLayer::builder(inventory).build()
    }

    /// Configures a layer over `inventory`.
    pub fn builder(inventory: impl Inventory) -> ReadinessLayerBuilder {
        ReadinessLayerBuilder {
            cache: CapabilityCache::new(inventory),
            metrics: None,
        }
    }

    /// A layer over an existing cache (to share it with other resolutions, e.g. a pre-flight).
    pub fn with_cache(cache: Arc<CapabilityCache>) -> Self {
        ReadinessLayer::from_parts(cache, None)
    }

    fn from_parts(cache: Arc<CapabilityCache>, metrics: Option<Metrics>) -> Self {
        ReadinessLayer {
            shared: Arc::new(Shared {
                cache,
                metrics,
                handles: CowMap::with_cap(CapabilityCache::DEFAULT_MAX_TOOLS),
            }),
            on_not_ready: (),
            on_outcome: (),
        }
    }
}

impl<N, O> ReadinessLayer<N, O> {
    /// Calls `hook` for every call refused because its tool is not ready.
    pub fn on_not_ready<N2: OnNotReady>(self, hook: N2) -> ReadinessLayer<N2, O> {
        ReadinessLayer {
            shared: self.shared,
            on_not_ready: hook,
            on_outcome: self.on_outcome,
        }
    }

    /// Calls `hook` once with every call's outcome.
    pub fn on_outcome<O2: OnOutcome>(self, hook: O2) -> ReadinessLayer<N, O2> {
        ReadinessLayer {
            shared: self.shared,
            on_not_ready: self.on_not_ready,
            on_outcome: hook,
        }
    }

    /// The capability cache every service of this layer resolves through.
    pub fn cache(&self) -> &Arc<CapabilityCache> {
        &self.shared.cache
    }
}

impl<S, N: Clone, O: Clone> Layer<S> for ReadinessLayer<N, O> {
    type Service = ReadinessService<S, N, O>;

    fn layer(&self, inner: S) -> Self::Service {
        ReadinessService {
            inner,
            shared: self.shared.clone(),
            on_not_ready: self.on_not_ready.clone(),
            on_outcome: self.on_outcome.clone(),
        }
    }
}

impl<N: Clone, O: Clone> Clone for ReadinessLayer<N, O> {
    fn clone(&self) -> Self {
        ReadinessLayer {
            shared: self.shared.clone(),
            on_not_ready: self.on_not_ready.clone(),
            on_outcome: self.on_outcome.clone(),
        }
    }
}

impl<N, O> fmt::Debug for ReadinessLayer<N, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadinessLayer")
            .field("cache", &self.shared.cache)
            .field("metrics", &self.shared.metrics.is_some())
            .finish_non_exhaustive()
    }
}

/// Configures a [`ReadinessLayer`].
#[derive(Debug)]
pub struct ReadinessLayerBuilder {
    cache: CapabilityCache,
    metrics: Option<Metrics>,
}

impl ReadinessLayerBuilder {
    /// The wait budget for `connecting` servers (default 20 s, poll 2 s).
    pub fn budget(mut self, budget: Budget) -> Self {
        self.cache = self.cache.with_budget(budget);
        self
    }

    /// How long verdicts are reused, by state.
    pub fn ttls(mut self, ttls: CacheTtls) -> Self {
        self.cache = self.cache.with_ttls(ttls);
        self
    }

    /// Records every resolution and call into `metrics`.
    pub fn metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Builds the layer.
    pub fn build(self) -> ReadinessLayer {
        ReadinessLayer::from_parts(Arc::new(self.cache), self.metrics)
    }
}
