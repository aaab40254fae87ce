//! The Prometheus registry the metrics live in: names already taken, a failed registration that
//! registers nothing, the user's own collectors, prefixes and common labels.

use std::time::Duration;

use mcp_readiness::State;
use mcp_readiness::state::{CallOutcome, EventSink};
use mcp_readiness::{
    Metrics,
    metrics::{MetricsError, names},
};
use prometheus::Registry;

use crate::support::events::*;
use crate::support::exposition::*;

#[test]
fn a_name_already_in_the_registry_is_an_error_that_names_it() {
    let registry = Registry::new();
    let user = prometheus::IntCounter::new(names::RECONNECTS_TOTAL, "someone else's").unwrap();
    registry.register(Box::new(user)).unwrap();

    let error = Metrics::with_registry(&registry).unwrap_err();
    assert!(
        matches!(error, MetricsError::AlreadyRegistered { name, .. } if name == names::RECONNECTS_TOTAL)
    );
    assert_eq!(
        error.to_string(),
        "metric `mcp_readiness_reconnects_total` is already registered in this registry: pass a registry that holds no mcp-readiness metrics, or clone the existing `Metrics` handle instead of building a second one"
    );

    let metrics = Metrics::with_registry(&Registry::new()).unwrap();
    let again = Metrics::with_registry(metrics.registry()).unwrap_err();
    assert!(
        matches!(again, MetricsError::AlreadyRegistered { name, .. } if name == names::SERVER_STATE)
    );
}

#[test]
fn a_failed_registration_registers_nothing() {
    // Collide on the family registered last, with a metric identical to ours, so that once the
    // user's metric is gone nothing but a leftover of the failed attempt could collide again.
    let last = names::MCP_CLIENT_OPERATION_DURATION_SECONDS;
    let reference = Metrics::new();
    reference
        .server("s")
        .tool("t")
        .observe_operation("tools/call", None, Duration::ZERO);
    let help = reference
        .render()
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!("# HELP {last} "))
                .map(str::to_owned)
        })
        .unwrap();
    let labels = [
        "mcp_method_name",
        "gen_ai_tool_name",
        "error_type",
        "server",
    ];
    let user =
        prometheus::HistogramVec::new(prometheus::HistogramOpts::new(last, help), &labels).unwrap();
    let registry = Registry::new();
    registry.register(Box::new(user.clone())).unwrap();

    let error = Metrics::with_registry(&registry).unwrap_err();
    assert!(matches!(error, MetricsError::AlreadyRegistered { name, .. } if name == last));

    registry.unregister(Box::new(user)).unwrap();
    let metrics = Metrics::with_registry(&registry).unwrap();
    metrics.server("s").tool("t").observe_call(CallOutcome::Ok);
    assert!(metrics.render().contains(names::TOOL_CALLS_TOTAL));
}

#[test]
fn the_users_own_collectors_are_rendered_alongside() {
    let registry = Registry::new();
    let mine = prometheus::IntCounter::new("my_app_requests_total", "mine").unwrap();
    registry.register(Box::new(mine.clone())).unwrap();
    mine.inc();
    let metrics = Metrics::with_registry(&registry).unwrap();
    let text = metrics.render();
    assert!(text.contains("my_app_requests_total 1\n"));
    assert!(text.contains("mcp_readiness_build_info{version="));
}

#[test]
fn a_registry_with_a_prefix_and_common_labels_applies_them_to_our_metrics_too() {
    let labels = [("instance".to_owned(), "a\"1".to_owned())].into();
    let registry = Registry::new_custom(Some("myapp".into()), Some(labels)).unwrap();
    let metrics = Metrics::with_registry(&registry).unwrap();
    metrics.on_event(&added("files", State::Ready));
    let samples = parse(&metrics.render());
    assert_eq!(
        value(
            &samples,
            "myapp_mcp_readiness_server_state",
            &[
                ("instance", "a\"1"),
                ("server", "files"),
                ("state", "ready")
            ]
        ),
        Some(1.0)
    );
    assert!(samples.iter().all(|s| s.name.starts_with("myapp_")));
}
