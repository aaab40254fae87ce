use std::fmt;
use std::sync::Arc;

use tower::Layer;

use super::handles::LayerShared;
use super::hooks::{OnNotReady, OnOutcome};
use super::service::ReadinessService;
use crate::metrics::Metrics;
use crate::resolve::{Budget, CacheTtls, CapabilityCache, Inventory};

/// Wraps a `tower::Service<ToolCall>` so every call resolves its tool at the point of use first.
///
/// Built with [`ReadinessLayer::builder`]; clones share one [`CapabilityCache`] and one metrics
/// recorder. See the [module documentation](super) for an example.
pub struct ReadinessLayer<N = (), O = ()> {
    pub(crate) shared: Arc<LayerShared>,
    pub(crate) on_not_ready: N,
    pub(crate) on_outcome: O,
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
            shared: Arc::new(LayerShared::new(cache, metrics)),
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
