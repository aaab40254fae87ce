//! The layer's hot-path state: what every clone of a layer and its services share, and the
//! per-tool handles (cache slot, metrics, transport) the ready path finds with one lookup.
//! [`LayerShared::ready_hit`] is where the ready path enters; what it calls is fenced in
//! `ready_path/` (its module doc holds the rules and names the bench that guards them).

use std::cell::RefCell;
use std::ops::Deref;
use std::sync::Arc;
use std::thread::LocalKey;

use arc_swap::ArcSwap;
use tracing::Span;

use super::span::otel_name;
use crate::metrics::{Metrics, ServerMetrics, ToolMetrics};
use crate::ready_path::{CallStart, CowMap, CowMapView, Map, Padded, Recycled, ShardedArc, Spares};
use crate::resolve::{CapabilityCache, ToolSlot, Verdict};
use crate::state::ToolName;

/// What every clone of a layer and its services share.
pub(crate) struct LayerShared {
    pub(crate) cache: Arc<CapabilityCache>,
    pub(crate) metrics: Option<Metrics>,
    /// Per-tool handles: the metrics to record into and the transport of the tool's server.
    handles: CowMap<ToolHandles>,
}

/// Per-tool: the cache slot of its verdicts, its metrics handle (resolved once, so the hot path
/// does no label hashing) and the transport of its server. One lookup of the handles map finds
/// everything the ready path needs.
#[derive(Clone)]
pub(crate) struct ToolHandles {
    /// `None` past the cache's tool-name cap (such tools always take the slow path).
    pub(crate) slot: Option<Arc<ToolSlot>>,
    /// One copy per thread shard: every call takes a reference to it for its recorder (one this
    /// thread kept from a finished call, when it has one: see `ready_path/recycled.rs`).
    pub(crate) record: Option<ShardedArc<CallHandles>>,
    pub(crate) transport: Option<&'static str>,
    /// The span's `otel.name` (`tools/call {tool}`), made once per tool rather than per call.
    pub(crate) otel_name: Arc<str>,
}

/// What a call's recorder needs of its tool: its metrics, and its cache slot (a call that finds
/// the connection dead drops the tool's ready entry, so the next call re-checks).
#[derive(Clone)]
pub(crate) struct CallHandles {
    pub(crate) metrics: Option<ToolMetrics>,
    pub(crate) slot: Option<Arc<ToolSlot>>,
}

thread_local! {
    /// This thread's spare references to call handles (see `ready_path/recycled.rs`).
    static SPARE_CALL_HANDLES: RefCell<Spares<CallHandles>> = const { RefCell::new(Spares::new()) };
}

impl Recycled for CallHandles {
    fn spares() -> &'static LocalKey<RefCell<Spares<Self>>> {
        &SPARE_CALL_HANDLES
    }
}

/// A service's own view of its layer's handles map: the ready path's lookup costs one atomic load
/// (is the map it read last still the map?) and the lookup, and calling the tool it called last
/// again skips the hash lookup (see [`CowMapView`]).
pub(crate) type HandlesView = CowMapView<SharedHandles, ToolHandles>;

/// How a [`HandlesView`] reaches the handles map of the layer it came from.
#[derive(Clone)]
pub(crate) struct SharedHandles(Arc<LayerShared>);

impl Deref for SharedHandles {
    type Target = ArcSwap<Map<ToolHandles>>;

    fn deref(&self) -> &Self::Target {
        self.0.handles.storage()
    }
}

/// What the ready path takes from a fresh hit (the verdict is [`Verdict::READY`]).
pub(crate) struct ReadyHit {
    /// When the call started (the freshness check's clock read).
    pub(crate) start: CallStart,
    pub(crate) record: Option<Arc<Padded<CallHandles>>>,
    /// The call's span, opened from the tool's handles.
    pub(crate) span: Span,
}

impl LayerShared {
    /// The state shared by a layer over `cache`, recording into `metrics` if any.
    pub(crate) fn new(cache: Arc<CapabilityCache>, metrics: Option<Metrics>) -> Self {
        LayerShared {
            cache,
            metrics,
            handles: CowMap::with_cap(CapabilityCache::DEFAULT_MAX_TOOLS),
        }
    }

    /// A view of the handles map for one service.
    pub(crate) fn view(self: &Arc<Self>) -> HandlesView {
        CowMapView::new(SharedHandles(self.clone()))
    }

    /// The ready path: with one lookup of the handles map (through `view`, a view of this
    /// layer's), a fresh ready verdict for `tool`, the call's start, this thread's references
    /// to its handles and the span `span` opens from them. Never waits or locks, and allocates
    /// only what `span` does.
    #[inline]
    pub(crate) fn ready_hit(
        &self,
        view: &mut HandlesView,
        tool: &ToolName,
        span: impl FnOnce(&ToolHandles) -> Span,
    ) -> Option<ReadyHit> {
        view.with(tool.as_arc(), |handles| {
            let start = self.cache.ready_now(handles.slot.as_deref()?)?;
            Some(ReadyHit {
                start,
                record: handles.record.as_ref().map(CallHandles::take),
                span: span(handles),
            })
        })
        .flatten()
    }

    /// The handles for `tool`, created on first use.
    pub(crate) fn handles(&self, tool: &ToolName) -> ToolHandles {
        if let Some(handles) = self.handles.with(tool.as_str(), ToolHandles::clone) {
            return handles;
        }
        let make = || {
            let slot = self.cache.tool_slot(tool);
            let metrics = self.server_metrics(tool).map(|s| s.tool(tool.tool()));
            ToolHandles {
                record: (metrics.is_some() || slot.is_some()).then(|| {
                    ShardedArc::new(CallHandles {
                        metrics,
                        slot: slot.clone(),
                    })
                }),
                slot,
                transport: self.cache.inventory().network_transport(tool.server()),
                otel_name: otel_name(tool),
            }
        };
        self.handles
            .get_or_insert_with(tool.as_arc(), make)
            .unwrap_or_else(make)
    }

    /// The server's metrics handle (not on the ready path); sets its wait-budget gauge.
    fn server_metrics(&self, tool: &ToolName) -> Option<ServerMetrics> {
        self.metrics.as_ref().map(|m| {
            let server = m.server(tool.server());
            server.set_wait_budget_series(self.cache.budget_for(tool.server()).wait());
            server
        })
    }

    pub(crate) fn observe_resolution(&self, tool: &ToolName, verdict: &Verdict) {
        if let Some(server) = self.server_metrics(tool) {
            server.observe_resolution(verdict, self.cache.budget_for(tool.server()).wait());
        }
    }
}
