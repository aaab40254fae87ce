//! [`HubOptions`] and [`HubOptionsBuilder`]: the hub's timeouts, cooldown, health ping, crash-loop
//! backoff, per-server budgets, event sinks and `after_connect` hooks.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::client::connector::AfterConnect;
use crate::client::session::server_requests::ServerRequests;
use crate::resolve::Budget;
use crate::state::EventSink;

/// How the [`Hub`](crate::supervise::Hub) supervises its servers: configured with the consuming setters of
/// [`HubOptions::builder`], read with the getters below.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::HubOptions;
///
/// let options = HubOptions::builder()
///     .connect_timeout(Duration::from_secs(10))
///     .cooldown(Duration::from_secs(30))
///     .health_interval(None)
///     .reconnect_on_drop(false)
///     .crash_backoff(Duration::from_secs(2), Duration::from_secs(120))
///     .build()?;
/// assert_eq!(options.cooldown(), Duration::from_secs(30));
/// assert!(HubOptions::builder().cooldown(Duration::from_secs(30)).ping_timeout(Duration::ZERO).build().is_err());
/// # Ok::<(), mcp_readiness::client::SpecError>(())
/// ```
#[derive(Clone)]
pub struct HubOptions {
    pub(crate) connect_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) cooldown: Duration,
    pub(crate) health_interval: Option<Duration>,
    pub(crate) ping_timeout: Duration,
    pub(crate) reconnect_on_drop: bool,
    pub(crate) crash: CrashPolicy,
    pub(crate) server_budgets: BTreeMap<String, Budget>,
    pub(crate) sinks: Vec<Arc<dyn EventSink>>,
    pub(crate) after_connect: BTreeMap<String, AfterConnect>,
    pub(crate) server_requests: Option<Arc<dyn ServerRequests>>,
    /// Renew at connect the credentials a connector renews itself that expire before this time.
    pub(crate) renew_before: Option<std::time::SystemTime>,
}

