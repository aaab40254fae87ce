//! [`Metrics`]: the recorder the layer, the supervisor and the exporter share.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use prometheus::Registry;

use super::builder::{MetricsBuilder, MetricsError};
use super::cap::LabelCap;
use super::clock::Clock;
use super::families::{Families, Owner};
use super::names::OTHER;
use super::server::ServerMetrics;
use super::status::StatusBoard;
use crate::resolve::Verdict;
use crate::state::CallOutcome;

/// Servers by name, and how many of them were never configured.
#[derive(Default)]
struct Servers {
    by_name: HashMap<Arc<str>, ServerMetrics>,
    unconfigured: usize,
}

/// The most removed server names remembered (see `Metrics::remember_removed`).
const MAX_TOMBSTONES: usize = 4096;

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) struct Inner {
    pub(super) registry: Registry,
    pub(super) fam: Arc<Families>,
    servers: RwLock<Servers>,
    tool_cap: Arc<LabelCap>,
    server_cap: usize,
    pub(crate) clock: Arc<dyn Clock>,
    /// The length of the last render (the next one's first guess of its capacity).
    pub(super) last_render_len: AtomicUsize,
    /// What the status page shows, kept from the supervisor's events.
    pub(crate) board: StatusBoard,
    /// Servers removed and not added again since (their late events are ignored).
    removed: std::sync::Mutex<std::collections::HashSet<Arc<str>>>,
    /// Whose registry it is: how [`Metrics::render`] writes this crate's families.
    pub(super) owner: Owner,
    /// How old a finished render a scrape of `/metrics` may be answered with (see
    /// [`MetricsBuilder::scrape_max_age`](super::MetricsBuilder::scrape_max_age)).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(super) scrape_max_age: std::time::Duration,
}

