//! An unattended run: declared steps, a decision for each, the hand-off note for the next human,
//! and the run record written to a file for whatever reads it next (a scheduler, a dashboard).
//!
//! ```sh
//! cargo run -p mcp-readiness-e2e --example unattended_run -- /tmp/run-record.json
//! ```
//!
//! The servers are real: this example starts itself again as the demo's `notes` MCP server over
//! stdio, and configures a `crm` server whose command does not exist. Exit code 0 when every
//! required step ran, 1 otherwise (as `mcp-readiness check` does).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::ReadinessLayer;
use mcp_readiness::plan::{Run, Step};
use mcp_readiness::{Budget, Hub, HubOptions, ServerSpec, TransportSpec};
use tower::ServiceBuilder;

/// The argument with which this example runs as the `notes` stdio server.
const SERVE_NOTES: &str = "--serve-notes";

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    if first.as_deref() == Some(SERVE_NOTES) {
        let notes = mcp_readiness_cli::demo::server("notes").expect("the demo has `notes`");
        return match notes.serve_stdio().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let record_path = first
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("mcp-readiness-run-record.json"));

    let stdio = |name: &str, command: String, args: Vec<String>| ServerSpec {
        name: name.into(),
        transport: TransportSpec::Stdio {
            command,
            args,
            env: Default::default(),
            cwd: None,
        },
    };
    let me = std::env::current_exe().expect("this example's path");
    let servers = vec![
        stdio("notes", me.display().to_string(), vec![SERVE_NOTES.into()]),
        stdio("crm", "/nonexistent/bin/crm-mcp".into(), Vec::new()),
    ];
    let hub = Hub::new(servers, HubOptions::builder()).expect("a valid fleet");
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(5), Duration::from_millis(500)).unwrap())
        .build();
    let tools = ServiceBuilder::new().layer(layer).service(hub.clone());

    // What the run needs, declared up front.
    let mut run = Run::start([
        Step::required("find-notes", "mcp__notes__search_notes"),
        Step::optional("export", "mcp__notes__export_pdf").with_fallback("write-markdown"),
        Step::optional("crm-sync", "mcp__crm__update_contact").with_fallback("queue-for-later"),
    ]);
    run.in_scope(|| hub.connect_all());
    run.steps(tools).await;
    hub.shutdown().await;
    let summary = run.finish();

    for outcome in &summary.outcomes {
        println!(
            "{:<11} {:<16} {:<9} {}",
            outcome.id,
            outcome.state.as_str(),
            outcome.decision.as_str(),
            outcome.decision.reason()
        );
    }
    println!("\n{}\n", summary.handoff_note());
    let record = serde_json::to_string_pretty(&summary).expect("the record serializes");
    if let Err(err) = std::fs::write(&record_path, record + "\n") {
        eprintln!(
            "error: could not write the run record to {}: {err}",
            record_path.display()
        );
        return ExitCode::FAILURE;
    }
    println!("run record written to {}", record_path.display());
    if summary.all_required_ready() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
