//! [`Metrics`]: the recorder the layer, the supervisor and the exporter share.

use crate::util::{MutexExt as _, RwLockExt as _};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use prometheus::Registry;

use super::builder::{MetricsBuilder, MetricsError};
use super::clock::Clock;
use super::domain_families::Families;
use super::names::OTHER;
use super::server_handle::ServerMetrics;
use super::status_board::StatusBoard;
use crate::exposition::{LabelCap, Owner, render_merged};

/// Servers by name, and how many of them were never configured.
#[derive(Default)]
struct Servers {
    by_name: HashMap<Arc<str>, ServerMetrics>,
    unconfigured: usize,
}

/// The most removed server names remembered (see `Metrics::remember_removed`).
const MAX_TOMBSTONES: usize = 4096;

pub(crate) struct Inner {
    registry: Registry,
    pub(super) fam: Arc<Families>,
    servers: RwLock<Servers>,
    tool_cap: Arc<LabelCap>,
    server_cap: usize,
    pub(crate) clock: Arc<dyn Clock>,
    /// The length of the last render (the next one's first guess of its capacity).
    last_render_len: AtomicUsize,
    /// What the status page shows, kept from the supervisor's events (and the wait budgets
    /// set through [`ServerMetrics::set_wait_budget`]).
    pub(super) board: Arc<StatusBoard>,
    /// Servers removed and not added again since (their late events are ignored).
    removed: std::sync::Mutex<std::collections::HashSet<Arc<str>>>,
    /// Whose registry it is: how [`Metrics::render`] writes this crate's families.
    owner: Owner,
    /// How old a finished render a scrape of `/metrics` may be answered with (see
    /// [`MetricsBuilder::scrape_max_age`](super::MetricsBuilder::scrape_max_age)).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    scrape_max_age: std::time::Duration,
}

/// The recorder of every metric in DESIGN.md's table, over a `prometheus::Registry`.
/// Cheap to clone (one `Arc`); all clones record into the same series.
///
/// - Resolutions, calls and operations are recorded through the handles, resolved once:
///   [`Metrics::server`] gives a server's [`ServerMetrics`] (resolutions, its wait budget), and
///   [`ServerMetrics::tool`] a tool's [`ToolMetrics`](super::ToolMetrics) (calls, absent tools,
///   operations). The layer keeps them per tool.
/// - The supervisor's [`ConnectionEvent`](crate::state::ConnectionEvent)s drive the server state, connect
///   and reconnect series: `Metrics` is an [`EventSink`](crate::state::EventSink).
/// - [`Metrics::render`] produces the text exposition; the `exporter` module (feature `http`)
///   serves it and the status page.
///
/// Without connection events, `/metrics` has no `mcp_readiness_server_state` series and the
/// status page has no rows (it says so): the layer's `.metrics(..)` records calls and
/// resolutions only. Give the recorder to the connections as their event sink:
/// `HubOptions::builder().event_sink(metrics.clone())` for a `Hub`,
/// `Peers::with_events(metrics.clone())` for connections the service keeps itself.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::{Metrics, state::CallOutcome};
/// use mcp_readiness::{state::{ConnectionEvent, EventSink}, State, resolve::Verdict};
///
/// let metrics = Metrics::new();
/// metrics.on_event(&ConnectionEvent::ServerAdded { server: "files".into(), state: State::Ready });
/// let files = metrics.server("files");
/// files.observe_resolution(&Verdict::READY, Duration::from_secs(20));
/// files.tool("read_file").observe_call(CallOutcome::Ok);
///
/// let text = metrics.render();
/// assert!(text.contains(r#"mcp_readiness_server_state{server="files",state="ready"} 1"#));
/// assert!(text.contains(r#"mcp_readiness_tool_calls_total{outcome="ok",server="files",tool="read_file"} 1"#));
/// ```
#[derive(Clone)]
pub struct Metrics {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let servers = self
            .inner
            .servers
            .read()
            .map(|s| s.by_name.len())
            .unwrap_or(0);
        f.debug_struct("Metrics")
            .field("servers", &servers)
            .field("tool_cap", &self.inner.tool_cap.limit())
            .field("clock", &self.inner.clock)
            .finish()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A recorder over `fam`, registered in `registry` as `owner` calls for.
    pub(super) fn assemble(
        registry: Registry,
        owner: Owner,
        fam: Families,
        tool_cap: usize,
        server_cap: usize,
        clock: Arc<dyn Clock>,
        scrape_max_age: std::time::Duration,
    ) -> Metrics {
        Metrics {
            inner: Arc::new(Inner {
                registry,
                fam: Arc::new(fam),
                servers: RwLock::new(Servers::default()),
                tool_cap: Arc::new(LabelCap::new(tool_cap, OTHER)),
                server_cap,
                clock,
                last_render_len: AtomicUsize::new(0),
                board: Arc::default(),
                removed: Default::default(),
                owner,
                scrape_max_age,
            }),
        }
    }

