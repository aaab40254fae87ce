//! The seeds' virtual-clock scenarios, run by the real [`resolve`](mcp_readiness::resolve::resolve()) and
//! [`CapabilityCache`](mcp_readiness::resolve::CapabilityCache) on tokio's paused clock (nothing is computed by
//! arithmetic: the waits are what the code under test waited).
//!
//! `run_all()` gives one row per scenario and variant; the test below checks the seeds' figures
//! (a unit test rather than a doc test: the command line's doc tests would build the dependency
//! graph once more with other features).

mod fleet;
mod scenarios;
mod table;

pub use scenarios::{SCENARIOS, Scenario, run_all, run_scenario};
pub use table::{SimRow, render_tables};

#[cfg(test)]
mod tests {
    #[test]
    fn the_seeds_figures_come_out_of_the_real_resolver_and_cache() {
        let rows = super::run_all().unwrap();
        let row = |s: &str, v: &str| {
            rows.iter()
                .find(|r| r.scenario == s && r.variant == v)
                .unwrap()
                .clone()
        };
        let figures = |s: &str, v: &str| (row(s, v).total_wait_ms, row(s, v).ready);
        assert_eq!(figures("three-states", "no-states"), (86_000, 8));
        assert_eq!(figures("three-states", "three-states"), (26_000, 8));
        assert_eq!(figures("cache-grain", "by-tool"), (66_000, 9));
        assert_eq!(figures("cache-grain", "by-server"), (26_000, 9));
    }
}
