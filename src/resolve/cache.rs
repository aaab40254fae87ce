use crate::util::MutexExt as _;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::time::Instant;

use super::{Budget, Inventory, Scope, Verdict, classify, resolve};
use crate::ready_path::{AtomicDeadline, CallStart, CowMap, Deadline, Origin};
use crate::state::{State, ToolName};

/// How long a verdict is reused, by state.
///
/// `ready`, `unauthenticated` and `absent` hold steady for tens of seconds; `connecting` may become
/// `ready` on the next tick, so it lives briefly (the seed's first bug: one shared lifetime kept a
/// connector that had just come online hidden for the rest of it). With an inventory that offers a
/// [`ChangeFeed`](super::ChangeFeed), any entry made before a change is re-checked at its next use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheTtls {
    /// Lifetime of a ready tool (per tool). Default 60 s.
    pub ready: Duration,
    /// Lifetime of a connecting server (per server). Default 5 s.
    pub connecting: Duration,
    /// Lifetime of an unauthenticated server (per server). Default 60 s.
    pub unauthenticated: Duration,
    /// Lifetime of an absent server, or of a tool its live server does not offer. Default 60 s.
    pub absent: Duration,
}

impl CacheTtls {
    /// The lifetime for a verdict in `state`.
    pub fn for_state(&self, state: State) -> Duration {
        match state {
            State::Ready => self.ready,
            State::Connecting => self.connecting,
            State::Unauthenticated => self.unauthenticated,
            State::Absent => self.absent,
        }
    }
}

impl Default for CacheTtls {
    fn default() -> Self {
        CacheTtls {
            ready: Duration::from_secs(60),
            connecting: Duration::from_secs(5),
            unauthenticated: Duration::from_secs(60),
            absent: Duration::from_secs(60),
        }
    }
}

/// Resolution at the point of use, cached at the right grain.
///
/// - `connecting`, `unauthenticated` and a server's `absent` are facts about a **server**: one entry
///   per server serves all its tools (the seed's second bug: keyed by tool, three tools on one
///   connecting server paid the budget three times).
/// - `ready`, and a live server not offering a tool, are facts about one **tool**.
/// - Single flight per server: concurrent resolutions for tools of one server share one wait.
/// - A ready hit is lock-free and allocation-free (two `arc-swap` loads, one map lookup, one clock
///   read), so threads do not contend on it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcp_readiness::{resolve::CapabilityCache, Snapshot, State, StaticInventory, ToolName};
///
/// let inventory = Arc::new(StaticInventory::new(Snapshot::default().with_pending_server("search")));
/// let cache = CapabilityCache::new(inventory.clone());
///
/// // The first tool of a connecting server pays the budget...
/// let first = cache.resolve(&ToolName::parse("mcp__search__query")).await;
/// assert_eq!((first.state, first.waited), (State::Connecting, Duration::from_secs(20)));
/// // ...and the other tools of that server learn the same fact for free.
/// let second = cache.resolve(&ToolName::parse("mcp__search__suggest")).await;
/// assert_eq!((second.state, second.waited), (State::Connecting, Duration::ZERO));
/// # }
/// ```
pub struct CapabilityCache {
    inventory: Arc<dyn Inventory>,
    budget: Budget,
    /// Budgets for single servers, set on the cache (they win over the inventory's).
    server_budgets: HashMap<Arc<str>, Budget>,
    ttls: CacheTtls,
    /// Per-tool entries; the map is copied only when a new tool name appears.
    tools: CowMap<Arc<ToolSlot>>,
    /// Per-server entries and the flight in progress for each server.
    servers: Mutex<HashMap<Arc<str>, ServerSlot>>,
    /// The most server slots kept (see [`CapabilityCache::with_max_servers`]).
    max_servers: usize,
    next_flight: AtomicU64,
    /// When the cache was made: what the ready path's deadlines count from.
    origin: Origin,
}

/// One tool's cached verdict (`ready`, or `absent` at the grain of the tool).
#[derive(Default)]
pub(crate) struct ToolSlot {
    entry: ArcSwapOption<Entry>,
    /// The ready path's copy of a ready `entry`: its expiry ([`Deadline::PASSED`] when the entry
    /// is not a ready one), and its generation.
    ready_until: AtomicDeadline,
    ready_generation: AtomicU64,
}

