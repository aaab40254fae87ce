//! The metric families of DESIGN.md's table, declared once with their names, help, labels and
//! buckets over the exposition engine's storage, and registered together (all or nothing) in the
//! way the registry's owner calls for.

use std::sync::Arc;

use prometheus::Registry;
use prometheus::core::Collector;

use super::MetricsError;
use super::names::*;
use crate::exposition::{
    Child, Counter, Encode, Family, Gauge, Histogram, IntCounter, IntGauge, Owner, collector_for,
};

/// Every family the recorder writes to.
#[derive(Debug)]
pub(crate) struct Families {
    /// Held for reading by a whole render, for writing by each change that must look atomic to a
    /// scrape (a server's state moving, a server's series going away).
    pub(crate) gate: std::sync::RwLock<()>,
    /// Held for reading by a whole render, for writing by a whole reload
    /// ([`Metrics::reload`](super::Metrics::reload)): a scrape sees one generation of the server set.
    pub(crate) reload_gate: std::sync::RwLock<()>,
    pub(crate) server_state: Arc<Family<IntGauge>>,
    pub(crate) state_changed: Arc<Family<Gauge>>,
    pub(crate) server_tools: Arc<Family<IntGauge>>,
    pub(crate) resolve_wait: Arc<Family<Histogram>>,
    pub(crate) waste: Arc<Family<Counter>>,
    pub(crate) avoided: Arc<Family<Counter>>,
    pub(crate) budget_exhausted: Arc<Family<IntCounter>>,
    pub(crate) tool_calls: Arc<Family<IntCounter>>,
    pub(crate) tool_absent: Arc<Family<IntCounter>>,
    pub(crate) connects: Arc<Family<IntCounter>>,
    pub(crate) connect_duration: Arc<Family<Histogram>>,
    pub(crate) wait_budget: Arc<Family<Gauge>>,
    pub(crate) reconnects: Arc<Family<IntCounter>>,
    pub(crate) stream_reopens: Arc<Family<IntCounter>>,
    pub(crate) cooldown: Arc<Family<IntCounter>>,
    pub(crate) build_info: Arc<Family<IntGauge>>,
    pub(crate) state_changes: Arc<Family<IntCounter>>,
    pub(crate) reload_ok: Arc<Family<IntGauge>>,
    pub(crate) reload_time: Arc<Family<Gauge>>,
    pub(crate) probe_modules: Arc<Family<IntGauge>>,
    pub(crate) server_info: Arc<Family<IntGauge>>,
    pub(crate) credential_expiry: Arc<Family<Gauge>>,
    pub(crate) next_attempt: Arc<Family<Gauge>>,
    pub(crate) tls_certificate_expiry: Arc<Family<Gauge>>,
    pub(crate) operation: Arc<Family<Histogram>>,
    /// The OpenTelemetry histograms the handles record into too, when a meter was given.
    #[cfg(feature = "otel-metrics")]
    pub(crate) otel: Option<super::otel_instruments::OtelInstruments>,
}

fn plain<M: Child<Opts = ()>>(
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
) -> Result<Arc<Family<M>>, MetricsError> {
    Family::new(name, help, labels, ())
        .map(Arc::new)
        .map_err(|source| MetricsError::Declare { name, source })
}

fn histogram(
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    buckets: &[f64],
) -> Result<Arc<Family<Histogram>>, MetricsError> {
    Family::new(name, help, labels, Arc::from(buckets))
        .map(Arc::new)
        .map_err(|source| MetricsError::Declare { name, source })
}

const SERVER: &[&str] = &[LABEL_SERVER];
const SERVER_STATE_LABELS: &[&str] = &[LABEL_SERVER, LABEL_STATE];
const SERVER_RESULT: &[&str] = &[LABEL_SERVER, LABEL_RESULT];

