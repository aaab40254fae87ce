//! [`Metrics`]: the recorder the layer, the supervisor and the exporter share.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use prometheus::proto::MetricFamily;
use prometheus::{Registry, TextEncoder};

use super::cap::LabelCap;
use super::clock::{Clock, SystemClock};
use super::families::{Families, Owner};
use super::names::OTHER;
use super::outcome::CallOutcome;
use super::server::ServerMetrics;
use super::status::StatusBoard;
use crate::resolve::Verdict;

/// The default cap on distinct `tool` label values, process-wide.
pub const DEFAULT_TOOL_CAP: usize = 256;

/// The default cap on servers that were never configured (named only by callers' tool names).
pub const DEFAULT_UNCONFIGURED_SERVER_CAP: usize = 256;

/// Why the metrics could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// The registry already holds a metric of that name (with the same or other labels or help).
    #[error(
        "metric `{name}` is already registered in this registry: pass a registry that holds no mcp-readiness metrics, or clone the existing `Metrics` handle instead of building a second one"
    )]
    AlreadyRegistered {
        /// The colliding metric name.
        name: &'static str,
        /// What `prometheus` said.
        #[source]
        source: prometheus::Error,
    },
    /// A metric declaration was refused (a bug in this crate: please report it).
    #[error(
        "metric `{name}` could not be declared ({source}): this is a bug in mcp-readiness, please report it"
    )]
    Declare {
        /// The metric name.
        name: &'static str,
        /// What `prometheus` said.
        #[source]
        source: prometheus::Error,
    },
}

fn encode_other(encoder: &TextEncoder, family: &MetricFamily, out: &mut String) {
    // The encoder checks a family before writing any of it, so a refused family leaves nothing
    // half-written.
    if let Err(error) = encoder.encode_utf8(std::slice::from_ref(family), out) {
        tracing::warn!(metric = family.name(), %error, "metric family left out of /metrics");
    }
}

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
    registry: Registry,
    fam: Arc<Families>,
    servers: RwLock<Servers>,
    tool_cap: Arc<LabelCap>,
    server_cap: usize,
    pub(crate) clock: Arc<dyn Clock>,
    last_render_len: AtomicUsize,
    /// What the status page shows, kept from the supervisor's events.
    pub(crate) board: StatusBoard,
    /// Servers removed and not added again since (their late events are ignored).
    removed: std::sync::Mutex<std::collections::HashSet<Arc<str>>>,
    /// Whose registry it is: how [`Metrics::render`] writes this crate's families.
    owner: Owner,
}

/// The recorder of every metric in DESIGN.md's table, over a `prometheus::Registry`.
/// Cheap to clone (one `Arc`); all clones record into the same series.
///
/// - The layer records resolutions, calls and operations, by server name or — cheaper, with no
///   lookup at all — through the handles of [`Metrics::server`] and [`ServerMetrics::tool`].
/// - The supervisor's [`ConnectionEvent`](crate::ConnectionEvent)s drive the server state, connect
///   and reconnect series: `Metrics` is an [`EventSink`](crate::EventSink).
/// - [`Metrics::render`] produces the text exposition; [`serve`](super::serve) serves it.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::metrics::{CallOutcome, Metrics};
/// use mcp_readiness::{ConnectionEvent, EventSink, State, Verdict};
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

/// Configures a [`Metrics`]: the registry, the label caps and the clock.
#[derive(Debug)]
pub struct MetricsBuilder {
    registry: Option<Registry>,
    tool_cap: usize,
    server_cap: usize,
    clock: Arc<dyn Clock>,
}

impl Default for MetricsBuilder {
    fn default() -> Self {
        MetricsBuilder {
            registry: None,
            tool_cap: DEFAULT_TOOL_CAP,
            server_cap: DEFAULT_UNCONFIGURED_SERVER_CAP,
            clock: Arc::new(SystemClock),
        }
    }
}