impl ToolSlot {
    /// Drops a ready verdict (a call found the connection dead): the next call re-checks. A
    /// verdict that is not ready (a tool its live server does not offer) is kept.
    pub(crate) fn forget_ready(&self) {
        if self.ready_until.load() != Deadline::PASSED {
            self.store(None, Deadline::PASSED);
        }
    }

    fn store(&self, entry: Option<Arc<Entry>>, ready_until: Deadline) {
        if let Some(entry) = &entry {
            self.ready_generation
                .store(entry.generation, Ordering::Relaxed);
        }
        self.ready_until.store(ready_until);
        self.entry.store(entry);
    }
}

#[derive(Default)]
struct ServerSlot {
    /// A server-grain verdict (`connecting`, `unauthenticated`, server `absent`).
    cached: Option<Entry>,
    /// The resolution in progress for this server, shared by every caller.
    flight: Option<Flight>,
}

#[derive(Clone)]
struct Entry {
    verdict: Verdict,
    expires: Instant,
    /// The inventory generation the verdict was made under.
    generation: u64,
}

#[derive(Clone)]
struct Flight {
    id: u64,
    leader: ToolName,
    verdict: Shared<BoxFuture<'static, Verdict>>,
}

/// What to do about a server slot, decided under its lock and acted on after releasing it.
enum SlotAction {
    /// A fresh server-grain verdict: use it.
    Hit(Verdict),
    /// A server-grain verdict made before the inventory last changed: check it once.
    Revalidate(State),
    /// Wait for the flight in progress (possibly one this caller just started).
    Join(Flight),
}

impl CapabilityCache {
    /// The most distinct tool names cached by default. Names beyond it are resolved but not cached,
    /// so a caller that invents tool names cannot grow memory without bound.
    pub const DEFAULT_MAX_TOOLS: usize = 10_000;

    /// The most distinct server names kept by default. Beyond it, slots without a resolution in
    /// progress are dropped (expired ones first) to make room, so a caller that invents server
    /// names (`mcp__x1__t`, `mcp__x2__t`, ...) cannot grow memory without bound.
    pub const DEFAULT_MAX_SERVERS: usize = 1_000;

    /// A cache over `inventory` with the default budget and lifetimes.
    pub fn new(inventory: impl Inventory) -> Self {
        CapabilityCache {
            inventory: Arc::new(inventory),
            budget: Budget::default(),
            server_budgets: HashMap::new(),
            ttls: CacheTtls::default(),
            tools: CowMap::with_cap(Self::DEFAULT_MAX_TOOLS),
            servers: Mutex::new(HashMap::new()),
            max_servers: Self::DEFAULT_MAX_SERVERS,
            next_flight: AtomicU64::new(0),
            // Calibrates the ready path's clock: here, not on a call.
            origin: Origin::now(),
        }
    }

    /// Sets the wait budget.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Sets the wait budget of one server's tools, instead of the default budget and of whatever
    /// the inventory says for it ([`Inventory::wait_budget`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use std::time::Duration;
    /// use mcp_readiness::{Budget, resolve::CapabilityCache, Snapshot, StaticInventory, ToolName};
    ///
    /// let inventory = StaticInventory::new(
    ///     Snapshot::default().with_pending_server("warehouse").with_pending_server("search"),
    /// );
    /// let slow = Budget::try_new(Duration::from_secs(45), Duration::from_secs(2)).unwrap();
    /// let cache = CapabilityCache::new(inventory).with_server_budget("warehouse", slow);
    /// assert_eq!(cache.budget_for("warehouse").wait(), Duration::from_secs(45));
    /// assert_eq!(cache.budget_for("search").wait(), Duration::from_secs(20));
    /// let verdict = cache.resolve(&ToolName::parse("mcp__warehouse__query")).await;
    /// // The whole budget: past the last poll that fits (44 s), a change would still wake it.
    /// assert_eq!(verdict.waited, Duration::from_secs(45));
    /// # }
    /// ```
    pub fn with_server_budget(mut self, server: impl Into<Arc<str>>, budget: Budget) -> Self {
        self.server_budgets.insert(server.into(), budget);
        self
    }

    /// Sets the lifetimes by state.
    pub fn with_ttls(mut self, ttls: CacheTtls) -> Self {
        self.ttls = ttls;
        self
    }