    /// A recorder with its own registry and default settings.
    pub fn new() -> Metrics {
        // Registering static, valid names into a fresh, empty registry cannot collide.
        match Metrics::builder().build() {
            Ok(metrics) => metrics,
            Err(error) => unreachable!("a fresh registry refused mcp-readiness metrics: {error}"),
        }
    }

    /// Registers into `registry` with default settings. Fails, registering nothing, if it
    /// already holds one of the names.
    pub fn with_registry(registry: &Registry) -> Result<Metrics, MetricsError> {
        Metrics::builder().registry(registry).build()
    }

    /// Options: registry, caps, clock.
    pub fn builder() -> MetricsBuilder {
        MetricsBuilder::default()
    }

    /// The registry whose other collectors [`Metrics::render`] serves beside this crate's
    /// families: register your own collectors here to serve them together.
    ///
    /// A registry passed to [`MetricsBuilder::registry`] holds every family of this crate as a
    /// collector. The one [`Metrics::new`] makes holds only their names (so nothing else can take
    /// them): gathering it yields your collectors, not this crate's families, which
    /// [`Metrics::render`] writes itself. To gather every family in a registry, pass yours to the
    /// builder.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The handle of one server, created on first use and cached. Servers never configured count
    /// against [`MetricsBuilder::unconfigured_server_cap`]; beyond it, this is the
    /// `server="other"` handle.
    pub fn server(&self, name: &str) -> ServerMetrics {
        if let Some(server) = self.read_servers().by_name.get(name) {
            return server.clone();
        }
        self.admit_server(name, false)
    }

    /// The handle of a configured server: never capped, marked as configured.
    pub(crate) fn configured_server(&self, name: &str) -> ServerMetrics {
        let server = self
            .server_if_known(name)
            .unwrap_or_else(|| self.admit_server(name, true));
        if server.announce() && server.name() == name {
            let mut servers = self.write_servers();
            // It was counted as unconfigured when a caller named it first.
            servers.unconfigured = servers.unconfigured.saturating_sub(1);
        }
        server
    }

    /// Runs `reload` (a configuration reload: servers removed, added, replaced) while no
    /// [`Metrics::render`] runs, so every scrape sees the server set from before or after it,
    /// never halfway. The events `reload` causes may be recorded from inside it: only renders wait.
    ///
    /// ```
    /// use mcp_readiness::Metrics;
    /// use mcp_readiness::{state::{ConnectionEvent, EventSink}, State};
    ///
    /// let metrics = Metrics::new();
    /// metrics.reload(|| {
    ///     metrics.on_event(&ConnectionEvent::ServerAdded { server: "files".into(), state: State::Absent });
    /// });
    /// assert!(metrics.render().contains(r#"server="files""#));
    /// ```
    pub fn reload<R>(&self, reload: impl FnOnce() -> R) -> R {
        let _reload = self.inner.fam.reload_gate.write_unpoisoned();
        reload()
    }

    /// Whether `ServerRemoved` named the server since its last `ServerAdded`.
    pub(crate) fn was_removed(&self, name: &str) -> bool {
        self.inner.removed.lock_unpoisoned().contains(name)
    }

    pub(crate) fn remember_removed(&self, name: &str) {
        let mut removed = self.inner.removed.lock_unpoisoned();
        // Bounded: only configured names are removed; a pathological churn of fresh names
        // forgets the oldest tombstones wholesale.
        if removed.len() >= MAX_TOMBSTONES {
            removed.clear();
        }
        removed.insert(Arc::from(name));
    }

