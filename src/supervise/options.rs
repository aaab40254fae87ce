use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::connector::AfterConnect;
use crate::state::EventSink;

/// How the [`Hub`](super::Hub) supervises its servers: configured with the consuming setters of
/// [`HubOptions::builder`], read with the getters below.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::supervise::HubOptions;
///
/// let options = HubOptions::builder()
///     .connect_timeout(Duration::from_secs(10))
///     .cooldown(Duration::from_secs(30))
///     .health_interval(None)
///     .reconnect_on_drop(true)
///     .build();
/// assert_eq!(options.cooldown(), Duration::from_secs(30));
/// ```
#[derive(Clone)]
pub struct HubOptions {
    pub(crate) connect_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) cooldown: Duration,
    pub(crate) health_interval: Option<Duration>,
    pub(crate) ping_timeout: Duration,
    pub(crate) reconnect_on_drop: bool,
    pub(crate) sinks: Vec<Arc<dyn EventSink>>,
    pub(crate) after_connect: BTreeMap<String, AfterConnect>,
}

impl Default for HubOptions {
    /// Connect timeout 30 s, call timeout 60 s, cooldown 60 s, health ping every 30 s answered
    /// within 5 s, reconnect
    /// on next use, no event sinks, no hooks.
    fn default() -> Self {
        HubOptions {
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            cooldown: Duration::from_secs(60),
            health_interval: Some(Duration::from_secs(30)),
            ping_timeout: Duration::from_secs(5),
            reconnect_on_drop: false,
            sinks: Vec::new(),
            after_connect: BTreeMap::new(),
        }
    }
}

impl fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HubOptions")
            .field("connect_timeout", &self.connect_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("cooldown", &self.cooldown)
            .field("health_interval", &self.health_interval)
            .field("ping_timeout", &self.ping_timeout)
            .field("reconnect_on_drop", &self.reconnect_on_drop)
            .field("sinks", &self.sinks.len())
            .field(
                "after_connect",
                &self.after_connect.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl HubOptions {
    /// Configures hub options, starting from the defaults.
    pub fn builder() -> HubOptionsBuilder {
        HubOptionsBuilder {
            options: HubOptions::default(),
        }
    }

    /// Checks what the configuration file checks: positive timeouts and ping interval.
    pub(crate) fn validate(&self) -> Result<(), super::SpecError> {
        let bad = |option, problem| Err(super::SpecError::BadOption { option, problem });
        if self.connect_timeout.is_zero() {
            return bad(
                "connect_timeout",
                "a zero timeout fails every attempt; pass a positive duration such as 30 s",
            );
        }
        if self.call_timeout.is_zero() {
            return bad(
                "call_timeout",
                "a zero timeout fails every call; pass a positive duration such as 60 s",
            );
        }
        if self.ping_timeout.is_zero() {
            return bad(
                "ping_timeout",
                "a zero timeout fails every health ping; pass a positive duration such as 5 s",
            );
        }
        if self.health_interval.is_some_and(|d| d.is_zero()) {
            return bad(
                "health_interval",
                "a zero interval would ping without pause; pass a positive interval, or None for no pings",
            );
        }
        Ok(())
    }

    /// The connect timeout in force.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The call timeout in force.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The cooldown in force.
    pub fn cooldown(&self) -> Duration {
        self.cooldown
    }

    /// The health-ping period in force (`None`: no pings).
    pub fn health_interval(&self) -> Option<Duration> {
        self.health_interval
    }

    /// The health-ping timeout in force.
    pub fn ping_timeout(&self) -> Duration {
        self.ping_timeout
    }

    /// Whether a dropped connection is re-made at once (`true`) or at the next use.
    pub fn reconnect_on_drop(&self) -> bool {
        self.reconnect_on_drop
    }
}

/// Configures [`HubOptions`] with consuming setters; made by [`HubOptions::builder`]. A builder
/// can be passed wherever options are expected ([`Hub::new`](super::Hub::new) takes
/// `impl Into<HubOptions>`).
#[derive(Clone, Debug, Default)]
pub struct HubOptionsBuilder {
    options: HubOptions,
}

impl HubOptionsBuilder {
    /// How long one connection attempt may take, from start (spawn / TCP connect) through the
    /// handshake, the `after_connect` hook and the first tool list. Default 30 s; zero makes
    /// [`Hub::new`](super::Hub::new) return an error.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.options.connect_timeout = timeout;
        self
    }

    /// How long one tool call may take. Default 60 s; zero makes [`Hub::new`](super::Hub::new)
    /// return an error.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.options.call_timeout = timeout;
        self
    }

    /// How long a server whose connect failed is left alone; calls fail at once meanwhile.
    /// Default 60 s.
    pub fn cooldown(mut self, cooldown: Duration) -> Self {
        self.options.cooldown = cooldown;
        self
    }

    /// The health-ping period for connected servers (MCP `ping`), or `None` for no pings.
    /// Default 30 s. `Some(Duration::ZERO)` makes [`Hub::new`](super::Hub::new) return an error.
    pub fn health_interval(mut self, interval: Option<Duration>) -> Self {
        self.options.health_interval = interval;
        self
    }

    /// How long one health ping may take before the connection counts as hung and is dropped.
    /// Default 5 s (never the call timeout: a frozen server must be noticed within about two ping
    /// intervals); zero makes [`Hub::new`](super::Hub::new) return an error.
    pub fn ping_timeout(mut self, timeout: Duration) -> Self {
        self.options.ping_timeout = timeout;
        self
    }

    /// `false` (default): a dropped connection is re-made at the next use. `true`: at once, and
    /// again when a cooldown ends (the standalone exporter keeps its gauges fresh this way).
    pub fn reconnect_on_drop(mut self, reconnect: bool) -> Self {
        self.options.reconnect_on_drop = reconnect;
        self
    }

    /// Adds a listener for every [`ConnectionEvent`](super::ConnectionEvent).
    pub fn event_sink(mut self, sink: impl EventSink) -> Self {
        self.options.sinks.push(Arc::new(sink));
        self
    }

    /// Sets the hook that re-provisions `server`'s per-connection state on every fresh
    /// connection, before its first call.
    pub fn after_connect(mut self, server: impl Into<String>, hook: AfterConnect) -> Self {
        self.options.after_connect.insert(server.into(), hook);
        self
    }

    /// The options.
    pub fn build(self) -> HubOptions {
        self.options
    }
}

impl From<HubOptionsBuilder> for HubOptions {
    fn from(builder: HubOptionsBuilder) -> Self {
        builder.build()
    }
}
