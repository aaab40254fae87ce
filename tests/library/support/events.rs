//! Connection events and verdicts as the recorder receives them, and the fixed scenario of the
//! golden exposition (`tests/golden/metrics.txt`).

use std::path::PathBuf;
use std::time::Duration;

use mcp_readiness::State;
use mcp_readiness::resolve::{Scope, Verdict};
use mcp_readiness::state::{
    CallOutcome, ConnectResult, ConnectionEvent, CredentialExpiry, CredentialKind, EventSink,
};
use mcp_readiness::{Metrics, metrics::ManualClock};

pub(crate) fn added(server: &str, state: State) -> ConnectionEvent {
    ConnectionEvent::ServerAdded {
        server: server.into(),
        state,
    }
}

pub(crate) fn changed(server: &str, from: State, to: State) -> ConnectionEvent {
    ConnectionEvent::StateChanged {
        server: server.into(),
        from,
        to,
        reason: None,
    }
}

pub(crate) fn connect(server: &str, result: ConnectResult, millis: u64) -> ConnectionEvent {
    ConnectionEvent::ConnectAttempt {
        server: server.into(),
        result,
        duration: Duration::from_millis(millis),
    }
}

pub(crate) fn verdict(state: State, waited_ms: u64, timed_out: bool, scope: Scope) -> Verdict {
    Verdict {
        state,
        waited: Duration::from_millis(waited_ms),
        timed_out,
        scope,
        reason: None,
    }
}

pub(crate) const BUDGET: Duration = Duration::from_secs(20);
pub(crate) const T0: Duration = Duration::from_secs(1_700_000_000);

/// The fixed scenario of the golden file: four servers, one in each state, resolutions of every
/// verdict, calls of every outcome, connects of several results, on a manual clock.
pub(crate) fn handshake(server: &str, protocol: &str) -> ConnectionEvent {
    ConnectionEvent::Handshake {
        server: server.into(),
        identity: mcp_readiness::state::ServerIdentity {
            protocol_version: protocol.into(),
            server_name: "fs-server".into(),
            server_version: "1.4.0".into(),
        },
    }
}