    /// Sets how many distinct server names are kept at most (at least 1).
    pub fn with_max_servers(mut self, max_servers: usize) -> Self {
        self.max_servers = max_servers.max(1);
        self
    }

    /// Sets how many distinct tool names are cached at most.
    pub fn with_max_tools(mut self, max_tools: usize) -> Self {
        self.tools = CowMap::with_cap(max_tools);
        self
    }

    /// The default wait budget (for servers without one of their own).
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// The wait budget in force for `server`'s tools: the one set with
    /// [`CapabilityCache::with_server_budget`], else the inventory's
    /// ([`Inventory::wait_budget`], e.g. `readiness.servers.<name>.budget` through the Hub), else
    /// the default [`CapabilityCache::budget`].
    pub fn budget_for(&self, server: &str) -> Budget {
        self.server_budgets
            .get(server)
            .copied()
            .or_else(|| self.inventory.wait_budget(server))
            .unwrap_or(self.budget)
    }

    /// The inventory behind this cache.
    pub fn inventory(&self) -> &Arc<dyn Inventory> {
        &self.inventory
    }

    /// The fast path: a fresh per-tool verdict, if there is one. Never waits, never allocates, never
    /// locks.
    pub fn lookup(&self, tool: &ToolName) -> Option<Verdict> {
        self.tools
            .with(tool.as_str(), |slot| {
                let entry = slot.entry.load();
                let entry = entry.as_ref()?;
                (entry.generation == self.generation() && Instant::now() < entry.expires)
                    .then(|| entry.verdict.clone())
            })
            .flatten()
    }

    /// The slot `tool`'s per-tool verdicts are kept in (created empty), for a caller that keeps
    /// it to skip the map lookup of [`CapabilityCache::lookup`]. `None` past the tool-name cap.
    /// A slot stays valid for the cache's whole life: [`CapabilityCache::clear`] empties slots in
    /// place.
    pub(crate) fn tool_slot(&self, tool: &ToolName) -> Option<Arc<ToolSlot>> {
        self.tools
            .get_or_insert_with(tool.as_arc(), Default::default)
    }

    /// If `slot` holds a ready verdict that is still fresh (then it is [`Verdict::READY`]), now,
    /// as the start of the call it admits: [`CapabilityCache::lookup`] for the ready path,
    /// without the map lookup or the clone. Two atomic loads, the inventory's generation and one
    /// clock read (the entry's [`Deadline`] knows which clock; see `ready_path`).
    #[inline]
    pub(crate) fn ready_now(&self, slot: &ToolSlot) -> Option<CallStart> {
        let now = slot.ready_until.load().admit(&self.origin)?;
        (slot.ready_generation.load(Ordering::Relaxed) == self.generation()).then_some(now)
    }

    /// Resolves `tool`: from the cache when a fresh verdict is there, otherwise by (joining) a
    /// budgeted resolution for its server. `waited` is how long this caller waited.
    pub async fn resolve(&self, tool: &ToolName) -> Verdict {
        if let Some(hit) = self.lookup(tool) {
            return hit;
        }
        let start = Instant::now();
        let server: Arc<str> = Arc::from(tool.server());
        loop {
            let action = self.slot_action(&server, tool);
            match action {
                SlotAction::Hit(verdict) => return verdict.waited_for(start.elapsed()),
                SlotAction::Revalidate(cached) => {
                    let now = self.classify_now(tool).await;
                    if now.state == cached && now.scope == Scope::Server {
                        self.refresh_server_generation(&server, cached);
                    } else {
                        self.forget_server(&server, cached);
                    }
                }
                SlotAction::Join(flight) => {
                    let shared = flight.verdict.clone().await;
                    self.land(&server, &flight, &shared);
                    let verdict = if flight.leader == *tool || shared.scope == Scope::Server {
                        shared
                    } else {
                        // The server is live now: whether *this* tool is offered is its own fact.
                        let own = self.classify_now(tool).await;
                        let own = match own.state {
                            State::Connecting => Verdict {
                                timed_out: true,
                                ..own
                            },
                            _ => own,
                        };
                        self.store_tool(tool, &own);
                        own
                    };
                    return verdict.waited_for(start.elapsed());
                }
            }
        }
    }

