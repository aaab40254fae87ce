//! Runs the same measured loop on several long-lived threads at once.
//!
//! The threads live as long as the benchmark row, like a runtime's worker threads: each builds
//! its state once, and every criterion sample reuses it. Spawning threads per sample would put
//! thread start-up (fresh stacks, and per-thread state of `tracing`'s span slab, arc-swap and the
//! allocator) inside the measurement.

// Benchmarks measure wall-clock time on purpose; library code never does (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Duration;

/// `threads` worker threads, each owning the state its `setup` built.
pub struct Workers {
    orders: Vec<Sender<u64>>,
    timings: Receiver<Duration>,
    handles: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts `threads` threads; each builds its own state with `setup`, then waits for orders.
    pub fn start<S, T>(threads: usize, setup: S, run: fn(&mut T, u64) -> Duration) -> Workers
    where
        S: Fn() -> T + Send + Sync + 'static,
        T: 'static,
    {
        let barrier = Arc::new(Barrier::new(threads));
        let setup = Arc::new(setup);
        let (report, timings) = channel();
        let mut orders = Vec::with_capacity(threads);
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        let handles = (0..threads)
            .map(|index| {
                // One core per thread, so the scheduler cannot stack both on one core for a while.
                let core = (!cores.is_empty()).then(|| cores[index % cores.len()]);
                let (order, inbox) = channel::<u64>();
                orders.push(order);
                let (barrier, setup, report) = (barrier.clone(), setup.clone(), report.clone());
                std::thread::spawn(move || {
                    if let Some(core) = core {
                        core_affinity::set_for_current(core);
                    }
                    let mut state = setup();
                    while let Ok(iters) = inbox.recv() {
                        // A common start: every thread's loop overlaps the others'.
                        barrier.wait();
                        if report.send(run(&mut state, iters)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        Workers {
            orders,
            timings,
            handles,
        }
    }

    /// Runs `iters` iterations on every thread at once; returns the slowest thread's time. With
    /// the same work per thread, equal time on 2 threads means twice the throughput of 1.
    pub fn run(&self, iters: u64) -> Duration {
        for order in &self.orders {
            order.send(iters).expect("worker threads outlive the pool");
        }
        (0..self.orders.len())
            .map(|_| self.timings.recv().expect("every worker reports"))
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // Closing the order channels ends the workers' loops.
        self.orders.clear();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}