    pub(crate) fn forget_removed(&self, name: &str) {
        self.inner.removed.lock_unpoisoned().remove(name);
    }

    fn server_if_known(&self, name: &str) -> Option<ServerMetrics> {
        self.read_servers().by_name.get(name).cloned()
    }

    fn admit_server(&self, name: &str, configured: bool) -> ServerMetrics {
        let mut servers = self.write_servers();
        if let Some(server) = servers.by_name.get(name) {
            return server.clone();
        }
        let name = if configured || servers.unconfigured < self.inner.server_cap {
            name
        } else {
            OTHER
        };
        if let Some(server) = servers.by_name.get(name) {
            return server.clone();
        }
        if !configured {
            servers.unconfigured += 1;
        }
        let server = ServerMetrics::new(
            name,
            self.inner.fam.clone(),
            self.inner.tool_cap.clone(),
            self.inner.board.clone(),
        );
        if configured {
            server.announce();
        }
        servers.by_name.insert(Arc::from(name), server.clone());
        server
    }

    /// Stops exporting every series of `server`; returns how many series went away.
    pub(crate) fn remove_server(&self, name: &str) -> usize {
        let removed = {
            let mut servers = self.write_servers();
            let removed = servers.by_name.remove(name);
            if let Some(server) = &removed
                && !server.is_announced()
            {
                servers.unconfigured = servers.unconfigured.saturating_sub(1);
            }
            removed
        };
        match removed {
            Some(server) => server.retire(),
            None => self.inner.fam.remove_server(name),
        }
    }

    /// Records how a configuration (re)load ended: `mcp_readiness_config_last_reload_successful`
    /// is 1 or 0, and on success `mcp_readiness_config_last_reload_success_timestamp_seconds` is
    /// now. Neither series exists until the first call (a service without a configuration file
    /// exports none). `serve` calls it at start and on every SIGHUP.
    ///
    /// ```
    /// use mcp_readiness::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.config_reloaded(true);
    /// metrics.config_reloaded(false); // refused: the old configuration keeps running
    /// let text = metrics.render();
    /// assert!(text.contains("mcp_readiness_config_last_reload_successful 0\n"));
    /// assert!(text.contains("mcp_readiness_config_last_reload_success_timestamp_seconds "));
    /// ```
    pub fn config_reloaded(&self, ok: bool) {
        let fam = &self.inner.fam;
        if ok {
            fam.reload_time
                .get_or_create(&[])
                .set(self.inner.clock.unix_now().as_secs_f64());
        }
        fam.reload_ok.get_or_create(&[]).set(i64::from(ok));
    }

    /// Records how many probe modules answer `GET /probe` (the default module and each named one;
    /// 0 while probes are off) as `mcp_readiness_probe_modules`. No series until the first call
    /// (only `serve` exports it). `serve` calls it at start and on every reload, so an exporter
    /// that only answers probes is told apart from one with no server configured.
    ///
    /// ```
    /// use mcp_readiness::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// assert!(!metrics.render().contains("mcp_readiness_probe_modules"));
    /// metrics.probe_modules_configured(2);
    /// assert!(metrics.render().contains("mcp_readiness_probe_modules 2\n"));
    /// ```
    pub fn probe_modules_configured(&self, modules: usize) {
        let modules = i64::try_from(modules).unwrap_or(i64::MAX);
        self.inner.fam.probe_modules.get_or_create(&[]).set(modules);
    }

    /// The whole registry in the Prometheus text format 0.0.4 (metric families sorted by name,
    /// series by label values), this crate's families and any collectors you registered
    /// yourself. A family another collector made invalid is left out (and logged) rather than
    /// failing the scrape.
    ///
    /// With the recorder's own registry ([`Metrics::new`]), this crate's families are written
    /// from their storage and the registry's other collectors with `prometheus::TextEncoder`,
    /// merged by name. With yours ([`MetricsBuilder::registry`](super::MetricsBuilder::registry)),
    /// everything the registry gathers is written with `prometheus::TextEncoder`, so its prefix
    /// and common labels apply.
    pub fn render(&self) -> String {
        let fam = &self.inner.fam;
        // One generation of the server set, each server one-hot (see `Metrics::reload`).
        let _reload = fam.reload_gate.read_unpoisoned();
        let _gate = fam.gate.read_unpoisoned();
        // Our families' collectors in the recorder's own registry gather nothing (they only hold
        // the names), so what it gathers is the other collectors; a service's registry gathers
        // our families too.
        let ours = match self.inner.owner {
            Owner::Recorder => fam.sorted(),
            Owner::Service => Vec::new(),
        };
        let capacity = self.inner.last_render_len.load(Ordering::Relaxed) + 1024;
        let out = render_merged(&ours, &self.inner.registry, capacity);
        self.inner
            .last_render_len
            .store(out.len(), Ordering::Relaxed);
        out
    }