    /// Drops every cached verdict (e.g. after a configuration reload).
    pub fn clear(&self) {
        // Emptied in place: callers may hold slots (see `tool_slot`).
        self.tools
            .for_each(|slot| slot.store(None, Deadline::PASSED));
        self.lock_servers()
            .values_mut()
            .for_each(|slot| slot.cached = None);
    }

    #[inline]
    fn generation(&self) -> u64 {
        self.inventory.changes().map_or(0, |feed| feed.generation())
    }

    fn lock_servers(&self) -> MutexGuard<'_, HashMap<Arc<str>, ServerSlot>> {
        // A panic elsewhere cannot leave a slot half-written: every write is one assignment.
        self.servers.lock_unpoisoned()
    }

    fn slot_action(&self, server: &Arc<str>, tool: &ToolName) -> SlotAction {
        let generation = self.generation();
        let now = Instant::now();
        let mut servers = self.lock_servers();
        if servers.len() >= self.max_servers && !servers.contains_key(server) {
            make_room(&mut servers, self.max_servers, now);
        }
        let slot = servers.entry(server.clone()).or_default();
        if let Some(entry) = &slot.cached {
            if now >= entry.expires {
                slot.cached = None;
            } else if entry.generation == generation {
                return SlotAction::Hit(entry.verdict.clone());
            } else {
                return SlotAction::Revalidate(entry.verdict.state);
            }
        }
        if let Some(flight) = &slot.flight {
            return SlotAction::Join(flight.clone());
        }
        let flight = Flight {
            id: self.next_flight.fetch_add(1, Ordering::Relaxed),
            leader: tool.clone(),
            verdict: {
                let inventory = self.inventory.clone();
                let tool = tool.clone();
                let budget = self.budget_for(server);
                async move { resolve(&inventory, &tool, budget).await }
                    .boxed()
                    .shared()
            },
        };
        slot.flight = Some(flight.clone());
        SlotAction::Join(flight)
    }

    /// Stores a finished flight's verdict, once (the first caller to see it finish).
    fn land(&self, server: &Arc<str>, flight: &Flight, verdict: &Verdict) {
        {
            let mut servers = self.lock_servers();
            let Some(slot) = servers.get_mut(server) else {
                return;
            };
            if slot.flight.as_ref().is_none_or(|f| f.id != flight.id) {
                return;
            }
            slot.flight = None;
            if verdict.scope == Scope::Server {
                slot.cached = Some(self.entry(verdict.clone()));
            }
        }
        if verdict.scope == Scope::Tool {
            self.store_tool(&flight.leader, verdict);
        }
    }

    fn entry(&self, verdict: Verdict) -> Entry {
        Entry {
            expires: crate::util::later(Instant::now(), self.ttls.for_state(verdict.state)),
            generation: self.generation(),
            verdict: verdict.waited_for(Duration::ZERO),
        }
    }

    fn store_tool(&self, tool: &ToolName, verdict: &Verdict) {
        if verdict.scope != Scope::Tool {
            return;
        }
        let entry = Arc::new(self.entry(Verdict {
            timed_out: false,
            ..verdict.clone()
        }));
        if let Some(slot) = self.tool_slot(tool) {
            let ready_until = if entry.verdict.is_ready() {
                Deadline::at(entry.expires, &self.origin)
            } else {
                Deadline::PASSED
            };
            slot.store(Some(entry), ready_until);
        }
    }

    fn refresh_server_generation(&self, server: &Arc<str>, state: State) {
        let generation = self.generation();
        if let Some(ServerSlot {
            cached: Some(entry),
            ..
        }) = self.lock_servers().get_mut(server)
            && entry.verdict.state == state
        {
            entry.generation = generation;
        }
    }

    fn forget_server(&self, server: &Arc<str>, state: State) {
        if let Some(slot) = self.lock_servers().get_mut(server)
            && slot
                .cached
                .as_ref()
                .is_some_and(|e| e.verdict.state == state)
        {
            slot.cached = None;
        }
    }

    /// One look at the inventory, no waiting.
    async fn classify_now(&self, tool: &ToolName) -> Verdict {
        let snapshot = self.inventory.server_snapshot(tool.server()).await;
        let state = classify(tool, &snapshot);
        super::resolver::verdict(tool, &snapshot, state, Duration::ZERO, false)
    }
}

