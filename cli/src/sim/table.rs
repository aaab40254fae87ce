use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::SCENARIOS;

/// One variant of one scenario: the row `simulate --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimRow {
    /// The scenario's name.
    pub scenario: String,
    /// The variant's name.
    pub variant: String,
    /// Sum of every resolution's wait, in virtual milliseconds.
    pub total_wait_ms: u64,
    /// Tools found ready.
    pub ready: usize,
    /// How often the inventory was asked (the load the resolutions put on the runtime).
    pub polls: u64,
}

/// Renders the rows as one table per scenario, with the saving of the second variant over the first.
pub fn render_tables(rows: &[SimRow]) -> String {
    let mut out = String::new();
    for scenario in SCENARIOS {
        let mine: Vec<&SimRow> = rows
            .iter()
            .filter(|r| r.scenario == scenario.name)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(out, "scenario {}: {}", scenario.name, scenario.setup);
        let _ = writeln!(out, "  (budget 20 s, poll 2 s, virtual clock)");
        let _ = writeln!(
            out,
            "  {:<14} {:>12} {:>6} {:>6}",
            "variant", "total wait", "ready", "polls"
        );
        for row in &mine {
            let _ = writeln!(
                out,
                "  {:<14} {:>9} ms {:>6} {:>6}",
                row.variant, row.total_wait_ms, row.ready, row.polls
            );
        }
        if let [baseline, better, ..] = mine.as_slice() {
            let delta = baseline.total_wait_ms.saturating_sub(better.total_wait_ms);
            let percent = if baseline.total_wait_ms == 0 {
                0.0
            } else {
                delta as f64 * 100.0 / baseline.total_wait_ms as f64
            };
            let _ = writeln!(
                out,
                "  delta: {delta} ms ({percent:.1} % less waiting), {} fewer polls",
                baseline.polls.saturating_sub(better.polls)
            );
        }
        out.push('\n');
    }
    out
}