impl Default for HubOptions {
    /// Connect timeout 30 s, call timeout 60 s, cooldown 60 s, health ping every 30 s answered
    /// within 5 s, dropped connections re-made at once in the background, crash-loop backoff from
    /// 1 s doubling to 60 s (reset after 60 s up), no per-server budgets, no event sinks, no hooks.
    fn default() -> Self {
        HubOptions {
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            cooldown: Duration::from_secs(60),
            health_interval: Some(Duration::from_secs(30)),
            ping_timeout: Duration::from_secs(5),
            reconnect_on_drop: true,
            crash: CrashPolicy::default(),
            server_budgets: BTreeMap::new(),
            sinks: Vec::new(),
            after_connect: BTreeMap::new(),
            server_requests: None,
            renew_before: None,
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
            .field("crash", &self.crash)
            .field("server_budgets", &self.server_budgets)
            .field("sinks", &self.sinks.len())
            .field(
                "after_connect",
                &self.after_connect.keys().collect::<Vec<_>>(),
            )
            .field("server_requests", &self.server_requests)
            .field("renew_before", &self.renew_before)
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
    pub(crate) fn validate(&self) -> Result<(), crate::client::SpecError> {
        let bad = |option, problem| Err(crate::client::SpecError::BadOption { option, problem });
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
        if self.crash.initial.is_zero() {
            return bad(
                "crash_backoff",
                "a zero first delay would restart a crash-looping server without pause; pass a positive duration such as 1 s",
            );
        }
        if self.crash.max < self.crash.initial {
            return bad(
                "crash_backoff",
                "the longest delay is shorter than the first one; pass a max of at least the initial delay",
            );
        }
        if self.crash.stable_after.is_zero() {
            return bad(
                "stable_after",
                "with zero, every connection counts as stable and a crash loop is never backed off; pass a positive duration such as 60 s",
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

    /// Whether a dropped connection is re-made at once in the background (`true`, the default)
    /// or at the next use.
    pub fn reconnect_on_drop(&self) -> bool {
        self.reconnect_on_drop
    }

    /// The crash-loop backoff in force: the first and the longest delay.
    pub fn crash_backoff(&self) -> (Duration, Duration) {
        (self.crash.initial, self.crash.max)
    }

    /// How long a connection must stay up to reset the crash-loop count.
    pub fn stable_after(&self) -> Duration {
        self.crash.stable_after
    }

    /// The wait budget set for `server` with [`HubOptionsBuilder::server_budget`], if any.
    pub fn server_budget(&self, server: &str) -> Option<Budget> {
        self.server_budgets.get(server).copied()
    }
}

/// How a server that keeps ending its connection soon after the handshake is backed off.
///
/// The first such end reconnects at once (a single restart is normal); the `n`-th in a row
/// (`n >= 2`) waits `initial * 2^(n-2)`, at most `max`, and reads `absent` meanwhile. A connection
/// that stays up `stable_after` resets the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CrashPolicy {
    pub(crate) initial: Duration,
    pub(crate) max: Duration,
    pub(crate) stable_after: Duration,
}

impl Default for CrashPolicy {
    fn default() -> Self {
        CrashPolicy {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
            stable_after: Duration::from_secs(60),
        }
    }
}

impl CrashPolicy {
    /// The backoff after the `short_lives`-th short-lived connection in a row, or `None` when it
    /// reconnects without one (fewer than two).
    pub(crate) fn delay(&self, short_lives: u32) -> Option<Duration> {
        let doublings = short_lives.checked_sub(2)?;
        let factor = 1u32.checked_shl(doublings.min(31)).unwrap_or(u32::MAX);
        Some(self.initial.saturating_mul(factor).min(self.max))
    }
}

/// Configures [`HubOptions`] with consuming setters; made by [`HubOptions::builder`]. A builder
/// can be passed wherever options are expected ([`Hub::new`](crate::supervise::Hub::new) takes
/// `impl Into<HubOptions>`).
#[derive(Clone, Debug, Default)]
pub struct HubOptionsBuilder {
    options: HubOptions,
}

impl HubOptionsBuilder {
    /// How long one connection attempt may take, from start (spawn / TCP connect) through the
    /// handshake, the `after_connect` hook and the first tool list. Default 30 s; zero makes
    /// [`Hub::new`](crate::supervise::Hub::new) return an error.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.options.connect_timeout = timeout;
        self
    }

    /// How long one tool call may take. Default 60 s; zero makes [`Hub::new`](crate::supervise::Hub::new)
    /// return an error.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.options.call_timeout = timeout;
        self
    }

    /// The longest a server whose connects keep failing is left alone; calls fail at once
    /// meanwhile. The first failed connect in a row waits the crash backoff's initial delay
    /// (1 s), each one after it twice as long, up to this. Default 60 s.
    pub fn cooldown(mut self, cooldown: Duration) -> Self {
        self.options.cooldown = cooldown;
        self
    }

    /// The health-ping period for connected servers (MCP `ping`), or `None` for no pings.
    /// Default 30 s. `Some(Duration::ZERO)` makes [`Hub::new`](crate::supervise::Hub::new) return an error.
    pub fn health_interval(mut self, interval: Option<Duration>) -> Self {
        self.options.health_interval = interval;
        self
    }

    /// How long one health ping may take before the connection counts as hung and is dropped.
    /// Default 5 s (never the call timeout: a frozen server must be noticed within about two ping
    /// intervals); zero makes [`Hub::new`](crate::supervise::Hub::new) return an error.
    pub fn ping_timeout(mut self, timeout: Duration) -> Self {
        self.options.ping_timeout = timeout;
        self
    }

    /// `true` (default): a dropped connection is re-made at once in the background, and again
    /// when a cooldown or a crash-loop backoff ends, as MCP hosts do (the gauges stay fresh
    /// without calls). `false`: at the next use. Either way a server idle after a drop reads
    /// `connecting`, not `absent`: nothing has failed yet.
    pub fn reconnect_on_drop(mut self, reconnect: bool) -> Self {
        self.options.reconnect_on_drop = reconnect;
        self
    }

    /// The crash-loop backoff: a server whose connections keep ending within
    /// [`stable_after`](Self::stable_after) of the handshake waits `initial`, then twice as long
    /// each time, at most `max`, between attempts, and reads `absent` meanwhile (the first such
    /// end reconnects at once). Default 1 s to 60 s. A zero `initial`, or `max < initial`, makes
    /// [`Hub::new`](crate::supervise::Hub::new) return an error.
    pub fn crash_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.options.crash.initial = initial;
        self.options.crash.max = max;
        self
    }

    /// How long a connection must stay up to count as stable and reset the crash-loop count.
    /// Default 60 s; zero makes [`Hub::new`](crate::supervise::Hub::new) return an error.
    pub fn stable_after(mut self, stable_after: Duration) -> Self {
        self.options.crash.stable_after = stable_after;
        self
    }

    /// The wait budget for `server`'s tools, instead of the resolver's default (the
    /// configuration's `readiness.servers.<name>.budget`). The Hub offers it through
    /// [`Inventory::wait_budget`](crate::resolve::Inventory::wait_budget), so a
    /// [`CapabilityCache`](crate::resolve::CapabilityCache) (the layer, `check`) over the Hub waits that
    /// long for that server.
    pub fn server_budget(mut self, server: impl Into<String>, budget: Budget) -> Self {
        self.options.server_budgets.insert(server.into(), budget);
        self
    }

    /// Adds a listener for every [`ConnectionEvent`](crate::state::ConnectionEvent).
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

    /// Who answers what the servers ask during a call (`elicitation/create`): a service with a
    /// person behind it. Without it (the default, for unattended runs) the connections declare
    /// no `elicitation` capability, decline every elicitation, and a call the server answers
    /// with `input_required` ends with that outcome. See [`ServerRequests`].
    pub fn server_requests(mut self, requests: impl ServerRequests) -> Self {
        self.options.server_requests = Some(Arc::new(requests));
        self
    }

    /// At every successful connect, renews now the credentials a connector renews itself (an
    /// OAuth refresh token, client credentials, a workload identity) whose access token expires
    /// before `at`: the pre-flight of `check --next-run-in` passes the next run, so a revoked
    /// refresh token, a rotated secret or an assertion that no longer works is found now, while
    /// a person can still act, not when the token runs out during the next run. A renewal the
    /// authorization server refuses fails the attempt: the server reads `unauthenticated` with
    /// the reason and what to run. One it could not ask leaves the server `ready` (its token
    /// works now) and is reported by [`Hub::renewals`](crate::supervise::Hub::renewals). Off by
    /// default (`serve` renews each token shortly before it expires).
    pub fn renew_credentials_expiring_before(mut self, at: std::time::SystemTime) -> Self {
        self.options.renew_before = Some(at);
        self
    }

    /// The options, checked as [`Hub::new`](crate::supervise::Hub::new) checks them: an error names the
    /// option that cannot work (a zero timeout or interval, a crash backoff whose longest delay is
    /// shorter than its first).
    pub fn build(self) -> Result<HubOptions, crate::client::SpecError> {
        self.options.validate()?;
        Ok(self.options)
    }
}

/// The options unchecked: [`Hub::new`](crate::supervise::Hub::new) checks what it is given.
impl From<HubOptionsBuilder> for HubOptions {
    fn from(builder: HubOptionsBuilder) -> Self {
        builder.options
    }
}
