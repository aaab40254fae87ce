//! The ready path: what a ready cache hit costs, fenced.
//!
//! # What it serves
//!
//! Every tool call through the layer (`ReadinessLayer`) whose tool has a fresh
//! `ready` verdict: the hit itself (is this tool's ready entry still fresh, under the inventory
//! generation it was made in?) and the timing of the call it admits (the read that checks the
//! entry's freshness is also the call's start; the second read, and two atomic adds on this
//! thread's shards, record it). That is the crate's hot path: a service pays it on every call, so
//! it is held to a budget (below).
//!
//! The path, in the order a call takes it:
//!
//! 1. `layer/handles.rs` `LayerShared::ready_hit`: one lookup of the layer's handles map through
//!    the service's own view of it ([`CowMapView`], `cow_map.rs`), which yields the tool's cache
//!    slot and its metrics handles together;
//! 2. `resolve/cache.rs` `CapabilityCache::ready_now`: the slot's [`Deadline`] (`deadline.rs`),
//!    which knows which of the two clocks it is on and reads that one once (`call_clock.rs`:
//!    the CPU's time-stamp counter through `quanta` while tokio's clock runs, tokio's clock while
//!    it is paused), and the slot's inventory generation;
//! 3. `recycled.rs`: a reference to this thread's copy of the tool's handles
//!    (`per_thread.rs`), taken back from the ones this thread's finished calls held;
//! 4. the call, then the response future's recorder: the second read of the call's clock
//!    ([`CallStart`]) and the metrics' two atomic adds on per-thread shards (`per_thread.rs`,
//!    used by `exposition`'s series values), and the reference given back to `recycled.rs`.
//!
//! The two entry points stay beside the types they belong to (the layer's shared state, the
//! cache's slot), since those modules sit above this one; everything they call on the ready
//! path is here.
//!
//! # The rules here
//!
//! On a hit (everything above but the writes of `Deadline::at` and `CowMap`'s inserts, which
//! happen off the hit, when a verdict or a new tool name is stored):
//!
//! - no lock, no allocation (with no subscriber or under a `Registry`: counted by
//!   `tests/library/layer/allocations.rs`), no system call, no waiting; one clock read at each end
//!   of the call (the counter, or the OS clock through the vDSO where the counter is not stable);
//!   no reference count that moves in steady state. (While tokio's clock is paused its reads take tokio's
//!   test clock lock: the cost of tests and `simulate`, never of a service.)
//! - a hit reads at most: one atomic load for "same map", the map lookup (skipped for the tool
//!   called last), two atomic loads of the slot (its deadline and generation), the inventory's
//!   generation, one clock read; atomics are `Relaxed` except the deadline (`Release` when
//!   written, `Acquire` when read, so a reader that sees a deadline sees its generation);
//! - values many threads write or take a reference to on every call are sharded per thread
//!   (`per_thread.rs`), each shard on its own cache line;
//! - tokio's clock stays the truth whenever it is paused: an entry written while it is paused
//!   expires on tokio's clock and the calls it admits are timed on it (only [`Deadline`] decides
//!   that; the cache does not know there are two clocks), so paused-time tests step to each TTL
//!   edge and read virtual durations exactly;
//! - nothing here may panic, and nothing here names a metric, a span or a server: this module
//!   uses only `util` (and std, tokio, `quanta`, `arc-swap`, `foldhash`).
//!
//! # The bench that guards it
//!
//! `cargo bench -p mcp-readiness --bench layer_quiet` (`benches/layer_quiet.rs`, rows in
//! `benches/support/quiet_rows.rs`): the layer's ready path with no subscriber and under
//! `RUST_LOG=warn`, in thread CPU time, as "readiness adds Nx what the minimum adds", measured in
//! the same run against the hand-built minimum of `benches/support/minimum.rs` (see "No
//! subscriber" in `docs/benchmarks.md`, which keeps the figures and the goal: at most 0.5x).
//! `--bench layer` (a `Registry`, goal 1x) and `--bench layer_otel` (OpenTelemetry, goal 1.2x)
//! watch the same path with a subscriber. A change
//! here reports those ratios before and after, measured alternately on one machine.

mod call_clock;
mod cow_map;
mod deadline;
mod per_thread;
mod recycled;

pub(crate) use call_clock::CallStart;
pub(crate) use cow_map::{CowMap, CowMapView, Map};
pub(crate) use deadline::{AtomicDeadline, Deadline, Origin};
pub(crate) use per_thread::{Padded, SHARDS, ShardedArc, ShardedCells, shard};
pub(crate) use recycled::{Recycled, Spares};
