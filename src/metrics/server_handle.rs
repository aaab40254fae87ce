//! [`ServerMetrics`]: the pre-resolved handle of every series of one server (its tools' handles,
//! [`ToolMetrics`], are in `tool_handle.rs`), so recording is an atomic add with no label hashing.

use crate::util::{MutexExt as _, RwLockExt as _};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use super::domain_families::Families;
use super::names::{LABEL_SERVER, OTHER};
use super::status_board::StatusBoard;
use super::tool_handle::ToolMetrics;
use crate::exposition::{Child, Counter, Family, Gauge, Histogram, IntCounter, IntGauge, LabelCap};
use crate::resolve::Verdict;
use crate::state::ConnectResult;
use crate::state::State;

/// What one server's handles share: its name, the families, and whether it is still exported.
pub(crate) struct ServerCore {
    pub(super) name: Arc<str>,
    pub(super) fam: Arc<Families>,
    tool_cap: Arc<LabelCap>,
    /// The status page's rows (a wait budget set through the handle is shown there too).
    board: Arc<StatusBoard>,
    /// `true` while the server's series are exported. Creating a series and removing the server
    /// both hold this lock, so a server removed while a handle creates a series leaves nothing.
    live: Mutex<bool>,
    /// The connection its operations go over, for `mcp.client.operation.duration` over OTLP.
    #[cfg(feature = "otel-metrics")]
    pub(super) connection: super::otel_connection::ConnectionCell,
}

impl ServerCore {
    /// The child of `fam` for `values`, exported while the server is live, detached after.
    pub(super) fn create<M: Child>(&self, fam: &Family<M>, values: &[&str]) -> M {
        let live = self.live.lock_unpoisoned();
        if *live {
            fam.get_or_create(values)
        } else {
            fam.detached()
        }
    }

    pub(super) fn lazy<'a, M: Child>(
        &self,
        cell: &'a OnceLock<M>,
        fam: &Family<M>,
        values: &[&str],
    ) -> &'a M {
        cell.get_or_init(|| self.create(fam, values))
    }
}

/// The series the supervisor's events drive (created when the server is announced).
struct Supervised {
    tools: IntGauge,
    connects: [IntCounter; 7],
    reconnects: IntCounter,
    cooldown: IntCounter,
    /// By the state entered, in `State::ALL` order.
    state_changes: [IntCounter; 4],
}

/// The one-hot state gauges and the time of the last change (created with the first state).
struct StateSeries {
    by_state: [IntGauge; 4],
    changed: Gauge,
}

struct ServerInner {
    core: Arc<ServerCore>,
    announced: AtomicBool,
    budget_exhausted: IntCounter,
    resolve_wait: [OnceLock<Histogram>; 4],
    /// The OpenTelemetry twins of `resolve_wait`, bound once, when a meter records them too.
    #[cfg(feature = "otel-metrics")]
    otel_resolve_wait: [OnceLock<super::otel_instruments::BoundSeries>; 4],
    waste: [OnceLock<Counter>; 4],
    avoided: [OnceLock<Counter>; 4],
    /// Until when a resolver without states would already be waiting for this server: the end
    /// of the union of the budgets it would have spent (one wait shared by concurrent calls).
    avoided_until: Mutex<Option<tokio::time::Instant>>,
    connect_duration: [OnceLock<Histogram>; 7],
    /// The OpenTelemetry twins of `connect_duration`, bound once (`result="ok"` when the server
    /// is announced, as on the scrape).
    #[cfg(feature = "otel-metrics")]
    otel_connect_duration: [OnceLock<super::otel_instruments::BoundSeries>; 7],
    wait_budget: OnceLock<Gauge>,
    /// Created with the first re-open: only HTTP connections have event streams.
    stream_reopens: OnceLock<IntCounter>,
    supervised: OnceLock<Supervised>,
    state: OnceLock<StateSeries>,
    tools: RwLock<HashMap<Arc<str>, ToolMetrics>>,
    other_tool: OnceLock<ToolMetrics>,
}

