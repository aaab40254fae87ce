//! Interleaved rounds: every row of a bench, on 1 and on 2 threads, measured back to back in each
//! round, so that ratios between rows compare figures taken within milliseconds of each other.
//! Rows measured seconds apart (as criterion measures them) see a shared virtual machine at
//! different speeds.

use std::time::Duration;

use criterion::Criterion;

use super::threads::Workers;

/// One row's long-lived workers, on 1 and (unless `None`) on 2 threads.
pub struct Measured {
    pub name: &'static str,
    pub one: Workers,
    pub two: Option<Workers>,
}

impl Measured {
    /// The row `name` on 1 and on 2 threads, each started by `on(threads)`.
    pub fn on_one_and_two(name: &'static str, on: impl Fn(usize) -> Workers) -> Measured {
        Measured {
            name,
            one: on(1),
            two: Some(on(2)),
        }
    }
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
        for (threads, workers) in [(1, Some(&row.one)), (2, row.two.as_ref())] {
            let Some(workers) = workers else { continue };
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
                for (workers, times) in [Some(&row.one), row.two.as_ref()]
                    .into_iter()
                    .zip(times.iter_mut())
                {
                    if let Some(workers) = workers {
                        times.push(workers.run(calls).as_nanos() as f64 / calls as f64);
                    }
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
            "  {:<26} {:>12} {:>12} {:>22}",
            "row", "1t ns/call", "2t ns/call", "2t/1t calls per second"
        );
        for (row, times) in rows.iter().zip(&self.ns) {
            let (one, two) = (median(times[0].clone()), median(times[1].clone()));
            if times[1].is_empty() {
                println!("  {:<26} {:>12.1}", row.name, one);
                continue;
            }
            // 2 threads make 2 calls per `two` ns; 1 thread makes 1 per `one` ns.
            println!(
                "  {:<26} {:>12.1} {:>12.1} {:>21.2}x",
                row.name,
                one,
                two,
                2.0 * one / two
            );
        }
    }

    /// The goal's figures: what `readiness` adds over `bare` and what `minimum` adds, and their
    /// ratio (the median of per-round ratios) against `goal`; with the load average, since the
    /// machine's other work moves every row.
    pub fn print_goal(
        &self,
        subscriber: &str,
        bare: usize,
        minimum: usize,
        readiness: usize,
        goal: f64,
    ) {
        let added = |row, round| self.added(row, bare, round);
        let over_bare = self.per_round(&|r| added(readiness, r));
        let minimum_adds = self.per_round(&|r| added(minimum, r));
        let ratio = self.per_round(&|r| added(readiness, r) / added(minimum, r));
        let verdict = if ratio <= goal { "met" } else { "NOT met" };
        println!(
            "  readiness adds {over_bare:.1} ns over bare; the minimum adds {minimum_adds:.1} ns"
        );
        println!(
            "  RATIO {subscriber}: readiness adds {ratio:.2}x what the minimum adds (goal: at most \
             {goal}x, {verdict}); load average {}",
            load_average()
        );
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

/// Runs `call` `iters` times on this thread; returns the thread CPU time it took (a row's run).
#[inline(always)]
pub fn timed(iters: u64, mut call: impl FnMut()) -> Duration {
    let start = thread_cpu_time();
    for _ in 0..iters {
        call();
    }
    thread_cpu_time().saturating_sub(start)
}

/// This thread's CPU time: the layer benches time their rows in it, so that whatever else runs
/// on a shared machine (preempting this thread) does not count.
pub fn thread_cpu_time() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// The machine's load average (1, 5, 15 minutes), as `/proc/loadavg` has it.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The index of the row named `name`.
pub fn index(rows: &[Measured], name: &str) -> usize {
    rows.iter().position(|r| r.name == name).expect("a row")
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