impl Families {
    pub(crate) fn new() -> Result<Families, MetricsError> {
        Ok(Families {
            gate: std::sync::RwLock::new(()),
            reload_gate: std::sync::RwLock::new(()),
            server_state: plain(
                SERVER_STATE,
                "Readiness state of each known MCP server, one-hot: 1 for the current state, 0 for the other three.",
                SERVER_STATE_LABELS,
            )?,
            state_changed: plain(
                SERVER_STATE_CHANGED_TIMESTAMP_SECONDS,
                "Unix time of the server's last readiness state change.",
                SERVER,
            )?,
            server_tools: plain(SERVER_TOOLS, "Tools the server offers now.", SERVER)?,
            resolve_wait: histogram(
                RESOLVE_WAIT_SECONDS,
                "How long each resolution waited, by its verdict (state).",
                SERVER_STATE_LABELS,
                &WAIT_BUCKETS,
            )?,
            waste: plain(
                WASTE_SECONDS_TOTAL,
                "Seconds waited in resolutions whose verdict was not ready.",
                SERVER_STATE_LABELS,
            )?,
            avoided: plain(
                AVOIDED_WAIT_SECONDS_TOTAL,
                "Wait budget not spent because the state was known not to heal (what a resolver without states would have wasted).",
                SERVER_STATE_LABELS,
            )?,
            budget_exhausted: plain(
                BUDGET_EXHAUSTED_TOTAL,
                "Resolutions whose wait budget ran out while the server was still connecting.",
                SERVER,
            )?,
            tool_calls: plain(
                TOOL_CALLS_TOTAL,
                "Tool calls through the readiness layer, by outcome.",
                &[LABEL_SERVER, LABEL_TOOL, LABEL_OUTCOME],
            )?,
            tool_absent: plain(
                TOOL_ABSENT_TOTAL,
                "Calls to a tool that its ready server does not offer.",
                &[LABEL_SERVER, LABEL_TOOL],
            )?,
            connects: plain(
                CONNECTS_TOTAL,
                "Connection attempts, by result.",
                SERVER_RESULT,
            )?,
            connect_duration: histogram(
                CONNECT_DURATION_SECONDS,
                "How long each connection attempt took, from start to ready or failure.",
                SERVER_RESULT,
                &WAIT_BUCKETS,
            )?,
            wait_budget: plain(
                WAIT_BUDGET_SECONDS,
                "The wait budget in force for the server's tools.",
                SERVER,
            )?,
            reconnects: plain(
                RECONNECTS_TOTAL,
                "Reconnections after a dropped connection.",
                SERVER,
            )?,
            stream_reopens: plain(
                STREAM_REOPENS_TOTAL,
                "Event streams an HTTP connection opened again (paced; a storm of re-opens shows here).",
                SERVER,
            )?,
            cooldown: plain(
                COOLDOWN_REJECTIONS_TOTAL,
                "Calls failed fast while the server cools down after a failed connect.",
                SERVER,
            )?,
            build_info: plain(
                BUILD_INFO,
                "mcp-readiness build information; always 1.",
                &[LABEL_VERSION],
            )?,
            state_changes: plain(
                SERVER_STATE_CHANGES_TOTAL,
                "Readiness state changes of the server, by the state entered.",
                SERVER_STATE_LABELS,
            )?,
            reload_ok: plain(
                CONFIG_LAST_RELOAD_SUCCESSFUL,
                "Whether the last configuration (re)load succeeded (1) or was refused (0).",
                &[],
            )?,
            reload_time: plain(
                CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS,
                "Unix time of the last successful configuration (re)load.",
                &[],
            )?,
            probe_modules: plain(
                PROBE_MODULES,
                "Probe modules serve answers GET /probe with (0: probes off).",
                &[],
            )?,
            server_info: plain(
                SERVER_INFO,
                "The protocol version and implementation of the server's last completed handshake; always 1.",
                &[
                    LABEL_SERVER,
                    LABEL_PROTOCOL_VERSION,
                    LABEL_SERVER_NAME,
                    LABEL_SERVER_VERSION,
                ],
            )?,
            credential_expiry: plain(
                CREDENTIAL_EXPIRY_TIMESTAMP_SECONDS,
                "Unix time a credential of the server expires, where known; renewable=\"false\": a human must re-authorize before then.",
                &[LABEL_SERVER, LABEL_CREDENTIAL, LABEL_RENEWABLE],
            )?,
            next_attempt: plain(
                SERVER_NEXT_ATTEMPT_TIMESTAMP_SECONDS,
                "Unix time the next connection attempt to a server that is not ready is due.",
                SERVER,
            )?,
            tls_certificate_expiry: plain(
                TLS_CERTIFICATE_EXPIRY_TIMESTAMP_SECONDS,
                "Unix time the leaf TLS certificate the server presented expires (notAfter), for HTTPS servers.",
                SERVER,
            )?,
            operation: histogram(
                MCP_CLIENT_OPERATION_DURATION_SECONDS,
                "Duration of MCP client operations (OpenTelemetry MCP semantic conventions).",
                &[
                    LABEL_MCP_METHOD_NAME,
                    LABEL_GEN_AI_TOOL_NAME,
                    LABEL_ERROR_TYPE,
                    LABEL_SERVER,
                ],
                &OPERATION_BUCKETS,
            )?,
            #[cfg(feature = "otel-metrics")]
            otel: None,
        })
    }