impl MetricsBuilder {
    /// Registers every family into your own `registry` (a clone of the handle; it is shared)
    /// instead of a new one, as a `prometheus` collector: gathering the registry yields them all,
    /// with its namespace prefix and common labels applied. [`Metrics::render`] then writes what
    /// the registry gathers with `prometheus::TextEncoder` (the same bytes as with a registry of
    /// the recorder's own, when yours has no prefix or common labels), which costs more for a
    /// large fleet than the recorder's own registry, whose `render` writes the families from
    /// their storage.
    pub fn registry(mut self, registry: &Registry) -> Self {
        self.registry = Some(registry.clone());
        self
    }

    /// At most `cap` distinct `tool` (and `gen_ai_tool_name`) label values for the life of the
    /// recorder, across all servers; tool names seen after that are counted as `tool="other"`.
    /// Default [`DEFAULT_TOOL_CAP`].
    pub fn tool_cap(mut self, cap: usize) -> Self {
        self.tool_cap = cap;
        self
    }

    /// At most `cap` servers that no [`ConnectionEvent::ServerAdded`](crate::ConnectionEvent)
    /// announced (named only by the tool names callers use); later ones are counted as
    /// `server="other"`. Configured servers are never capped. Default
    /// [`DEFAULT_UNCONFIGURED_SERVER_CAP`].
    pub fn unconfigured_server_cap(mut self, cap: usize) -> Self {
        self.server_cap = cap;
        self
    }

    /// Reads wall-clock time (for `mcp_readiness_server_state_changed_timestamp_seconds`) from
    /// `clock`; default [`SystemClock`]. Tests pass a [`ManualClock`](super::ManualClock).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Declares and registers every metric. Fails, registering nothing, if the registry already
    /// holds one of the names.
    pub fn build(self) -> Result<Metrics, MetricsError> {
        let fam = Families::new()?;
        let (registry, owner) = match self.registry {
            Some(registry) => (registry, Owner::Service),
            None => (Registry::new(), Owner::Recorder),
        };
        fam.register(&registry, owner)?;
        fam.build_info
            .get_or_create(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        Ok(Metrics {
            inner: Arc::new(Inner {
                registry,
                fam: Arc::new(fam),
                servers: RwLock::new(Servers::default()),
                tool_cap: Arc::new(LabelCap::new(self.tool_cap)),
                server_cap: self.server_cap,
                clock: self.clock,
                last_render_len: AtomicUsize::new(0),
                board: StatusBoard::default(),
                removed: Default::default(),
                owner,
            }),
        })
    }
}

impl Metrics {
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
    /// use mcp_readiness::{ConnectionEvent, EventSink, State};
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
    /// use mcp_readiness::{ConnectionEvent, EventSink, Metrics, State};
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

    /// The whole registry in the Prometheus text format 0.0.4 (metric families sorted by name,
    /// series by label values), this crate's families and any collectors you registered
    /// yourself. A family another collector made invalid is left out (and logged) rather than
    /// failing the scrape.
    ///
    /// With the recorder's own registry ([`Metrics::new`]), this crate's families are written
    /// from their storage and the registry's other collectors with `prometheus::TextEncoder`,
    /// merged by name. With yours ([`MetricsBuilder::registry`]), everything the registry
    /// gathers is written with `prometheus::TextEncoder`, so its prefix and common labels apply.
    pub fn render(&self) -> String {
        // One generation of the server set, each server one-hot (see `Metrics::reload`).
        let _reload = self
            .inner
            .fam
            .reload_gate
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let _gate = self
            .inner
            .fam
            .gate
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let mut out =
            String::with_capacity(self.inner.last_render_len.load(Ordering::Relaxed) + 1024);
        let encoder = TextEncoder::new();
        // Our families' collectors in the recorder's own registry gather nothing (they only hold
        // the names), so what it gathers is the other collectors; a service's registry gathers
        // our families too.
        let gathered = self.inner.registry.gather();
        let ours = match self.inner.owner {
            Owner::Recorder => self.inner.fam.sorted(),
            Owner::Service => Vec::new(),
        };
        let mut others = gathered.iter().peekable();
        for family in ours {
            while let Some(other) = others.next_if(|o| o.name() < family.name()) {
                encode_other(&encoder, other, &mut out);
            }
            family.encode(&mut out);
        }
        for other in others {
            encode_other(&encoder, other, &mut out);
        }
        self.inner
            .last_render_len
            .store(out.len(), Ordering::Relaxed);
        out
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
