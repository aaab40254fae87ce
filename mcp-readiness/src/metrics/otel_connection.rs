//! The connection a server's operations went over, as `mcp.client.operation.duration` carries it
//! over OTLP (feature `otel-metrics`): set by the `Endpoint` and `Handshake` events, read by the
//! tool handles, which bind their series again when it changes.

use std::sync::Arc;

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

/// One server's [`Connection`], swapped whole so a reader sees one generation.
#[derive(Default)]
pub(crate) struct ConnectionCell(ArcSwap<Connection>);

impl ConnectionCell {
    pub(crate) fn load(&self) -> arc_swap::Guard<Arc<Connection>> {
        self.0.load()
    }

    /// A new endpoint (a no-op when it is the one known).
    pub(crate) fn set_endpoint(&self, endpoint: &ServerEndpoint) {
        self.0.rcu(|old| {
            if old.endpoint.as_ref() == Some(endpoint) {
                return old.clone();
            }
            Arc::new(Connection {
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
        self.0.rcu(|old| {
            if old.protocol_version.as_deref() == Some(version) {
                return old.clone();
            }
            Arc::new(Connection {
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
#[derive(Default)]
pub(crate) struct OperationSeries(ArcSwapOption<Bound>);

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
        let connection = cell.load();
        if let Some(bound) = &*self.0.load()
            && bound.generation == connection.generation
        {
            bound.series.record(seconds);
            return;
        }
        let bound = Arc::new(Bound {
            generation: connection.generation,
            series: otel.operation_series(&key, &connection),
        });
        bound.series.record(seconds);
        self.0.store(Some(bound));
    }
}