/// The recorder of every metric in DESIGN.md's table, over a `prometheus::Registry`.
/// Cheap to clone (one `Arc`); all clones record into the same series.
///
/// - The layer records resolutions, calls and operations, by server name or — cheaper, with no
///   lookup at all — through the handles of [`Metrics::server`] and [`ServerMetrics::tool`].
/// - The supervisor's [`ConnectionEvent`](crate::state::ConnectionEvent)s drive the server state, connect
///   and reconnect series: `Metrics` is an [`EventSink`](crate::state::EventSink).
/// - [`Metrics::render`] produces the text exposition; [`serve`](super::serve) serves it.
///
/// Without connection events, `/metrics` has no `mcp_readiness_server_state` series and the
/// status page has no rows (it says so): the layer's `.metrics(..)` records calls and
/// resolutions only. Give the recorder to the connections as their event sink:
/// `HubOptions::builder().event_sink(metrics.clone())` for a `Hub`,
/// `Peers::with_events(metrics.clone())` for connections the service keeps itself.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::{metrics::Metrics, state::CallOutcome};
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
                tool_cap: Arc::new(LabelCap::new(tool_cap)),
                server_cap,
                clock,
                last_render_len: AtomicUsize::new(0),
                board: StatusBoard::default(),
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
    /// use mcp_readiness::metrics::Metrics;
    /// use mcp_readiness::{state::{ConnectionEvent, EventSink}, State};
    ///
    /// let metrics = Metrics::new();
    /// metrics.reload(|| {
    ///     metrics.on_event(&ConnectionEvent::ServerAdded { server: "files".into(), state: State::Absent });
    /// });
    /// assert!(metrics.render().contains(r#"server="files""#));
    /// ```
    pub fn reload<R>(&self, reload: impl FnOnce() -> R) -> R {
        let _reload = self
            .inner
            .fam
            .reload_gate
            .write()
            .unwrap_or_else(|p| p.into_inner());
        reload()
    }

    /// Whether `ServerRemoved` named the server since its last `ServerAdded`.
    pub(crate) fn was_removed(&self, name: &str) -> bool {
        lock(&self.inner.removed).contains(name)
    }

    pub(crate) fn remember_removed(&self, name: &str) {
        let mut removed = lock(&self.inner.removed);
        // Bounded: only configured names are removed; a pathological churn of fresh names
        // forgets the oldest tombstones wholesale.
        if removed.len() >= MAX_TOMBSTONES {
            removed.clear();
        }
        removed.insert(Arc::from(name));
    }

    pub(crate) fn forget_removed(&self, name: &str) {
        lock(&self.inner.removed).remove(name);
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
        let server = ServerMetrics::new(name, self.inner.fam.clone(), self.inner.tool_cap.clone());
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

    fn with_server<R>(&self, name: &str, f: impl FnOnce(&ServerMetrics) -> R) -> R {
        // Fast path: one lookup under a shared lock, no reference count traffic.
        if let Some(server) = self.read_servers().by_name.get(name) {
            return f(server);
        }
        f(&self.admit_server(name, false))
    }

    /// Records one resolution; see [`ServerMetrics::observe_resolution`].
    pub fn observe_resolution(&self, server: &str, verdict: &Verdict, budget: Duration) {
        self.with_server(server, |s| s.observe_resolution(verdict, budget))
    }

    /// Counts one call; see [`ServerMetrics::observe_call`].
    pub fn observe_call(&self, server: &str, tool: &str, outcome: CallOutcome) {
        self.with_server(server, |s| s.observe_call(tool, outcome))
    }

    /// Counts one call to a tool its ready server does not offer; see
    /// [`ServerMetrics::tool_absent`].
    pub fn tool_absent(&self, server: &str, tool: &str) {
        self.with_server(server, |s| s.tool_absent(tool))
    }

    /// Observes one MCP operation; see [`ToolMetrics::observe_operation`](super::ToolMetrics::observe_operation).
    pub fn observe_operation(
        &self,
        server: &str,
        method: &str,
        tool: &str,
        error_type: Option<&str>,
        duration: Duration,
    ) {
        self.with_server(server, |s| {
            s.observe_operation(method, tool, error_type, duration)
        })
    }

    /// Records how a configuration (re)load ended: `mcp_readiness_config_last_reload_successful`
    /// is 1 or 0, and on success `mcp_readiness_config_last_reload_success_timestamp_seconds` is
    /// now. Neither series exists until the first call (a service without a configuration file
    /// exports none). `serve` calls it at start and on every SIGHUP.
    ///
    /// ```
    /// use mcp_readiness::metrics::Metrics;
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

    /// Creates the series a first call of `server`'s `tool` would create, at 0
    /// (`mcp_readiness_tool_absent_total`), so `increase()` counts that first call. For the tools
    /// you know you will call (`serve` declares the configured steps). The `tool` label is
    /// capped as always.
    ///
    /// ```
    /// use mcp_readiness::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.declare_tool("github", "search_issues");
    /// assert!(metrics.render().contains(
    ///     r#"mcp_readiness_tool_absent_total{server="github",tool="search_issues"} 0"#
    /// ));
    /// ```
    pub fn declare_tool(&self, server: &str, tool: &str) {
        self.with_server(server, |s| s.tool(tool).declare())
    }

    /// Sets the wait budget in force for `server`'s tools.
    pub fn set_wait_budget(&self, server: &str, budget: Duration) {
        self.inner.board.set_wait_budget(server, budget);
        self.with_server(server, |s| s.set_wait_budget(budget))
    }

    /// The live status page as HTML (what `GET /` of the exporter serves): one row per server
    /// announced by the Hub's events, with its state, `action`, reason, time in state, tools and
    /// last connection attempts. Names and reasons are escaped; the page reloads itself.
    ///
    /// ```
    /// use mcp_readiness::{state::{ConnectionEvent, EventSink}, Metrics, State};
    ///
    /// let metrics = Metrics::new();
    /// metrics.on_event(&ConnectionEvent::ServerAdded { server: "github".into(), state: State::Unauthenticated });
    /// let page = metrics.status_page();
    /// assert!(page.contains(r#"<tr data-server="github" data-state="unauthenticated">"#));
    /// assert!(page.contains("reauthorize"));
    /// ```
    pub fn status_page(&self) -> String {
        let now = self.inner.clock.unix_now().as_secs_f64();
        super::status_page::render(&self.inner.board.snapshot(), now)
    }

    fn read_servers(&self) -> std::sync::RwLockReadGuard<'_, Servers> {
        self.inner.servers.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write_servers(&self) -> std::sync::RwLockWriteGuard<'_, Servers> {
        self.inner
            .servers
            .write()
            .unwrap_or_else(|p| p.into_inner())
    }
}
