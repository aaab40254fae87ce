use std::fmt;
use std::sync::Arc;

use tower::Layer;

use super::builder::ReadinessLayerBuilder;
use super::handles::LayerShared;
use super::service::ReadinessService;
use crate::resolve::{CapabilityCache, Inventory};

/// Wraps a `tower::Service<ToolCall>` so every call resolves its tool at the point of use first.
///
/// Built with [`ReadinessLayer::builder`] (or [`ReadinessLayer::builder_with_cache`]); clones share one [`CapabilityCache`] and one metrics
/// recorder. See the [module documentation](super) for an example.
pub struct ReadinessLayer<N = (), O = ()> {
    pub(crate) shared: Arc<LayerShared>,
    pub(crate) on_not_ready: N,
    pub(crate) on_outcome: O,
}

impl ReadinessLayer {
    /// A layer over `inventory` with the default budget (20 s, poll 2 s), lifetimes, no metrics
    /// and no hooks.
    pub fn new(inventory: impl Inventory) -> Self {
        ReadinessLayer::builder(inventory).build()
    }

    /// Configures a layer over `inventory`: budget, cache lifetimes, metrics and hooks.
    pub fn builder(inventory: impl Inventory) -> ReadinessLayerBuilder {
        ReadinessLayerBuilder::new(CapabilityCache::new(inventory))
    }

    /// Configures a layer over an existing cache (to share it with other resolutions, e.g. a
    /// pre-flight): metrics and hooks; the budget and lifetimes are the cache's own.
    pub fn builder_with_cache(
        cache: Arc<CapabilityCache>,
    ) -> ReadinessLayerBuilder<Arc<CapabilityCache>> {
        ReadinessLayerBuilder::new(cache)
    }

    /// A layer over an existing cache, without metrics or hooks: shorthand for
    /// [`ReadinessLayer::builder_with_cache`]`(cache).build()`.
    pub fn with_cache(cache: Arc<CapabilityCache>) -> Self {
        ReadinessLayer::builder_with_cache(cache).build()
    }
}

impl<N, O> ReadinessLayer<N, O> {
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
            handles: self.shared.view(),
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
