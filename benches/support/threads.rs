//! Runs the same measured loop on several threads at once.

// Benchmarks measure wall-clock time on purpose; library code never does (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Starts `threads` threads, each building its own state with `setup` and then timing
/// `run(state)` from a common start (a barrier); returns the slowest thread's time. With the same
/// work per thread, equal time on 2 threads means twice the throughput of 1.
pub fn on_threads<S, T>(threads: usize, setup: S, run: fn(T) -> Duration) -> Duration
where
    S: Fn() -> T + Send + Sync + 'static,
    T: Send + 'static,
{
    let barrier = Arc::new(Barrier::new(threads));
    let setup = Arc::new(setup);
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (barrier, setup) = (barrier.clone(), setup.clone());
            std::thread::spawn(move || {
                let state = setup();
                barrier.wait();
                run(state)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or(Duration::ZERO))
        .max()
        .unwrap_or(Duration::ZERO)
}