    /// Each family as what `owner`'s registry holds, with its name.
    fn collectors(&self, owner: Owner) -> Vec<(&'static str, Box<dyn Collector>)> {
        fn c<M: Child>(f: &Arc<Family<M>>, owner: Owner) -> (&'static str, Box<dyn Collector>) {
            (f.name, collector_for(f, owner))
        }
        vec![
            c(&self.server_state, owner),
            c(&self.state_changed, owner),
            c(&self.server_tools, owner),
            c(&self.resolve_wait, owner),
            c(&self.waste, owner),
            c(&self.avoided, owner),
            c(&self.budget_exhausted, owner),
            c(&self.tool_calls, owner),
            c(&self.tool_absent, owner),
            c(&self.connects, owner),
            c(&self.connect_duration, owner),
            c(&self.wait_budget, owner),
            c(&self.reconnects, owner),
            c(&self.stream_reopens, owner),
            c(&self.cooldown, owner),
            c(&self.build_info, owner),
            c(&self.state_changes, owner),
            c(&self.reload_ok, owner),
            c(&self.reload_time, owner),
            c(&self.probe_modules, owner),
            c(&self.server_info, owner),
            c(&self.credential_expiry, owner),
            c(&self.next_attempt, owner),
            c(&self.tls_certificate_expiry, owner),
            c(&self.operation, owner),
        ]
    }

    /// Registers every family, or none: on a collision the ones already registered are taken out
    /// again and the error names the colliding metric.
    pub(crate) fn register(&self, registry: &Registry, owner: Owner) -> Result<(), MetricsError> {
        let mut done = Vec::new();
        for (name, collector) in self.collectors(owner) {
            if let Err(source) = registry.register(collector) {
                for (_, collector) in self.collectors(owner).into_iter().take(done.len()) {
                    // Undoing our own registration cannot fail; nothing else to do if it did.
                    let _ = registry.unregister(collector);
                }
                // Our descriptors are valid (declaring them checked that), so the registry can only
                // refuse one because a metric of the same name is there already.
                return Err(MetricsError::AlreadyRegistered { name, source });
            }
            done.push(name);
        }
        Ok(())
    }

    /// Every family, sorted by name (the exposition order).
    pub(crate) fn sorted(&self) -> Vec<&dyn Encode> {
        let mut all: Vec<&dyn Encode> = vec![
            &*self.server_state,
            &*self.state_changed,
            &*self.server_tools,
            &*self.resolve_wait,
            &*self.waste,
            &*self.avoided,
            &*self.budget_exhausted,
            &*self.tool_calls,
            &*self.tool_absent,
            &*self.connects,
            &*self.connect_duration,
            &*self.wait_budget,
            &*self.reconnects,
            &*self.stream_reopens,
            &*self.cooldown,
            &*self.build_info,
            &*self.state_changes,
            &*self.reload_ok,
            &*self.reload_time,
            &*self.probe_modules,
            &*self.server_info,
            &*self.credential_expiry,
            &*self.next_attempt,
            &*self.tls_certificate_expiry,
            &*self.operation,
        ];
        all.sort_by_key(|f| f.name());
        all
    }

    /// Removes every series labelled with `server`; returns how many.
    /// Sets `mcp_readiness_server_info` of `server` to 1 for `identity` (the caller removes the
    /// server's earlier series where one may exist).
    pub(crate) fn set_server_info(&self, server: &str, identity: &crate::state::ServerIdentity) {
        self.server_info
            .get_or_create(&[
                server,
                &identity.protocol_version,
                &identity.server_name,
                &identity.server_version,
            ])
            .set(1);
    }

    /// Sets `mcp_readiness_credential_expiry_timestamp_seconds` of `server` for one known expiry.
    pub(crate) fn set_credential_expiry(
        &self,
        server: &str,
        expiry: &crate::state::CredentialExpiry,
    ) {
        let renewable = if expiry.renewable { "true" } else { "false" };
        self.credential_expiry
            .get_or_create(&[server, expiry.kind.as_str(), renewable])
            .set(expiry.unix_seconds());
    }

    pub(crate) fn remove_server(&self, server: &str) -> usize {
        self.server_state.remove_where(LABEL_SERVER, server)
            + self.state_changed.remove_where(LABEL_SERVER, server)
            + self.server_tools.remove_where(LABEL_SERVER, server)
            + self.resolve_wait.remove_where(LABEL_SERVER, server)
            + self.waste.remove_where(LABEL_SERVER, server)
            + self.avoided.remove_where(LABEL_SERVER, server)
            + self.budget_exhausted.remove_where(LABEL_SERVER, server)
            + self.tool_calls.remove_where(LABEL_SERVER, server)
            + self.tool_absent.remove_where(LABEL_SERVER, server)
            + self.connects.remove_where(LABEL_SERVER, server)
            + self.connect_duration.remove_where(LABEL_SERVER, server)
            + self.wait_budget.remove_where(LABEL_SERVER, server)
            + self.reconnects.remove_where(LABEL_SERVER, server)
            + self.stream_reopens.remove_where(LABEL_SERVER, server)
            + self.cooldown.remove_where(LABEL_SERVER, server)
            + self.state_changes.remove_where(LABEL_SERVER, server)
            + self.server_info.remove_where(LABEL_SERVER, server)
            + self.credential_expiry.remove_where(LABEL_SERVER, server)
            + self.next_attempt.remove_where(LABEL_SERVER, server)
            + self
                .tls_certificate_expiry
                .remove_where(LABEL_SERVER, server)
            + self.operation.remove_where(LABEL_SERVER, server)
    }
}
