//! The rows of `benches/layer_quiet.rs`: the ready path when no span is recorded (no subscriber,
//! or one whose filter drops the layer's `info` span, as `RUST_LOG=warn` does), next to a
//! hand-built minimum, and a breakdown that adds the layer's pieces one at a time.
//!
//! - `bare`: the inner `service_fn` alone;
//! - `minimum`: the hand-built minimum of the goals (`minimum.rs`), its span disabled;
//! - the breakdown, each row the previous one plus one piece, built from the library's public
//!   parts as the layer uses them: `+clock` (one pair of reads of the counter clock the ready path
//!   times calls with, `quanta`), `+probe` ([`CapabilityCache::lookup`], which reads tokio's clock
//!   once and clones the verdict: the summary subtracts the `tokio_read` row, one tokio clock
//!   read around the bare call), `+recorder` ([`ToolMetrics::observe_tool_call`]: one call
//!   counted and timed, two atomic adds), `+span` (the outer-span check and the layer's span,
//!   entered in `call` and in `poll`), `+trace` (the trace-context check of `traceparent`
//!   injection);
//! - `readiness`: `ReadinessLayer` (with metrics) around the bare service, ready cache hit: beyond
//!   `+trace`, its response future and what ties the pieces together (and its own probe, which
//!   is cheaper than `lookup`: see `handles.rs`);
//! - `no_metrics`: the same layer without metrics: what recording costs inside the layer.
//!
//! The summary names where the time goes: each piece's step, metrics inside the layer, and the
//! rest of what the layer adds beyond the pieces (its own probe, the response future, the glue).
//!
//! Each row runs on 1 and on 2 long-lived threads (see `threads.rs`), the same number of calls per
//! thread, timed in each thread's CPU time: on a shared machine, the time other processes take
//! the core away does not count (the `layer` benches time wall-clock).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use futures::FutureExt;
use mcp_readiness::layer::{ReadinessService, SPAN_TARGET, execute_tool_span};
use mcp_readiness::metrics::ToolMetrics;
use mcp_readiness::resolve::CapabilityCache;
use mcp_readiness::state::CallOutcome;
use mcp_readiness::telemetry::inject_trace_context;
use mcp_readiness::{Metrics, ToolCall, ToolName};
use tokio::time::Instant;
use tower::Service;
use tracing::Span;

use super::bare::{Bare, bare, call_once, readiness_service};
use super::minimum::Minimum;
use super::rounds::{Measured, Rounds, bench_criterion, index, timed};
use super::threads::Workers;

/// One read of tokio's clock around the bare call: what [`CapabilityCache::lookup`] reads beyond
/// the layer's own probe.
fn tokio_read(service: &mut Bare, tool: &ToolName) {
    black_box(Instant::now());
    call_once(service, ToolCall::new(tool.clone()));
}

/// The layer's pieces, in the order the breakdown adds them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Piece {
    Clock,
    Probe,
    Recorder,
    Span,
    Trace,
}

impl Piece {
    const ALL: [Piece; 5] = [
        Piece::Clock,
        Piece::Probe,
        Piece::Recorder,
        Piece::Span,
        Piece::Trace,
    ];

    fn row(self) -> &'static str {
        match self {
            Piece::Clock => "+clock",
            Piece::Probe => "+probe",
            Piece::Recorder => "+recorder",
            Piece::Span => "+span",
            Piece::Trace => "+trace",
        }
    }
}

/// The breakdown's parts: the counter clock, the cache and the tool's metrics the layer holds,
/// and a `_meta` to inject into.
#[derive(Clone)]
struct Parts {
    clock: quanta::Clock,
    cache: Arc<CapabilityCache>,
    metrics: ToolMetrics,
    meta: serde_json::Map<String, serde_json::Value>,
}

impl Parts {
    /// One call with the pieces up to `upto`.
    fn call(&mut self, upto: Piece, service: &mut Bare, tool: &ToolName) {
        let began = self.clock.raw();
        if upto >= Piece::Probe && !self.cache.lookup(tool).is_some_and(|v| v.is_ready()) {
            return;
        }
        let span = if upto >= Piece::Span {
            // The layer's check for an enclosing span of its own, then its span.
            let enclosing = tracing::dispatcher::get_default(|dispatch| {
                dispatch
                    .current_span()
                    .metadata()
                    .is_some_and(|m| m.target() == SPAN_TARGET && m.name() == "tools/call")
            });
            black_box(enclosing);
            execute_tool_span(tool)
        } else {
            Span::none()
        };
        if upto >= Piece::Trace {
            inject_trace_context(&span, &mut self.meta);
            black_box(&self.meta);
        }
        let future = {
            let _entered = span.enter();
            service.call(ToolCall::new(tool.clone()))
        };
        let result = {
            let _entered = span.enter();
            future.now_or_never()
        };
        let elapsed = self.clock.delta(began, self.clock.raw());
        if upto >= Piece::Recorder {
            self.metrics
                .observe_tool_call(CallOutcome::Ok, None, elapsed);
        } else {
            black_box(elapsed);
        }
        black_box(result);
    }
}

/// What one worker thread owns for its row.
enum Row {
    Bare(Bare),
    TokioRead(Bare),
    Minimum(Bare, Minimum),
    Parts(Bare, Parts, Piece),
    Readiness(ReadinessService<Bare>),
    NoMetrics(ReadinessService<Bare>),
}

