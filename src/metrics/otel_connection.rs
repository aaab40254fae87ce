//! The connection a server's operations went over, as `mcp.client.operation.duration` carries it
//! over OTLP (feature `otel-metrics`): set by the `Endpoint` and `Handshake` events, read by the
//! tool handles, which bind their series again when it changes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arc_swap::{ArcSwap, ArcSwapOption};

use super::otel_instruments::{BoundSeries, OtelInstruments};
use crate::state::ServerEndpoint;

/// What is known of a server's connection; every change is a new generation.
#[derive(Debug, Default)]
pub(crate) struct Connection {
    /// 0 until the first `Endpoint` or `Handshake`; bumped by every change.
    pub(crate) generation: u64,
    pub(crate) endpoint: Option<ServerEndpoint>,
    pub(crate) protocol_version: Option<Arc<str>>,
}

/// One server's [`Connection`], swapped whole so a reader sees one generation, and its
/// generation on its own, which the recording path compares without loading the rest.
#[derive(Default)]
pub(crate) struct ConnectionCell {
    connection: ArcSwap<Connection>,
    generation: AtomicU64,
}

impl ConnectionCell {
    pub(crate) fn load(&self) -> arc_swap::Guard<Arc<Connection>> {
        self.connection.load()
    }

    /// The generation now (a binding made for an older one is stale).
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn update(&self, change: impl Fn(&Connection) -> Option<Connection>) {
        self.connection.rcu(|old| match change(old) {
            Some(new) => Arc::new(new),
            None => old.clone(),
        });
        let now = self.connection.load().generation;
        self.generation.fetch_max(now, Ordering::AcqRel);
    }

    /// A new endpoint (a no-op when it is the one known).
    pub(crate) fn set_endpoint(&self, endpoint: &ServerEndpoint) {
        self.update(|old| {
            (old.endpoint.as_ref() != Some(endpoint)).then(|| Connection {
                generation: old.generation + 1,
                endpoint: Some(endpoint.clone()),
                protocol_version: old.protocol_version.clone(),
            })
        });
    }

    /// A new negotiated protocol version (a no-op when it is the one known; ignored when empty).
    pub(crate) fn set_protocol_version(&self, version: &str) {
        if version.is_empty() {
            return;
        }
        self.update(|old| {
            (old.protocol_version.as_deref() != Some(version)).then(|| Connection {
                generation: old.generation + 1,
                endpoint: old.endpoint.clone(),
                protocol_version: Some(version.into()),
            })
        });
    }
}

struct Bound {
    generation: u64,
    series: BoundSeries,
}

/// One series of `mcp.client.operation.duration`, bound to the attributes of the connection's
/// generation it was first recorded in and bound again when the connection changes.
///
/// The first binding is kept in a `OnceLock`, so recording on a connection that has not changed
/// since (the usual case: the `Endpoint` and `Handshake` of a connection come before its first
/// call) costs one atomic load more than a plain bound series. After a change (a server that
/// upgraded its protocol) the newest binding is swapped in beside it.
#[derive(Default)]
pub(crate) struct OperationSeries {
    first: OnceLock<Bound>,
    later: ArcSwapOption<Bound>,
}

/// Which operation a [`OperationSeries`] records.
pub(crate) struct OperationKey<'a> {
    pub(crate) method: &'a str,
    pub(crate) tool: &'a Arc<str>,
    pub(crate) error_type: &'a str,
    pub(crate) server: &'a Arc<str>,
}

impl OperationSeries {
    /// Records `seconds` into the series of `key` on the connection `cell` knows now.
    pub(crate) fn record(
        &self,
        otel: &OtelInstruments,
        cell: &ConnectionCell,
        key: OperationKey<'_>,
        seconds: f64,
    ) {
        let generation = cell.generation();
        let bind = || {
            let connection = cell.load();
            Bound {
                generation: connection.generation,
                series: otel.operation_series(&key, &connection),
            }
        };
        let first = self.first.get_or_init(&bind);
        if first.generation == generation {
            first.series.record(seconds);
            return;
        }
        // The connection changed since the first binding.
        if let Some(later) = &*self.later.load()
            && later.generation == generation
        {
            later.series.record(seconds);
            return;
        }
        let later = Arc::new(bind());
        later.series.record(seconds);
        self.later.store(Some(later));
    }
}