/// Every series of one server, resolved once: the server tier of recording (resolutions, the wait
/// budget), and [`ServerMetrics::tool`] for the tool tier ([`ToolMetrics`]: calls, absent tools,
/// operations). Cheap to clone; get it from [`Metrics::server`](super::Metrics::server) and keep
/// it next to whatever you cache per server.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::Metrics;
/// use mcp_readiness::resolve::Verdict;
/// use mcp_readiness::state::CallOutcome;
///
/// let metrics = Metrics::new();
/// let files = metrics.server("files");
/// files.set_wait_budget(Duration::from_secs(20));
/// files.observe_resolution(&Verdict::READY, Duration::from_secs(20));
/// let read = files.tool("read_file");
/// read.observe_call(CallOutcome::Ok);
/// read.observe_operation("tools/call", None, Duration::from_millis(40));
/// files.tool("delete_everything").observe_absent();
///
/// let text = metrics.render();
/// assert!(text.contains(r#"mcp_readiness_wait_budget_seconds{server="files"} 20"#));
/// assert!(text.contains(r#"mcp_readiness_tool_absent_total{server="files",tool="delete_everything"} 1"#));
/// ```
///
/// A handle keeps recording after its server is removed
/// ([`ConnectionEvent::ServerRemoved`](crate::state::ConnectionEvent::ServerRemoved)), but into series that
/// are no longer exported; check [`ServerMetrics::is_live`] and fetch a new handle if the server
/// may come back.
#[derive(Clone)]
pub struct ServerMetrics {
    inner: Arc<ServerInner>,
}

impl fmt::Debug for ServerMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerMetrics")
            .field("server", &self.name())
            .field("live", &self.is_live())
            .finish()
    }
}

fn connect_index(result: ConnectResult) -> usize {
    result as usize
}

impl ServerMetrics {
    /// Resolves the series every server has: the resolution counters that alerts take rates of
    /// start at zero instead of appearing with their first increment.
    pub(crate) fn new(
        name: &str,
        fam: Arc<Families>,
        tool_cap: Arc<LabelCap>,
        board: Arc<StatusBoard>,
    ) -> ServerMetrics {
        let core = Arc::new(ServerCore {
            name: Arc::from(name),
            fam,
            tool_cap,
            board,
            live: Mutex::new(true),
            #[cfg(feature = "otel-metrics")]
            connection: Default::default(),
        });
        let fam = &core.fam;
        let budget_exhausted = core.create(&fam.budget_exhausted, &[name]);
        let inner = ServerInner {
            budget_exhausted,
            announced: AtomicBool::new(false),
            resolve_wait: Default::default(),
            #[cfg(feature = "otel-metrics")]
            otel_resolve_wait: Default::default(),
            waste: Default::default(),
            avoided: Default::default(),
            avoided_until: Mutex::new(None),
            connect_duration: Default::default(),
            #[cfg(feature = "otel-metrics")]
            otel_connect_duration: Default::default(),
            wait_budget: OnceLock::new(),
            stream_reopens: OnceLock::new(),
            supervised: OnceLock::new(),
            state: OnceLock::new(),
            tools: RwLock::new(HashMap::new()),
            other_tool: OnceLock::new(),
            core,
        };
        let server = ServerMetrics {
            inner: Arc::new(inner),
        };
        for state in State::ALL {
            if state != State::Ready {
                server.waste(state);
            }
            if state != State::Ready && !state.heals_with_time() {
                server.avoided(state);
            }
        }
        server
    }

    /// The server's name (its `server` label).
    pub fn name(&self) -> &str {
        &self.inner.core.name
    }

    /// Whether this handle's series are still exported (false once the server was removed).
    pub fn is_live(&self) -> bool {
        *self.inner.core.live.lock_unpoisoned()
    }

