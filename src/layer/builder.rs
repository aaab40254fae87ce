//! The one way to configure a [`ReadinessLayer`]: consuming setters on [`ReadinessLayerBuilder`]
//! for the budget, the cache lifetimes, the metrics recorder, the cache itself and the hooks.

use std::fmt;
use std::sync::Arc;

use super::handles::LayerShared;
use super::hooks::{OnNotReady, OnOutcome};
use super::readiness_layer::ReadinessLayer;
use crate::metrics::Metrics;
use crate::resolve::{Budget, CacheTtls, CapabilityCache};

/// Configures a [`ReadinessLayer`]; made by [`ReadinessLayer::builder`] (a cache of its own, so
/// the budget and lifetimes can be set) or [`ReadinessLayer::builder_with_cache`] (a shared
/// cache, whose budget and lifetimes are its own).
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::{NotReady, ReadinessLayer};
/// use mcp_readiness::{Budget, resolve::CacheTtls, Metrics, Snapshot, StaticInventory};
///
/// # fn main() -> Result<(), mcp_readiness::resolve::BudgetError> {
/// let layer = ReadinessLayer::builder(StaticInventory::new(Snapshot::default()))
///     .budget(Budget::try_new(Duration::from_secs(15), Duration::from_secs(1))?)
///     .ttls(CacheTtls::default())
///     .metrics(Metrics::new())
///     .on_not_ready(|refused: &NotReady| eprintln!("{refused}"))
///     .build();
/// # drop(layer);
/// # Ok(()) }
/// ```
pub struct ReadinessLayerBuilder<C = CapabilityCache, N = (), O = ()> {
    cache: C,
    metrics: Option<Metrics>,
    on_not_ready: N,
    on_outcome: O,
}

impl<C> ReadinessLayerBuilder<C> {
    pub(crate) fn new(cache: C) -> Self {
        ReadinessLayerBuilder {
            cache,
            metrics: None,
            on_not_ready: (),
            on_outcome: (),
        }
    }
}

impl<N, O> ReadinessLayerBuilder<CapabilityCache, N, O> {
    /// The wait budget for `connecting` servers (default 20 s, poll 2 s).
    pub fn budget(mut self, budget: Budget) -> Self {
        self.cache = self.cache.with_budget(budget);
        self
    }

    /// The wait budget of one server's tools, instead of the default (see
    /// [`CapabilityCache::with_server_budget`]). Over a `Hub` the per-server budgets
    /// of its options apply without this.
    pub fn server_budget(mut self, server: impl Into<Arc<str>>, budget: Budget) -> Self {
        self.cache = self.cache.with_server_budget(server, budget);
        self
    }

    /// How long verdicts are reused, by state.
    pub fn ttls(mut self, ttls: CacheTtls) -> Self {
        self.cache = self.cache.with_ttls(ttls);
        self
    }
}

impl<C, N, O> ReadinessLayerBuilder<C, N, O> {
    /// Records every resolution and call into `metrics`.
    pub fn metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Calls `hook` for every call refused because its tool is not ready (see
    /// [when hooks fire](super::hooks)).
    pub fn on_not_ready<N2: OnNotReady>(self, hook: N2) -> ReadinessLayerBuilder<C, N2, O> {
        ReadinessLayerBuilder {
            cache: self.cache,
            metrics: self.metrics,
            on_not_ready: hook,
            on_outcome: self.on_outcome,
        }
    }

    /// Calls `hook` once with every call's outcome (see [when hooks fire](super::hooks)).
    pub fn on_outcome<O2: OnOutcome>(self, hook: O2) -> ReadinessLayerBuilder<C, N, O2> {
        ReadinessLayerBuilder {
            cache: self.cache,
            metrics: self.metrics,
            on_not_ready: self.on_not_ready,
            on_outcome: hook,
        }
    }

    /// Builds the layer.
    pub fn build(self) -> ReadinessLayer<N, O>
    where
        C: Into<Arc<CapabilityCache>>,
    {
        ReadinessLayer {
            shared: Arc::new(LayerShared::new(self.cache.into(), self.metrics)),
            on_not_ready: self.on_not_ready,
            on_outcome: self.on_outcome,
        }
    }
}

impl<C: fmt::Debug, N, O> fmt::Debug for ReadinessLayerBuilder<C, N, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadinessLayerBuilder")
            .field("cache", &self.cache)
            .field("metrics", &self.metrics.is_some())
            .finish_non_exhaustive()
    }
}