pub(crate) fn scenario() -> Metrics {
    let clock = ManualClock::new(T0);
    let metrics = Metrics::builder().clock(clock.clone()).build().unwrap();

    // files: connects on the second try, becomes ready with three tools.
    metrics.on_event(&added("files", State::Connecting));
    metrics.on_event(&connect("files", ConnectResult::Closed, 500));
    metrics.on_event(&connect("files", ConnectResult::Ok, 1_200));
    clock.advance(Duration::from_millis(1_700));
    metrics.on_event(&changed("files", State::Connecting, State::Ready));
    metrics.on_event(&ConnectionEvent::ToolsChanged {
        server: "files".into(),
        count: 3,
    });
    metrics.on_event(&handshake("files", "2025-11-25"));
    // files is reached over HTTPS: its certificate ends on 2031-01-02.
    metrics.on_event(&ConnectionEvent::Endpoint {
        server: "files".into(),
        endpoint: mcp_readiness::state::ServerEndpoint::network("files.example.com", 443)
            .with_tls_certificate_expiry(Some(1_925_078_400)),
    });
    // github: its token was revoked.
    metrics.on_event(&added("github", State::Connecting));
    // Its OAuth access token renews itself; its refresh token does not.
    let at = |secs: u64| std::time::UNIX_EPOCH + Duration::from_secs(secs);
    metrics.on_event(&ConnectionEvent::CredentialsExpire {
        server: "github".into(),
        expiries: vec![
            CredentialExpiry {
                kind: CredentialKind::AccessToken,
                expires_at: at(1_767_229_200),
                renewable: true,
            },
            CredentialExpiry {
                kind: CredentialKind::RefreshToken,
                expires_at: at(1_769_817_600),
                renewable: false,
            },
        ],
    });
    metrics.on_event(&connect("github", ConnectResult::Unauthorized, 300));
    clock.advance(Duration::from_millis(300));
    metrics.on_event(&changed(
        "github",
        State::Connecting,
        State::Unauthenticated,
    ));
    // slow: still starting.
    metrics.on_event(&added("slow", State::Connecting));
    metrics.on_event(&connect("slow", ConnectResult::Timeout, 30_000));
    // gone: its command does not exist; it cools down.
    metrics.on_event(&added("gone", State::Connecting));
    metrics.on_event(&connect("gone", ConnectResult::SpawnFailed, 10));
    clock.advance(Duration::from_secs(1));
    metrics.on_event(&changed("gone", State::Connecting, State::Absent));
    // Its next attempt is due in 4 s (the connect backoff).
    metrics.on_event(&ConnectionEvent::NextAttempt {
        server: "gone".into(),
        after: Some(Duration::from_secs(4)),
    });
    metrics.on_event(&ConnectionEvent::CooldownRejection {
        server: "gone".into(),
    });
    // files dropped once and came back.
    clock.advance(Duration::from_secs(60));
    metrics.on_event(&changed("files", State::Ready, State::Connecting));
    metrics.on_event(&connect("files", ConnectResult::Ok, 250));
    metrics.on_event(&ConnectionEvent::Reconnected {
        server: "files".into(),
    });
    // github's event stream was cut and opened again, twice.
    for _ in 0..2 {
        metrics.on_event(&ConnectionEvent::StreamReopened {
            server: "github".into(),
        });
    }
    // It came back speaking the newer protocol: one server_info series, the new one.
    metrics.on_event(&handshake("files", "2026-07-28"));
    clock.advance(Duration::from_millis(250));
    metrics.on_event(&changed("files", State::Connecting, State::Ready));
    // Its new connection lists its tools again (while it was connecting it offered none).
    metrics.on_event(&ConnectionEvent::ToolsChanged {
        server: "files".into(),
        count: 3,
    });

    for server in ["files", "github", "slow", "gone"] {
        metrics.server(server).set_wait_budget(BUDGET);
    }
    // The configuration loaded at start; a step names a tool nobody called yet.
    metrics.config_reloaded(true);
    // `readiness.probe` with its default module and one named module.
    metrics.probe_modules_configured(2);
    metrics.server("github").tool("list_repos").declare();

    // Resolutions of every verdict.
    metrics
        .server("files")
        .observe_resolution(&Verdict::READY, BUDGET);
    metrics
        .server("files")
        .observe_resolution(&verdict(State::Ready, 1_500, false, Scope::Tool), BUDGET);
    metrics
        .server("files")
        .observe_resolution(&verdict(State::Absent, 0, false, Scope::Tool), BUDGET);
    metrics
        .server("files")
        .tool("delete_everything")
        .observe_absent();
    metrics.server("github").observe_resolution(
        &verdict(State::Unauthenticated, 0, false, Scope::Server),
        BUDGET,
    );
    metrics.server("slow").observe_resolution(
        &verdict(State::Connecting, 20_000, true, Scope::Server),
        BUDGET,
    );
    metrics
        .server("gone")
        .observe_resolution(&verdict(State::Absent, 2_000, false, Scope::Server), BUDGET);

    // Calls of every outcome, and their operation durations.
    let ms = Duration::from_millis;
    let calls = [
        ("files", "read_file", CallOutcome::Ok, None, ms(42)),
        (
            "files",
            "write_file",
            CallOutcome::ToolError,
            Some("tool_error"),
            ms(180),
        ),
        (
            "github",
            "search_issues",
            CallOutcome::NotReady,
            Some("server_unauthenticated"),
            ms(0),
        ),
        (
            "files",
            "read_file",
            CallOutcome::TransportError,
            Some("transport_error"),
            ms(900),
        ),
        (
            "slow",
            "query",
            CallOutcome::Timeout,
            Some("resolve_timeout"),
            ms(20_000),
        ),
        (
            "files",
            "read_file",
            CallOutcome::Cancelled,
            Some("cancelled"),
            ms(3_000),
        ),
        ("files", "read_file", CallOutcome::Ok, None, ms(7)),
    ];
    for (server, tool, outcome, error_type, duration) in calls {
        metrics.server(server).tool(tool).observe_call(outcome);
        metrics
            .server(server)
            .tool(tool)
            .observe_operation("tools/call", error_type, duration);
    }
    metrics
}

pub(crate) fn stable(text: &str) -> String {
    // The golden file does not change with the crate version.
    text.replace(
        &format!("version=\"{}\"", env!("CARGO_PKG_VERSION")),
        "version=\"VERSION\"",
    )
}

pub(crate) fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/metrics.txt")
}