    fn waste(&self, state: State) -> &Counter {
        let core = &self.inner.core;
        core.lazy(
            &self.inner.waste[state.index()],
            &core.fam.waste,
            &[&core.name, state.as_str()],
        )
    }

    fn avoided(&self, state: State) -> &Counter {
        let core = &self.inner.core;
        core.lazy(
            &self.inner.avoided[state.index()],
            &core.fam.avoided,
            &[&core.name, state.as_str()],
        )
    }

    /// Records one resolution of a tool of this server, with the wait budget it had:
    ///
    /// - `mcp_readiness_resolve_wait_seconds{state}` observes `verdict.waited`;
    /// - when the verdict is not ready, `mcp_readiness_waste_seconds_total{state}` adds the wait;
    /// - when it is `connecting` and timed out, `mcp_readiness_budget_exhausted_total` counts one;
    /// - when its state does not heal with time (`unauthenticated`, `absent`),
    ///   `mcp_readiness_avoided_wait_seconds_total{state}` adds what a resolver without states
    ///   would really have waited for a tool that was never going to come: it would wait out the
    ///   rest of the budget (`budget - waited`) from now, and concurrent calls to one server
    ///   share one wait, so only the part of that wait not already counted for the server is
    ///   added (the union of the waits, on tokio's clock). A storm of refused calls therefore
    ///   adds at most the wall time it lasted plus one budget, not a budget per call.
    pub fn observe_resolution(&self, verdict: &Verdict, budget: Duration) {
        let state = verdict.state;
        let core = &self.inner.core;
        let waited = verdict.waited.as_secs_f64();
        core.lazy(
            &self.inner.resolve_wait[state.index()],
            &core.fam.resolve_wait,
            &[&core.name, state.as_str()],
        )
        .observe(verdict.waited);
        #[cfg(feature = "otel-metrics")]
        if let Some(otel) = &core.fam.otel {
            self.inner.otel_resolve_wait[state.index()]
                .get_or_init(|| otel.resolve_wait_series(&core.name, state))
                .record(waited);
        }
        if state == State::Ready {
            return;
        }
        self.waste(state).inc_by(waited);
        if state.heals_with_time() {
            if verdict.timed_out {
                self.inner.budget_exhausted.inc();
            }
        } else {
            let avoided = self.shared_wait(budget.saturating_sub(verdict.waited));
            if !avoided.is_zero() {
                self.avoided(state).inc_by(avoided.as_secs_f64());
            }
        }
    }

    /// A wait of `wait` from now, as a resolver without states would spend it for this server:
    /// the part of it that no wait already counted covers (waits for one server overlap; they do
    /// not add up).
    fn shared_wait(&self, wait: Duration) -> Duration {
        let now = tokio::time::Instant::now();
        let end = now + wait;
        let mut until = self.inner.avoided_until.lock_unpoisoned();
        let covered = until.map_or(now, |u| u.max(now));
        let added = end.saturating_duration_since(covered);
        if until.is_none_or(|u| u < end) {
            *until = Some(end);
        }
        added
    }

    /// The handle of one of this server's tools. The `tool` label is capped process-wide (see
    /// [`MetricsBuilder::tool_cap`](super::MetricsBuilder::tool_cap)): a name beyond the cap gets
    /// the shared `tool="other"` handle.
    pub fn tool(&self, tool: &str) -> ToolMetrics {
        if let Some(handle) = self.inner.tools.read_unpoisoned().get(tool) {
            return handle.clone();
        }
        self.admit_tool(tool)
    }

    fn admit_tool(&self, tool: &str) -> ToolMetrics {
        let core = &self.inner.core;
        let label = core.tool_cap.admit(tool);
        if &*label == OTHER && tool != OTHER {
            // Not admitted: share one handle instead of remembering every invented name.
            return self
                .inner
                .other_tool
                .get_or_init(|| ToolMetrics::new(core.clone(), label))
                .clone();
        }
        let mut tools = self.inner.tools.write_unpoisoned();
        tools
            .entry(label.clone())
            .or_insert_with(|| ToolMetrics::new(core.clone(), label))
            .clone()
    }