    /// Holds every render back until the guard is dropped (what a reload does), for tests.
    #[cfg(all(test, feature = "http"))]
    pub(crate) fn hold_renders(&self) -> std::sync::RwLockWriteGuard<'_, ()> {
        self.inner.fam.reload_gate.write_unpoisoned()
    }

    /// How old a finished render a scrape of `/metrics` may be answered with.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn scrape_max_age(&self) -> std::time::Duration {
        self.inner.scrape_max_age
    }

    /// The status page's rows, by server name, and the wall-clock time now in Unix seconds.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn status_rows(&self) -> (Vec<(Arc<str>, super::status_board::ServerRow)>, f64) {
        let now = self.inner.clock.unix_now().as_secs_f64();
        (self.inner.board.snapshot(), now)
    }

    /// The status page's rows, the wall-clock time now in Unix seconds and the id of the last
    /// state change the rows include, taken together (what `/status.json` answers).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn status_snapshot(
        &self,
    ) -> (Vec<(Arc<str>, super::status_board::ServerRow)>, f64, u64) {
        let (rows, last_change) = self.inner.board.snapshot_with_last_change();
        let now = self.inner.clock.unix_now().as_secs_f64();
        (rows, now, last_change)
    }

    /// The credentials that cannot renew themselves (a static bearer JWT, a refresh token's own
    /// lifetime) and expire before `at`, by server name, as the connections reported them
    /// (`mcp_readiness_credential_expiry_timestamp_seconds{renewable="false"}`): what will stop
    /// a run at `at` unless a person re-authorizes first. Expired ones are included.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use mcp_readiness::state::{ConnectionEvent, CredentialExpiry, CredentialKind, EventSink};
    /// use mcp_readiness::{Metrics, State};
    ///
    /// let metrics = Metrics::new();
    /// let now = SystemTime::now();
    /// metrics.on_event(&ConnectionEvent::ServerAdded { server: "jwt".into(), state: State::Ready });
    /// metrics.on_event(&ConnectionEvent::CredentialsExpire {
    ///     server: "jwt".into(),
    ///     expiries: vec![CredentialExpiry {
    ///         kind: CredentialKind::BearerToken,
    ///         expires_at: now + Duration::from_secs(2 * 3600),
    ///         renewable: false,
    ///     }],
    /// });
    /// let in_6h = metrics.credentials_expiring_before(now + Duration::from_secs(6 * 3600));
    /// assert_eq!(in_6h[0].0, "jwt");
    /// assert!(metrics.credentials_expiring_before(now + Duration::from_secs(3600)).is_empty());
    /// ```
    pub fn credentials_expiring_before(
        &self,
        at: std::time::SystemTime,
    ) -> Vec<(String, crate::state::CredentialExpiry)> {
        self.inner
            .board
            .snapshot()
            .into_iter()
            .flat_map(|(server, row)| {
                row.credentials
                    .into_iter()
                    .filter(|c| !c.renewable && c.expires_at < at)
                    .map(move |c| (server.to_string(), c))
            })
            .collect()
    }

    /// The readiness changes from now on, in order, for a subscriber in the same process (the
    /// stream the exporter's `GET /events` serves): each state change of a server announced by
    /// the connections' events. Sending never waits for a subscriber; one that falls more than
    /// [`CHANGE_BUFFER`](super::CHANGE_BUFFER) changes behind reads a
    /// [`ChangeEvent::Reset`](super::ChangeEvent::Reset).
    ///
    /// ```
    /// use mcp_readiness::{Metrics, metrics::ChangeEvent};
    /// use mcp_readiness::state::{ConnectionEvent, EventSink};
    /// use mcp_readiness::State;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let metrics = Metrics::new();
    /// metrics.on_event(&ConnectionEvent::ServerAdded { server: "files".into(), state: State::Connecting });
    /// let mut changes = metrics.state_changes();
    /// metrics.on_event(&ConnectionEvent::StateChanged {
    ///     server: "files".into(), from: State::Connecting, to: State::Ready, reason: None,
    /// });
    /// let Some(ChangeEvent::Changed(change)) = changes.next().await else { panic!() };
    /// assert_eq!((&*change.server, change.from, change.to, change.id), ("files", State::Connecting, State::Ready, 1));
    /// # });
    /// ```
    pub fn state_changes(&self) -> super::StateChanges {
        self.inner.board.subscribe(None)
    }

    /// [`Metrics::state_changes`], starting with the remembered changes after change `id` (the
    /// last one a subscriber read before it went away), or with one
    /// [`ChangeEvent::Reset`](super::ChangeEvent::Reset) when the history (the last
    /// [`CHANGE_HISTORY`](super::CHANGE_HISTORY) changes) no longer reaches back to it.
    pub fn state_changes_after(&self, id: u64) -> super::StateChanges {
        self.inner.board.subscribe(Some(id))
    }

    /// How many subscribers follow the readiness changes now (read by `/events`' tests).
    #[cfg(all(test, feature = "http"))]
    pub(crate) fn state_change_subscribers(&self) -> usize {
        self.inner.board.subscribers()
    }

    fn read_servers(&self) -> std::sync::RwLockReadGuard<'_, Servers> {
        self.inner.servers.read_unpoisoned()
    }

    fn write_servers(&self) -> std::sync::RwLockWriteGuard<'_, Servers> {
        self.inner.servers.write_unpoisoned()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use prometheus::Registry;

    use super::*;
    use crate::metrics::ManualClock;
    use crate::resolve::Verdict;
    use crate::state::State;
    use crate::state::{CallOutcome, ConnectionEvent, EventSink};

    fn record(metrics: &Metrics) {
        let mine = prometheus::IntCounter::new("aaa_mine_total", "mine").unwrap();
        mine.inc();
        metrics.registry().register(Box::new(mine)).unwrap();
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: "fi\"les".into(),
            state: State::Ready,
        });
        let files = metrics.server("fi\"les");
        files.observe_resolution(&Verdict::READY, Duration::from_secs(20));
        files.tool("read\nfile").observe_call(CallOutcome::Ok);
        files.tool("t").observe_operation(
            "tools/call",
            Some("timeout"),
            Duration::from_millis(1500),
        );
    }

    #[test]
    fn a_plain_registry_of_the_service_renders_the_bytes_of_the_recorders_own() {
        let clock = ManualClock::new(Duration::from_millis(1_700_000_000_250));
        let own = Metrics::builder().clock(clock.clone()).build().unwrap();
        record(&own);
        let registry = Registry::new();
        let service = Metrics::builder()
            .registry(&registry)
            .clock(clock)
            .build()
            .unwrap();
        record(&service);
        let own_text = own.render();
        assert!(
            own_text.starts_with("# HELP aaa_mine_total mine\n"),
            "{own_text}"
        );
        // The recorder's own registry adds the process's start time (at the clock's now); a
        // service's registry keeps its own process metrics. Everything else is byte for byte.
        assert!(
            own_text.contains("\nprocess_start_time_seconds 1700000000.25\n"),
            "{own_text}"
        );
        let text: String = own_text
            .lines()
            .filter(|l| !l.contains(crate::metrics::names::PROCESS_START_TIME_SECONDS))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(service.render(), text);
    }

    #[test]
    fn the_recorders_own_registry_gathers_only_the_other_collectors() {
        let own = Metrics::new();
        record(&own);
        let names: Vec<String> = own
            .registry()
            .gather()
            .iter()
            .map(|family| family.name().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "aaa_mine_total",
                crate::metrics::names::PROCESS_START_TIME_SECONDS
            ]
        );
        let service = Metrics::with_registry(&Registry::new()).unwrap();
        record(&service);
        let families = own.render().matches("# TYPE ").count();
        // The service's registry: the same families but the process start time.
        assert_eq!(service.registry().gather().len() + 1, families);
    }
}