/// Runs `iters` calls of the row on this thread; returns the CPU time it took.
fn run((row, tool): &mut (Row, ToolName), iters: u64) -> Duration {
    match row {
        Row::Bare(service) => timed(iters, || call_once(service, ToolCall::new(tool.clone()))),
        Row::TokioRead(service) => timed(iters, || tokio_read(service, tool)),
        Row::Minimum(service, minimum) => timed(iters, || minimum.call(service, tool)),
        Row::Parts(service, parts, upto) => timed(iters, || parts.call(*upto, service, tool)),
        Row::Readiness(service) | Row::NoMetrics(service) => {
            timed(iters, || call_once(service, ToolCall::new(tool.clone())))
        }
    }
}

/// What the rows are made from; each worker thread makes its own row from a clone.
#[derive(Clone)]
struct Makings {
    readiness: ReadinessService<Bare>,
    no_metrics: ReadinessService<Bare>,
    minimum: Minimum,
    parts: Parts,
}

impl Makings {
    fn make(&self, name: &str) -> Row {
        match name {
            "bare" => Row::Bare(bare()),
            "tokio_read" => Row::TokioRead(bare()),
            "minimum" => Row::Minimum(bare(), self.minimum.clone()),
            "readiness" => Row::Readiness(self.readiness.clone()),
            "no_metrics" => Row::NoMetrics(self.no_metrics.clone()),
            piece => Row::Parts(
                bare(),
                self.parts.clone(),
                Piece::ALL
                    .into_iter()
                    .find(|p| p.row() == piece)
                    .expect("a piece"),
            ),
        }
    }
}

/// Benchmarks every row on 1 and 2 threads, in the group `quiet/{subscriber}`; then prints the
/// goals' figures and the breakdown, measured in interleaved rounds (see [`Rounds`]).
pub fn bench_rows(c: &mut Criterion, subscriber: &str) {
    let tool = ToolName::parse("mcp__files__read_file");
    let cache = readiness_cache(&tool);
    let makings = Makings {
        readiness: readiness_service(&tool, true),
        no_metrics: readiness_service(&tool, false),
        minimum: Minimum::new(),
        parts: Parts {
            clock: quanta::Clock::new(),
            cache,
            metrics: Metrics::new().server(tool.server()).tool(tool.tool()),
            meta: serde_json::Map::new(),
        },
    };
    let names = ["bare", "minimum"]
        .into_iter()
        .chain(Piece::ALL.map(Piece::row))
        .chain(["tokio_read", "readiness", "no_metrics"]);
    let rows: Vec<Measured> = names
        .map(|name| {
            let on = |threads| {
                let (makings, tool) = (makings.clone(), tool.clone());
                Workers::start(
                    threads,
                    // Each thread owns its row, as each caller would; the name is shared.
                    move || (makings.make(name), tool.clone()),
                    run,
                )
            };
            Measured::on_one_and_two(name, on)
        })
        .collect();
    let group = format!("quiet/{subscriber}");
    bench_criterion(c, &group, &rows);
    print_summary(&group, &rows);
}

/// A cache where `tool` is a ready hit, for the breakdown's probe.
fn readiness_cache(tool: &ToolName) -> Arc<CapabilityCache> {
    let inventory = mcp_readiness::StaticInventory::new(
        mcp_readiness::Snapshot::default().with_ready_tool(tool.as_str()),
    );
    let cache = Arc::new(CapabilityCache::new(inventory));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    runtime.block_on(cache.resolve(tool));
    assert!(cache.lookup(tool).is_some_and(|v| v.is_ready()));
    cache
}

/// The goals' figures (what the ready path adds over bare, and over the minimum) and where the
/// time goes: each breakdown row's cost beyond the previous one, medians of per-round differences.
fn print_summary(group: &str, rows: &[Measured]) {
    let measured = Rounds::measure(rows);
    measured.print_table(group, rows);
    let (bare, minimum, readiness) = (
        index(rows, "bare"),
        index(rows, "minimum"),
        index(rows, "readiness"),
    );
    measured.print_goal(group, bare, minimum, readiness, 0.5);
    let added = |row, base, round| measured.added(row, base, round);
    let over_bare = measured.per_round(&|r| added(readiness, bare, r));
    println!(
        "  response future: {} bytes (the bare service's: {})",
        size_of::<<ReadinessService<Bare> as Service<ToolCall>>::Future>(),
        size_of::<<Bare as Service<ToolCall>>::Future>(),
    );

    let step = |name: &str, previous: &str| {
        let (row, base) = (index(rows, name), index(rows, previous));
        measured.per_round(&|r| added(row, base, r))
    };
    let clock = step("+clock", "bare");
    let probe = step("+probe", "+clock") - step("tokio_read", "bare");
    let recorder = step("+recorder", "+probe");
    let span = step("+span", "+recorder");
    let trace = step("+trace", "+span");
    let metrics = step("readiness", "no_metrics");
    println!(
        "  where the time goes (1 thread, ns): clock pair {clock:.1}, cache probe (lookup) \
         {probe:.1}, recorder {recorder:.1}, span {span:.1}, trace-context check {trace:.1}; \
         in the layer, metrics (second clock read and recorder) {metrics:.1}"
    );
    println!(
        "  the clock pair and the recorder alone, what any layer that times and counts each call \
         pays here: {:.1} ns",
        clock + recorder
    );
    // What the pieces above leave of the layer's addition: its own probe (not `lookup`'s), the
    // response future (built, moved, polled and dropped) and what ties the pieces together.
    println!(
        "  the rest of what the layer adds (its own cache probe, the response future, the glue): \
         {:.1} ns",
        over_bare - clock - recorder - span - trace
    );
}
