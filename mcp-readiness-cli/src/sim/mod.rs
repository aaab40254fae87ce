//! The seeds' virtual-clock scenarios, run by the real [`resolve`](mcp_readiness::resolve::resolve()) and
//! [`CapabilityCache`](mcp_readiness::resolve::CapabilityCache) on tokio's paused clock (nothing is computed by
//! arithmetic: the waits are what the code under test waited).
//!
//! ```
//! let rows = mcp_readiness_cli::sim::run_all().unwrap();
//! let row = |s: &str, v: &str| rows.iter().find(|r| r.scenario == s && r.variant == v).unwrap().clone();
//! assert_eq!((row("three-states", "no-states").total_wait_ms, row("three-states", "no-states").ready), (86_000, 8));
//! assert_eq!((row("three-states", "three-states").total_wait_ms, row("three-states", "three-states").ready), (26_000, 8));
//! assert_eq!((row("cache-grain", "by-tool").total_wait_ms, row("cache-grain", "by-tool").ready), (66_000, 9));
//! assert_eq!((row("cache-grain", "by-server").total_wait_ms, row("cache-grain", "by-server").ready), (26_000, 9));
//! ```

mod fleet;
mod scenarios;
mod table;

pub use scenarios::{SCENARIOS, Scenario, run_all, run_scenario};
pub use table::{SimRow, render_tables};
