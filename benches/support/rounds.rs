//! Interleaved rounds: every row of a bench, on 1 and on 2 threads, measured back to back in each
//! round, so that ratios between rows compare figures taken within milliseconds of each other.
//! Rows measured seconds apart (as criterion measures them) see a shared virtual machine at
//! different speeds.

use std::time::Duration;

use criterion::Criterion;

use super::threads::Workers;

/// One row's long-lived workers, on 1 and on 2 threads.
pub struct Measured {
    pub name: &'static str,
    pub one: Workers,
    pub two: Workers,
}

/// ns per call per thread of every round: `ns[row][threads - 1][round]`.
pub struct Rounds {
    pub ns: Vec<[Vec<f64>; 2]>,
    pub rounds: usize,
    pub calls: u64,
}

/// Criterion's own rows (`{group}/{row}/{threads}t`), each in its own seconds-long window.
pub fn bench_criterion(c: &mut Criterion, group: &str, rows: &[Measured]) {
    let mut group = c.benchmark_group(group);
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for row in rows {
        for (threads, workers) in [(1, &row.one), (2, &row.two)] {
            group.bench_function(format!("{}/{threads}t", row.name), |b| {
                b.iter_custom(|iters| workers.run(iters))
            });
        }
    }
    group.finish();
}

impl Rounds {
    /// Runs `rounds` interleaved rounds of `calls` calls per thread: 41 rounds of 20,000 calls
    /// under `cargo bench`, one short round in test mode (`cargo test --benches`), which only
    /// checks that the summary runs.
    pub fn measure(rows: &[Measured]) -> Rounds {
        let args: Vec<String> = std::env::args().collect();
        let bench_mode = args.iter().any(|a| a == "--bench")
            && !args
                .iter()
                .any(|a| a == "--test" || a == "--list" || a == "--profile-time");
        let (rounds, calls) = if bench_mode { (41, 20_000) } else { (1, 10) };
        let mut ns = vec![[Vec::new(), Vec::new()]; rows.len()];
        for _ in 0..rounds {
            for (row, times) in rows.iter().zip(&mut ns) {
                for (workers, times) in [&row.one, &row.two].into_iter().zip(times.iter_mut()) {
                    times.push(workers.run(calls).as_nanos() as f64 / calls as f64);
                }
            }
        }
        Rounds { ns, rounds, calls }
    }

    /// Prints the title and every row's median ns per call on 1 and 2 threads.
    pub fn print_table(&self, title: &str, rows: &[Measured]) {
        let what = if self.rounds == 1 {
            " (test mode: checks that the summary runs; the figures mean nothing)"
        } else {
            ""
        };
        println!(
            "\n{title}: medians of {} interleaved rounds, {} calls per thread{what}",
            self.rounds, self.calls
        );
        println!(
            "  {:<12} {:>12} {:>12} {:>22}",
            "row", "1t ns/call", "2t ns/call", "2t/1t calls per second"
        );
        for (row, times) in rows.iter().zip(&self.ns) {
            let (one, two) = (median(times[0].clone()), median(times[1].clone()));
            // 2 threads make 2 calls per `two` ns; 1 thread makes 1 per `one` ns.
            println!(
                "  {:<12} {:>12.1} {:>12.1} {:>21.2}x",
                row.name,
                one,
                two,
                2.0 * one / two
            );
        }
    }

    /// The median over rounds of `f(round)`.
    pub fn per_round(&self, f: &dyn Fn(usize) -> f64) -> f64 {
        median((0..self.rounds).map(f).collect())
    }

    /// On 1 thread, in `round`: what `row` costs beyond `base`.
    pub fn added(&self, row: usize, base: usize, round: usize) -> f64 {
        self.ns[row][0][round] - self.ns[base][0][round]
    }
}

/// The index of the row named `name`.
pub fn index(rows: &[Measured], name: &str) -> usize {
    rows.iter().position(|r| r.name == name).expect("a row")
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
