use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::SimRow;
use super::fleet::{Behaviour, SimFleet, SimServer};
use mcp_readiness::{
    Budget, Snapshot,
    resolve::{CacheTtls, CapabilityCache, Verdict, classify, resolve, resolve_with},
};
use mcp_readiness::{State, ToolName};

/// A named scenario and its variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// The scenario's name (the `scenario` field of each row).
    pub name: &'static str,
    /// What it sets up, in one line.
    pub setup: &'static str,
    /// Its variants, baseline first (the `variant` field of each row).
    pub variants: [&'static str; 2],
}

/// Every scenario, in the order `simulate` prints them.
pub const SCENARIOS: [Scenario; 4] = [
    scenario(
        "three-states",
        "12 tools: 7 ready, 1 arrives on the 4th poll, 1 never ready, 3 need authorization",
        ["no-states", "three-states"],
    ),
    scenario(
        "cache-grain",
        "4 servers x 3 tools: 2 ready, 1 up after 6 s, 1 still connecting at the end",
        ["by-tool", "by-server"],
    ),
    scenario(
        "change-notified",
        "1 tool whose server comes up at 5.1 s, off the 2 s poll grid",
        ["polling", "notified"],
    ),
    scenario(
        "concurrent-callers",
        "8 callers, 1 s apart, for tools of one server still connecting at the end",
        ["per-call", "single-flight"],
    ),
];

const fn scenario(
    name: &'static str,
    setup: &'static str,
    variants: [&'static str; 2],
) -> Scenario {
    Scenario {
        name,
        setup,
        variants,
    }
}

/// Runs every scenario, each variant on a fresh paused clock.
pub fn run_all() -> std::io::Result<Vec<SimRow>> {
    let mut rows = Vec::new();
    for scenario in SCENARIOS {
        rows.extend(run_scenario(scenario.name)?);
    }
    Ok(rows)
}

/// Runs one scenario by name; an unknown name gives no rows.
pub fn run_scenario(name: &str) -> std::io::Result<Vec<SimRow>> {
    let Some(scenario) = SCENARIOS.iter().find(|s| s.name == name) else {
        return Ok(Vec::new());
    };
    scenario
        .variants
        .iter()
        .map(|variant| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()?;
            Ok(runtime.block_on(run_variant(scenario.name, variant)))
        })
        .collect()
}

async fn run_variant(scenario: &'static str, variant: &'static str) -> SimRow {
    let budget = Budget::default();
    let (fleet, verdicts) = match (scenario, variant) {
        ("three-states", _) => {
            let fleet = SimFleet::start(three_states_fleet(), false);
            let tools = all_tools(&three_states_fleet());
            let verdicts = match variant {
                "no-states" => {
                    sequential(&tools, |t| {
                        let fleet = fleet.clone();
                        async move { resolve_with(&fleet, &t, budget, without_states).await }
                    })
                    .await
                }
                _ => by_server(&fleet, &tools).await,
            };
            (fleet, verdicts)
        }
        ("cache-grain", _) => {
            let fleet = SimFleet::start(cache_grain_fleet(), false);
            let tools = all_tools(&cache_grain_fleet());
            let verdicts = match variant {
                "by-tool" => by_tool(&fleet, &tools, budget).await,
                _ => by_server(&fleet, &tools).await,
            };
            (fleet, verdicts)
        }
        ("change-notified", _) => {
            let servers = vec![SimServer::new(
                "drive",
                &["search"],
                Behaviour::ReadyAfter(Duration::from_millis(5100)),
            )];
            let tools = all_tools(&servers);
            let fleet = SimFleet::start(servers, variant == "notified");
            let verdicts = sequential(&tools, |t| {
                let fleet = fleet.clone();
                async move { resolve(&fleet, &t, budget).await }
            })
            .await;
            (fleet, verdicts)
        }
        _ => {
            let servers = vec![SimServer::new(
                "search",
                &["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"],
                Behaviour::NeverReady,
            )];
            let tools = all_tools(&servers);
            let fleet = SimFleet::start(servers, false);
            let cache = Arc::new(CapabilityCache::new(fleet.clone()).with_budget(budget));
            let per_call = variant == "per-call";
            let mut callers = Vec::new();
            for (i, tool) in tools.into_iter().enumerate() {
                let (fleet, cache) = (fleet.clone(), cache.clone());
                callers.push(tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs(i as u64)).await;
                    if per_call {
                        resolve(&fleet, &tool, budget).await
                    } else {
                        cache.resolve(&tool).await
                    }
                }));
            }
            let mut verdicts = Vec::new();
            for caller in callers {
                if let Ok(verdict) = caller.await {
                    verdicts.push(verdict);
                }
            }
            (fleet, verdicts)
        }
    };
    SimRow {
        scenario: scenario.to_owned(),
        variant: variant.to_owned(),
        total_wait_ms: verdicts
            .iter()
            .map(|v| u64::try_from(v.waited.as_millis()).unwrap_or(u64::MAX))
            .sum(),
        ready: verdicts.iter().filter(|v| v.is_ready()).count(),
        polls: fleet.polls(),
    }
}

