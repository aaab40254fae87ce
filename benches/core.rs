//! Core hot paths: name parsing, classification, and a ready cache hit on one and two threads.
//!
//! Run with `cargo bench --bench core`. The two-thread rows run the same number of hits per thread
//! as the one-thread row; compare their time per iteration (equal time means 2x the throughput).

// Benchmarks measure wall-clock time on purpose; library code never does (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant as BenchClock;

use criterion::{Criterion, criterion_group, criterion_main};

mod support;

use mcp_readiness::{
    Snapshot, StaticInventory, ToolName,
    resolve::{CapabilityCache, classify},
};
use support::threads;

fn parsing(c: &mut Criterion) {
    let mut group = c.benchmark_group("tool_name");
    group.bench_function("parse mcp__my_server__do_thing", |b| {
        b.iter(|| ToolName::parse(black_box("mcp__my_server__do_thing")))
    });
    group.bench_function("parse Bash (builtin)", |b| {
        b.iter(|| ToolName::parse(black_box("Bash")))
    });
    group.finish();
}

fn classification(c: &mut Criterion) {
    let mut snapshot = Snapshot::default();
    for server in 0..20 {
        for tool in 0..20 {
            snapshot = snapshot.with_ready_tool(&format!("mcp__s{server}__t{tool}"));
        }
    }
    let snapshot = snapshot
        .with_pending_server("slow")
        .with_unauthenticated_server("locked");
    let ready = ToolName::parse("mcp__s7__t7");
    let locked = ToolName::parse("mcp__locked__x");
    let mut group = c.benchmark_group("classify");
    group.bench_function("ready (400 tools listed)", |b| {
        b.iter(|| classify(black_box(&ready), &snapshot))
    });
    group.bench_function("unauthenticated", |b| {
        b.iter(|| classify(black_box(&locked), &snapshot))
    });
    group.finish();
}

fn ready_cache_hit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let inventory = StaticInventory::new(Snapshot::default().with_ready_tool("mcp__files__read"));
    let cache = Arc::new(CapabilityCache::new(inventory));
    let tool = ToolName::parse("mcp__files__read");
    runtime.block_on(cache.resolve(&tool));
    assert!(cache.lookup(&tool).is_some());

    let mut group = c.benchmark_group("ready_cache_hit");
    group.bench_function("1 thread", |b| b.iter(|| cache.lookup(black_box(&tool))));
    for threads in [1usize, 2] {
        let (cache, tool) = (cache.clone(), tool.clone());
        let workers = threads::Workers::start(
            threads,
            // Each thread owns its name, as each caller would.
            move || (cache.clone(), ToolName::parse(tool.as_str())),
            |(cache, tool), iters| {
                let start = BenchClock::now();
                for _ in 0..iters {
                    black_box(cache.lookup(black_box(&*tool)));
                }
                start.elapsed()
            },
        );
        group.bench_function(
            format!("{threads} thread(s), same tool, per-thread iterations"),
            |b| b.iter_custom(|iters| workers.run(iters)),
        );
    }
    group.finish();
}

criterion_group!(benches, parsing, classification, ready_cache_hit);
criterion_main!(benches);
