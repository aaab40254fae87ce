//! [`MetricsBuilder`]: how a [`Metrics`] is set up (its registry, label caps and clock), and why
//! it could not be.

use std::sync::Arc;
use std::time::Duration;

use prometheus::Registry;

use super::clock::{Clock, SystemClock};
use super::domain_families::Families;
use super::recorder::Metrics;
use crate::exposition::Owner;

/// The default cap on distinct `tool` label values, process-wide.
pub const DEFAULT_TOOL_CAP: usize = 256;

/// The default cap on servers that were never configured (named only by callers' tool names).
pub const DEFAULT_UNCONFIGURED_SERVER_CAP: usize = 256;

/// The default of [`MetricsBuilder::scrape_max_age`]: zero, so a scrape shares only a render
/// already in progress when it arrives (single flight) and a scrape after a change always sees it.
pub const DEFAULT_SCRAPE_MAX_AGE: Duration = Duration::ZERO;

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

/// Configures a [`Metrics`]: the registry, the label caps and the clock.
#[derive(Debug)]
pub struct MetricsBuilder {
    registry: Option<Registry>,
    tool_cap: usize,
    server_cap: usize,
    clock: Arc<dyn Clock>,
    scrape_max_age: Duration,
    #[cfg(feature = "otel-metrics")]
    meter: Option<opentelemetry::metrics::Meter>,
}

impl Default for MetricsBuilder {
    fn default() -> Self {
        MetricsBuilder {
            registry: None,
            tool_cap: DEFAULT_TOOL_CAP,
            server_cap: DEFAULT_UNCONFIGURED_SERVER_CAP,
            clock: Arc::new(SystemClock),
            scrape_max_age: DEFAULT_SCRAPE_MAX_AGE,
            #[cfg(feature = "otel-metrics")]
            meter: None,
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

    /// At most `cap` servers that no [`ConnectionEvent::ServerAdded`](crate::state::ConnectionEvent)
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

    /// How old a finished render of `/metrics` a scrape may be answered with (default
    /// [`DEFAULT_SCRAPE_MAX_AGE`]). Scrapes that arrive while a render is in progress always share
    /// it (single flight), whatever this age; a longer age lets scrapes that arrive just after it
    /// (several Prometheus servers scraping together) share it too. Counted from the render's
    /// start.
    pub fn scrape_max_age(mut self, age: Duration) -> Self {
        self.scrape_max_age = age;
        self
    }

    /// Records every metric through the OpenTelemetry metrics API on `meter` too (feature
    /// `otel-metrics`), beside the Prometheus series: the instruments of
    /// [`otel_names::ALL`](super::otel_names::ALL), `mcp.client.operation.duration` as the MCP
    /// semantic conventions define it. Gauges and counters are asynchronous instruments read from
    /// the recorder when the SDK collects; the histograms are recorded with the Prometheus ones.
    /// `None` (what `telemetry::OtlpMetrics::meter` gives without an
    /// endpoint) records nothing more. Give a meter to one recorder only (clone the `Metrics`
    /// instead of building a second one): two would report the same instruments twice.
    ///
    /// ```
    /// use opentelemetry::metrics::MeterProvider as _;
    /// use opentelemetry_sdk::metrics::SdkMeterProvider;
    /// use mcp_readiness::Metrics;
    ///
    /// // Your service's provider, with its readers and exporters.
    /// let provider = SdkMeterProvider::builder().build();
    /// let metrics = Metrics::builder().meter(provider.meter("mcp-readiness")).build()?;
    /// # Ok::<(), mcp_readiness::metrics::MetricsError>(())
    /// ```
    #[cfg(feature = "otel-metrics")]
    pub fn meter(mut self, meter: impl Into<Option<opentelemetry::metrics::Meter>>) -> Self {
        self.meter = meter.into();
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
        if owner == Owner::Recorder {
            register_start_time(&registry, self.clock.unix_now())?;
        }
        // Only once nothing can fail: the meter keeps the callbacks for its life.
        #[cfg(feature = "otel-metrics")]
        let fam = {
            let mut fam = fam;
            fam.otel = self
                .meter
                .as_ref()
                .map(|meter| super::otel_instruments::OtelInstruments::new(meter, &fam));
            fam
        };
        fam.build_info
            .get_or_create(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        Ok(Metrics::assemble(
            registry,
            owner,
            fam,
            self.tool_cap,
            self.server_cap,
            self.clock,
            self.scrape_max_age,
        ))
    }
}

/// `process_start_time_seconds` in the recorder's own registry: when this recorder was built
/// (`serve` and a service build it at start), so a restart shows as a new value and the exporter
/// alerts can count restarts between scrapes. A service that passes its own registry keeps its
/// own process metrics (the `prometheus` crate's process collector), so none is added there.
fn register_start_time(registry: &Registry, now: Duration) -> Result<(), MetricsError> {
    let name = super::names::PROCESS_START_TIME_SECONDS;
    let gauge = prometheus::Gauge::new(
        name,
        "Start time of the process since unix epoch in seconds.",
    )
    .map_err(|source| MetricsError::Declare { name, source })?;
    gauge.set(now.as_secs_f64());
    registry
        .register(Box::new(gauge))
        .map_err(|source| MetricsError::AlreadyRegistered { name, source })
}