/// Drops server slots to get under `max`: first those with nothing fresh to say and no flight,
/// then, if that freed less than half, every slot without a flight (a cache may forget; a flight
/// has callers waiting on it). Each sweep frees enough that sweeps stay rare.
fn make_room(servers: &mut HashMap<Arc<str>, ServerSlot>, max: usize, now: Instant) {
    servers.retain(|_, slot| {
        slot.flight.is_some() || slot.cached.as_ref().is_some_and(|e| now < e.expires)
    });
    if servers.len() > max / 2 {
        servers.retain(|_, slot| slot.flight.is_some());
    }
}

impl fmt::Debug for CapabilityCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapabilityCache")
            .field("budget", &self.budget)
            .field("server_budgets", &self.server_budgets)
            .field("ttls", &self.ttls)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Snapshot;
    use crate::resolve::inventory::StaticInventory;

    #[tokio::test(start_paused = true)]
    async fn invented_server_names_cannot_grow_the_cache_past_its_cap() {
        let cache = CapabilityCache::new(StaticInventory::new(Snapshot::default()));
        for i in 0..100_000 {
            let tool = ToolName::parse(&format!("mcp__invented{i}__t"));
            let verdict = cache.resolve(&tool).await;
            assert_eq!(verdict.state, State::Absent);
            assert!(cache.lock_servers().len() <= CapabilityCache::DEFAULT_MAX_SERVERS);
        }
        // Still a cache: the latest name is remembered and answers from it.
        let tool = ToolName::parse("mcp__invented99999__t");
        assert!(cache.lock_servers().contains_key("invented99999"));
        assert_eq!(cache.resolve(&tool).await.state, State::Absent);
    }

    /// A cache where `mcp__files__read` is ready, with a ready lifetime of `ready`.
    fn ready_cache(ready: Duration) -> (CapabilityCache, ToolName, Arc<ToolSlot>) {
        let tool = ToolName::parse("mcp__files__read");
        let cache = CapabilityCache::new(StaticInventory::new(
            Snapshot::default().with_ready_tool(tool.as_str()),
        ))
        .with_ttls(CacheTtls {
            ready,
            ..CacheTtls::default()
        });
        let slot = cache.tool_slot(&tool).expect("room for one tool");
        (cache, tool, slot)
    }

    #[tokio::test(start_paused = true)]
    async fn on_a_paused_clock_the_ready_path_expires_and_times_calls_on_tokios_clock() {
        let (cache, tool, slot) = ready_cache(Duration::from_secs(60));
        assert!(cache.resolve(&tool).await.is_ready());
        assert!(matches!(cache.ready_now(&slot), Some(CallStart::Tokio(_))));
        tokio::time::advance(Duration::from_nanos(59_999_999_999)).await;
        assert!(
            cache.ready_now(&slot).is_some(),
            "fresh 1 ns before its lifetime ends"
        );
        tokio::time::advance(Duration::from_nanos(1)).await;
        assert!(cache.ready_now(&slot).is_none(), "expired at 60 s");
    }

    #[tokio::test]
    async fn on_a_running_clock_the_ready_path_expires_on_the_counter_clock() {
        // Real time, as in production, without waiting: a fresh entry admits calls on the
        // counter clock, and one whose lifetime is zero is expired at its first read (the
        // counter never reads below the expiry it was written with).
        let (cache, tool, slot) = ready_cache(Duration::from_secs(60));
        assert!(cache.resolve(&tool).await.is_ready());
        let start = cache.ready_now(&slot);
        assert!(
            matches!(start, Some(CallStart::Counter(_))),
            "a fresh entry admits the call on the counter clock"
        );
        let (cache, tool, slot) = ready_cache(Duration::ZERO);
        assert!(cache.resolve(&tool).await.is_ready());
        assert!(
            cache.ready_now(&slot).is_none(),
            "expired after its lifetime"
        );
        assert!(cache.lookup(&tool).is_none(), "and so did the entry itself");
    }

    #[tokio::test(start_paused = true)]
    async fn a_lifetime_too_long_for_the_clock_saturates_instead_of_expiring_at_once() {
        let (cache, tool, slot) = ready_cache(Duration::MAX);
        assert!(cache.resolve(&tool).await.is_ready());
        tokio::time::advance(Duration::from_secs(86_400 * 365)).await;
        assert!(cache.ready_now(&slot).is_some(), "a year later");
    }
}