    /// Sets the wait budget in force for the server's tools: `mcp_readiness_wait_budget_seconds`,
    /// and the budget the status page shows on the server's row.
    pub fn set_wait_budget(&self, budget: Duration) {
        self.inner.core.board.set_wait_budget(self.name(), budget);
        self.set_wait_budget_series(budget);
    }

    /// Sets `mcp_readiness_wait_budget_seconds` only (the layer's, which the status page does
    /// not show).
    pub(crate) fn set_wait_budget_series(&self, budget: Duration) {
        let core = &self.inner.core;
        core.lazy(
            &self.inner.wait_budget,
            &core.fam.wait_budget,
            &[&core.name],
        )
        .set(budget.as_secs_f64());
    }

    // ----- driven by the supervisor's events (see `events.rs`) -----

    pub(crate) fn is_announced(&self) -> bool {
        self.inner.announced.load(Ordering::Relaxed)
    }

    /// Marks the server as configured; returns whether it was not before.
    pub(crate) fn announce(&self) -> bool {
        !self.inner.announced.swap(true, Ordering::Relaxed)
    }

    fn supervised(&self) -> &Supervised {
        self.inner.supervised.get_or_init(|| {
            let core = &self.inner.core;
            let fam = &core.fam;
            let name: &str = &core.name;
            Supervised {
                tools: core.create(&fam.server_tools, &[name]),
                connects: ConnectResult::ALL
                    .map(|result| core.create(&fam.connects, &[name, result.as_str()])),
                reconnects: core.create(&fam.reconnects, &[name]),
                cooldown: core.create(&fam.cooldown, &[name]),
                state_changes: State::ALL
                    .map(|state| core.create(&fam.state_changes, &[name, state.as_str()])),
            }
        })
    }

    /// Creates the supervisor-driven series (zeroed) if they do not exist yet, and the
    /// successful connect-duration histogram: every series a first event would create exists at
    /// 0 from the start, so `increase()` counts that first event.
    pub(crate) fn ensure_supervised(&self) {
        self.supervised();
        let core = &self.inner.core;
        let ok = ConnectResult::Ok;
        core.lazy(
            &self.inner.connect_duration[connect_index(ok)],
            &core.fam.connect_duration,
            &[&core.name, ok.as_str()],
        );
        #[cfg(feature = "otel-metrics")]
        self.otel_connect_duration(ok);
    }

    /// The bound OpenTelemetry series of `mcp_readiness.connect.duration{result}`, when a meter
    /// records too.
    #[cfg(feature = "otel-metrics")]
    fn otel_connect_duration(
        &self,
        result: ConnectResult,
    ) -> Option<&super::otel_instruments::BoundSeries> {
        let core = &self.inner.core;
        let otel = core.fam.otel.as_ref()?;
        Some(
            self.inner.otel_connect_duration[connect_index(result)]
                .get_or_init(|| otel.connect_duration_series(&core.name, result)),
        )
    }

    /// Where the server is reached now (the `Endpoint` event): the operation histogram's
    /// connection attributes over OTLP.
    pub(crate) fn set_endpoint(&self, endpoint: &crate::state::ServerEndpoint) {
        #[cfg(feature = "otel-metrics")]
        self.inner.core.connection.set_endpoint(endpoint);
        #[cfg(not(feature = "otel-metrics"))]
        let _ = endpoint;
    }

    /// The protocol version of the newest handshake (the `Handshake` event): the operation
    /// histogram's `mcp.protocol.version` over OTLP.
    pub(crate) fn set_protocol_version(&self, version: &str) {
        #[cfg(feature = "otel-metrics")]
        self.inner.core.connection.set_protocol_version(version);
        #[cfg(not(feature = "otel-metrics"))]
        let _ = version;
    }