/// A simulated fleet: each server's name, tools and behaviour.
type Fleet<'a> = &'a [(&'static str, &'a [&'static str], Behaviour)];

fn fleet(servers: Fleet<'_>) -> Vec<SimServer> {
    let server = |&(name, tools, behaviour): &(&'static str, &[&'static str], Behaviour)| {
        SimServer::new(name, tools, behaviour)
    };
    servers.iter().map(server).collect()
}

fn three_states_fleet() -> Vec<SimServer> {
    let after_6s = Behaviour::ReadyAfter(Duration::from_secs(6));
    fleet(&[
        (
            "files",
            &["read", "write", "list", "stat"],
            Behaviour::Ready,
        ),
        (
            "calendar",
            &["events", "create", "free_busy"],
            Behaviour::Ready,
        ),
        ("drive", &["search"], after_6s),
        ("search", &["query"], Behaviour::NeverReady),
        ("analytics", &["query"], Behaviour::NeedsAuth),
        ("chat", &["send"], Behaviour::NeedsAuth),
        ("storage", &["put"], Behaviour::NeedsAuth),
    ])
}

fn cache_grain_fleet() -> Vec<SimServer> {
    let after_6s = Behaviour::ReadyAfter(Duration::from_secs(6));
    fleet(&[
        ("files", &["read", "write", "list"], Behaviour::Ready),
        (
            "calendar",
            &["events", "create", "free_busy"],
            Behaviour::Ready,
        ),
        ("drive", &["search", "get", "export"], after_6s),
        (
            "search",
            &["query", "suggest", "similar"],
            Behaviour::NeverReady,
        ),
    ])
}

fn all_tools(servers: &[SimServer]) -> Vec<ToolName> {
    servers.iter().flat_map(SimServer::tool_names).collect()
}

async fn sequential<F, Fut>(tools: &[ToolName], mut resolve_one: F) -> Vec<Verdict>
where
    F: FnMut(ToolName) -> Fut,
    Fut: Future<Output = Verdict>,
{
    let mut verdicts = Vec::with_capacity(tools.len());
    for tool in tools {
        verdicts.push(resolve_one(tool.clone()).await);
    }
    verdicts
}

/// The real cache: non-ready verdicts per server, ready per tool, single flight per server.
async fn by_server(fleet: &Arc<SimFleet>, tools: &[ToolName]) -> Vec<Verdict> {
    let cache = CapabilityCache::new(fleet.clone());
    sequential(tools, |t| {
        let cache = &cache;
        async move { cache.resolve(&t).await }
    })
    .await
}

/// The seed's first cache: every verdict keyed by tool, with the same state-dependent lifetimes.
async fn by_tool(fleet: &Arc<SimFleet>, tools: &[ToolName], budget: Budget) -> Vec<Verdict> {
    let ttls = CacheTtls::default();
    let mut cache: HashMap<ToolName, (Verdict, Instant)> = HashMap::new();
    let mut verdicts = Vec::new();
    for tool in tools {
        let hit = cache
            .get(tool)
            .filter(|(_, expires)| Instant::now() < *expires)
            .map(|(verdict, _)| Verdict {
                waited: Duration::ZERO,
                ..verdict.clone()
            });
        let verdict = match hit {
            Some(verdict) => verdict,
            None => {
                let verdict = resolve(fleet, tool, budget).await;
                let expires = Instant::now() + ttls.for_state(verdict.state);
                cache.insert(tool.clone(), (verdict.clone(), expires));
                verdict
            }
        };
        verdicts.push(verdict);
    }
    verdicts
}

/// The baseline without states: anything not ready might still arrive, so it waits on everything.
fn without_states(tool: &ToolName, snapshot: &Snapshot) -> State {
    match classify(tool, snapshot) {
        State::Ready => State::Ready,
        _ => State::Connecting,
    }
}