    /// Counts one state change into `state` (`mcp_readiness_server_state_changes_total`).
    pub(crate) fn state_entered(&self, state: State) {
        self.supervised().state_changes[state.index()].inc();
    }

    /// Sets the one-hot state gauges to `state` and the change time to `now_unix_seconds`. A
    /// scrape sees either the old or the new state, never two or none.
    pub(crate) fn set_state(&self, state: State, now_unix_seconds: f64) {
        let core = &self.inner.core;
        // The four series appear together and already one-hot.
        let _gate = core.fam.gate.write_unpoisoned();
        let series = self.inner.state.get_or_init(|| StateSeries {
            by_state: State::ALL
                .map(|s| core.create(&core.fam.server_state, &[&core.name, s.as_str()])),
            changed: core.create(&core.fam.state_changed, &[&core.name]),
        });
        core.fam.server_state.exclusive(|| {
            for (gauge, s) in series.by_state.iter().zip(State::ALL) {
                gauge.set(i64::from(s == state));
            }
        });
        series.changed.set(now_unix_seconds);
    }

    /// Replaces the server's credential-expiry series with one per known expiry (a scrape sees
    /// the old set or the new one, never a mix).
    pub(crate) fn set_credential_expiries(&self, expiries: &[crate::state::CredentialExpiry]) {
        let core = &self.inner.core;
        // The gate, then the liveness (the order `set_state` takes them in).
        let _gate = core.fam.gate.write_unpoisoned();
        let live = core.live.lock_unpoisoned();
        if !*live {
            return;
        }
        core.fam
            .credential_expiry
            .remove_where(LABEL_SERVER, &core.name);
        for expiry in expiries {
            core.fam.set_credential_expiry(&core.name, expiry);
        }
    }

    /// Sets `mcp_readiness_server_next_attempt_timestamp_seconds` to `at` (Unix seconds), or
    /// removes the series when no attempt is waiting for a time.
    pub(crate) fn set_next_attempt(&self, at: Option<f64>) {
        let core = &self.inner.core;
        let _gate = core.fam.gate.write_unpoisoned();
        let live = core.live.lock_unpoisoned();
        if !*live {
            return;
        }
        match at {
            Some(at) => core.fam.next_attempt.get_or_create(&[&core.name]).set(at),
            None => {
                core.fam.next_attempt.remove_where(LABEL_SERVER, &core.name);
            }
        }
    }

    pub(crate) fn observe_connect(&self, result: ConnectResult, duration: Duration) {
        self.supervised().connects[connect_index(result)].inc();
        let core = &self.inner.core;
        core.lazy(
            &self.inner.connect_duration[connect_index(result)],
            &core.fam.connect_duration,
            &[&core.name, result.as_str()],
        )
        .observe(duration);
        #[cfg(feature = "otel-metrics")]
        if let Some(series) = self.otel_connect_duration(result) {
            series.record(duration.as_secs_f64());
        }
    }

    pub(crate) fn reconnected(&self) {
        self.supervised().reconnects.inc();
    }

    pub(crate) fn stream_reopened(&self) {
        let core = &self.inner.core;
        core.lazy(
            &self.inner.stream_reopens,
            &core.fam.stream_reopens,
            &[&core.name],
        )
        .inc();
    }

    pub(crate) fn cooldown_rejection(&self) {
        self.supervised().cooldown.inc();
    }

    pub(crate) fn set_tools(&self, count: usize) {
        self.supervised()
            .tools
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Stops exporting every series of this server (tool-labelled ones included); handles keep
    /// working but record into detached series.
    pub(crate) fn retire(&self) -> usize {
        let core = &self.inner.core;
        // Every series of the server goes at once.
        let _gate = core.fam.gate.write_unpoisoned();
        let mut live = core.live.lock_unpoisoned();
        *live = false;
        core.fam.remove_server(&core.name)
    }
}
