//! Paused-time tests of the hub across servers (fan-out, the inventory view, membership, routing
//! as a `tower::Service`, options checked at build, per-server budgets), with a scripted
//! [`Connector`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::client::*;
use crate::resolve::Inventory;
use crate::state::State;
use crate::state::ToolCall;
use crate::supervise::test_support::*;
use crate::supervise::*;

#[tokio::test(start_paused = true)]
async fn fan_out_returns_healthy_results_side_by_side_and_lists_the_dead_server() {
    let mut connectors: Vec<(Arc<str>, Arc<dyn Connector>)> = Vec::new();
    for (name, ms) in [("a", 100u64), ("b", 300), ("c", 200)] {
        let script = Arc::new(Script::default());
        let mut connector = ScriptedConnector::new(&script);
        connector.default_step = CallStep::Delay(Duration::from_millis(ms));
        connectors.push((name.into(), Arc::new(connector)));
    }
    let dead = Arc::new(Script::default());
    dead.steps
        .lock()
        .unwrap()
        .push_back(ConnectStep::Fail(ConnectResult::SpawnFailed));
    connectors.push(("dead".into(), Arc::new(ScriptedConnector::new(&dead))));
    let hub = Hub::with_connectors(connectors, quiet()).unwrap();

    let calls = ["a", "b", "c", "dead"]
        .map(|s| ToolCall::new(format!("mcp__{s}__read")))
        .to_vec();
    let started = Instant::now();
    let fan = hub.fan_out(calls.clone()).await;
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(300),
        "latency of the slowest healthy server"
    );
    assert_eq!(fan.ok().count(), 3);
    assert_eq!(fan.degraded.len(), 1);
    assert_eq!(&*fan.degraded[0].server, "dead");
    assert_eq!(fan.degraded[0].state, State::Absent);
    assert!(
        fan.degraded[0].reason.contains("spawn_failed")
            || fan.degraded[0].reason.contains("scripted")
    );

    // During the cooldown the dead server costs nothing.
    let started = Instant::now();
    let fan = hub.fan_out(vec![ToolCall::new("mcp__dead__read")]).await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(fan.degraded.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_inventory_reports_ready_tools_pending_and_unauthenticated_servers() {
    let ok = Arc::new(Script::default());
    let slow = Arc::new(Script::default());
    slow.steps.lock().unwrap().push_back(ConnectStep::Hang);
    let locked = Arc::new(Script::default());
    locked
        .steps
        .lock()
        .unwrap()
        .push_back(ConnectStep::Fail(ConnectResult::Unauthorized));
    let hub = Hub::with_connectors(
        vec![
            (
                "files".into(),
                Arc::new(ScriptedConnector::new(&ok)) as Arc<dyn Connector>,
            ),
            ("search".into(), Arc::new(ScriptedConnector::new(&slow))),
            ("github".into(), Arc::new(ScriptedConnector::new(&locked))),
        ],
        quiet(),
    )
    .unwrap();
    let before = hub.changes().unwrap().generation();
    hub.connect_all();
    settle().await;
    let snapshot = hub.snapshot().await;
    assert!(snapshot.ready_tools.contains("mcp__files__read"));
    assert!(snapshot.connected_servers.contains("files"));
    assert!(snapshot.pending_servers.contains("search"));
    assert!(snapshot.unauthenticated_servers.contains("github"));
    assert!(hub.changes().unwrap().generation() > before);
    let one = hub.server_snapshot("github").await;
    assert!(one.unauthenticated_servers.contains("github") && one.ready_tools.is_empty());
    let statuses = hub.servers();
    assert_eq!(
        statuses.iter().find(|s| &*s.name == "files").unwrap().tools,
        2
    );
    // One server's status is what the list says of it.
    assert_eq!(
        hub.server("files").map(|s| (s.state, s.tools)),
        Some((State::Ready, 2))
    );
    assert!(hub.server("nope").is_none());
    assert_eq!(hub.network_transport("files"), Some("pipe"));
    assert_eq!(hub.network_transport("nope"), None);

    let missing = hub.call(ToolCall::new("mcp__nope__x")).await.unwrap_err();
    assert_eq!(
        missing.kind(),
        CallErrorKind::NotConnected(NotConnected::Absent)
    );
    assert!(missing.to_string().contains("not configured"));
}

/// A hub of the scripted `mail` server, and every event it emits, in order.
fn hub_recording_events() -> (Hub, Arc<Mutex<Vec<ConnectionEvent>>>) {
    let script = Arc::new(Script::default());
    let (events, sink) = recorder();
    let hub = hub_with(ScriptedConnector::new(&script), quiet().event_sink(sink));
    (hub, events)
}

#[tokio::test(start_paused = true)]
async fn removing_a_server_emits_server_removed_and_the_hub_answers_absent() {
    let (hub, events) = hub_recording_events();
    hub.call(read()).await.unwrap();
    let before_removal = events.lock().unwrap().len();
    assert!(hub.remove_server("mail"));
    // It left the configuration; it did not go absent: `ServerRemoved` alone, no "shut down"
    // state change that the status stream would show as a server to repair.
    assert!(
        matches!(
            &events.lock().unwrap()[before_removal..],
            [ConnectionEvent::ServerRemoved { .. }]
        ),
        "{:?}",
        &events.lock().unwrap()[before_removal..]
    );
    assert!(!hub.remove_server("mail"));
    assert!(hub.snapshot().await.connected_servers.is_empty());
    let events = events.lock().unwrap();
    assert!(matches!(
        events.first(),
        Some(ConnectionEvent::ServerAdded { .. })
    ));
    assert!(matches!(
        events.last(),
        Some(ConnectionEvent::ServerRemoved { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn every_connection_announces_its_endpoint_before_its_tools() {
    let (hub, events) = hub_recording_events();
    hub.call(read()).await.unwrap();
    let events = events.lock().unwrap();
    let position = |wanted: fn(&ConnectionEvent) -> bool| events.iter().position(wanted);
    let endpoint =
        position(|e| matches!(e, ConnectionEvent::Endpoint { .. })).expect("an Endpoint event");
    let tools = position(|e| matches!(e, ConnectionEvent::ToolsChanged { .. })).unwrap();
    assert!(endpoint < tools, "{events:?}");
    let ConnectionEvent::Endpoint { server, endpoint } = &events[endpoint] else {
        unreachable!()
    };
    // A custom connector without a configuration: its transport, no address.
    assert_eq!(&**server, "mail");
    assert_eq!(*endpoint, crate::state::ServerEndpoint::pipe());
}

fn http_spec(name: &str, url: &str) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: TransportSpec::Http {
            url: url.into(),
            headers: Default::default(),
            oauth: None,
        },
    }
}

#[tokio::test(start_paused = true)]
async fn an_entry_this_build_cannot_serve_reads_absent_naming_its_key_and_the_others_start() {
    let bad_url = http_spec("files", "ftp://user:hunter2@example.test/mcp");
    let mut bad_oauth = http_spec("github", "https://example.test/mcp");
    if let TransportSpec::Http { oauth, .. } = &mut bad_oauth.transport {
        *oauth = Some(OAuthSpec::new("tokens/github.json", Some(" ".into())));
    }
    let (events, sink) = recorder();
    let hub = Hub::new(
        vec![bad_url, bad_oauth],
        quiet().event_sink(sink).reconnect_on_drop(false),
    )
    .expect("one bad entry does not stop the hub");
    // A healthy server beside them starts and answers.
    let script = Arc::new(Script::default());
    hub.add_connector("mail", Arc::new(ScriptedConnector::new(&script)))
        .unwrap();
    hub.connect_all();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Ready));
    assert_eq!(hub.call(read()).await.unwrap().content.len(), 1);

    for (server, key) in [("files", "url"), ("github", "oauth.client_id")] {
        assert_eq!(hub.state(server), Some(State::Absent), "{server}");
        let status = hub.server(server).unwrap();
        let reason = status.reason.unwrap_or_default();
        assert!(reason.contains(&format!("`{key}`")), "{server}: {reason}");
        assert!(
            reason.contains("other servers are not affected"),
            "{reason}"
        );
        assert!(!reason.contains("hunter2"), "{reason}");
        // Calls fail at once, with the same words, and nothing is attempted.
        let started = Instant::now();
        let error = hub
            .call(ToolCall::new(format!("mcp__{server}__read")))
            .await
            .unwrap_err();
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert_eq!(error.state(), State::Absent);
        assert!(error.to_string().contains(&format!("`{key}`")), "{error}");
        tokio::time::advance(Duration::from_secs(600)).await;
        hub.connect_all();
        settle().await;
        assert_eq!(hub.state(server), Some(State::Absent));
    }
    let events = events.lock().unwrap();
    assert!(
        !events.iter().any(
            |e| matches!(e, ConnectionEvent::ConnectAttempt { server, .. } if &**server != "mail")
        ),
        "no attempt for an entry that cannot be served: {events:?}"
    );
    // The exporter learns the reason with the state change.
    assert!(events.iter().any(|e| matches!(e,
        ConnectionEvent::StateChanged { server, to: State::Absent, reason: Some(r), .. }
            if &**server == "github" && r.contains("`oauth.client_id`"))));
}

#[test]
fn only_a_name_that_cannot_form_tool_names_or_a_duplicate_refuses_the_hub() {
    let error = Hub::new(
        vec![http_spec("a__b", "https://example.test/mcp")],
        HubOptions::builder(),
    )
    .unwrap_err();
    assert!(matches!(error, SpecError::BadName { .. }), "{error}");
    let error = Hub::new(
        vec![
            http_spec("a", "https://example.test/mcp"),
            http_spec("a", "ftp://example.test/mcp"),
        ],
        HubOptions::builder(),
    )
    .unwrap_err();
    assert!(matches!(error, SpecError::Duplicate { .. }), "{error}");
}

#[tokio::test(start_paused = true)]
async fn a_reload_to_an_entry_this_build_cannot_serve_makes_that_server_absent_alone() {
    let hub = Hub::new(
        vec![http_spec("files", "https://example.test/mcp")],
        quiet(),
    )
    .unwrap();
    assert_eq!(hub.state("files"), Some(State::Connecting));
    hub.replace_server(http_spec("files", "ws://example.test/mcp"))
        .unwrap();
    assert_eq!(hub.state("files"), Some(State::Absent));
    hub.add_server(http_spec("more", "file:///etc/passwd"))
        .unwrap();
    assert_eq!(hub.state("more"), Some(State::Absent));
    assert!(reason_of(&hub, "more").contains("`url`"));
    // Fixing the entry brings it back to `connecting`.
    hub.replace_server(http_spec("files", "https://example.test/mcp"))
        .unwrap();
    assert_eq!(hub.state("files"), Some(State::Connecting));
}

#[tokio::test(start_paused = true)]
async fn a_reload_that_changes_a_ready_server_says_so_in_one_state_change() {
    let (hub, events) = hub_recording_events();
    hub.call(read()).await.unwrap();
    let before_reload = events.lock().unwrap().len();
    hub.replace_server(http_spec("mail", "https://example.test/mcp"))
        .unwrap();
    // Not "shut down" (ready → absent) and then a change from `ready` again: one change, from
    // the state it was in, that says why.
    let events = events.lock().unwrap();
    let [
        ConnectionEvent::StateChanged {
            from, to, reason, ..
        },
    ] = &events[before_reload..]
    else {
        panic!("{:?}", &events[before_reload..]);
    };
    assert_eq!((*from, *to), (State::Ready, State::Connecting));
    assert_eq!(
        reason.as_deref(),
        Some("its configuration changed; reconnecting with the new one")
    );
}

fn reason_of(hub: &Hub, server: &str) -> String {
    hub.server(server)
        .and_then(|s| s.reason)
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn the_hub_is_a_tower_service_that_routes_by_server() {
    use tower::ServiceExt as _;
    let script = Arc::new(Script::default());
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    let result = hub
        .clone()
        .oneshot(ToolCall::new("mcp__mail__write"))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "write");
    let error = hub.oneshot(ToolCall::new("Bash")).await.unwrap_err();
    assert_eq!(error.server(), "builtin");
    assert_eq!(
        error.kind(),
        CallErrorKind::NotConnected(NotConnected::Absent)
    );
}

#[test]
fn crash_backoff_and_stable_after_are_checked_when_the_hub_is_built() {
    let bad = [
        quiet().crash_backoff(Duration::ZERO, Duration::from_secs(1)),
        quiet().crash_backoff(Duration::from_secs(2), Duration::from_secs(1)),
        quiet().stable_after(Duration::ZERO),
    ];
    for options in bad {
        let script = Arc::new(Script::default());
        let error = Hub::with_connectors(
            vec![(
                "mail".into(),
                Arc::new(ScriptedConnector::new(&script)) as Arc<dyn Connector>,
            )],
            options,
        )
        .unwrap_err();
        assert!(matches!(error, SpecError::BadOption { .. }), "{error}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_server_budget_on_the_options_is_what_the_cache_waits_for_that_server() {
    use crate::resolve::{Budget, CapabilityCache};
    use crate::state::ToolName;
    let slow = Arc::new(Script::default());
    slow.steps.lock().unwrap().push_back(ConnectStep::Hang);
    let other = Arc::new(Script::default());
    other.steps.lock().unwrap().push_back(ConnectStep::Hang);
    let budget = Budget::try_new(Duration::from_secs(45), Duration::from_secs(5)).unwrap();
    let hub = Hub::with_connectors(
        vec![
            (
                "warehouse".into(),
                Arc::new(ScriptedConnector::new(&slow)) as Arc<dyn Connector>,
            ),
            ("search".into(), Arc::new(ScriptedConnector::new(&other))),
        ],
        quiet()
            .connect_timeout(Duration::from_secs(600))
            .server_budget("warehouse", budget),
    )
    .unwrap();
    assert_eq!(hub.server_budget("warehouse"), Some(budget));
    assert_eq!(hub.server_budget("search"), None);
    let cache = CapabilityCache::new(hub.clone());
    assert_eq!(cache.budget_for("warehouse"), budget);
    assert_eq!(cache.budget_for("search"), Budget::default());

    let verdict = cache
        .resolve(&ToolName::parse("mcp__warehouse__query"))
        .await;
    assert_eq!(
        (verdict.state, verdict.timed_out),
        (State::Connecting, true)
    );
    assert_eq!(verdict.waited, Duration::from_secs(45));
    let verdict = cache.resolve(&ToolName::parse("mcp__search__query")).await;
    assert_eq!(
        verdict.waited,
        Duration::from_secs(20),
        "the default budget"
    );

    // A reload changes it for resolutions that start afterwards.
    hub.set_server_budget("warehouse", None);
    assert_eq!(cache.budget_for("warehouse"), Budget::default());
}

/// A scripted connector whose renewal ahead of a time answers `renewal` (what the OAuth
/// connector does with `HubOptionsBuilder::renew_credentials_expiring_before`), recording when
/// it was asked to renew before.
struct Renewing {
    inner: ScriptedConnector,
    renewal: Result<Renewal, ConnectError>,
    asked: Mutex<Vec<std::time::SystemTime>>,
}

impl Connector for Renewing {
    fn connect(
        &self,
        events: SessionEvents,
    ) -> futures::future::BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        self.inner.connect(events)
    }

    fn network_transport(&self) -> &'static str {
        "tcp"
    }

    fn renew_credentials_expiring_before(
        &self,
        at: std::time::SystemTime,
    ) -> futures::future::BoxFuture<'_, Result<Renewal, ConnectError>> {
        self.asked.lock().unwrap().push(at);
        Box::pin(std::future::ready(self.renewal.clone()))
    }
}

#[tokio::test(start_paused = true)]
async fn with_the_next_run_known_each_connect_renews_ahead_of_it_and_a_refused_renewal_reads_unauthenticated()
 {
    let next_run = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    let refused = ConnectError::new(
        ConnectResult::Unauthorized,
        "server `mail`: renewing its access token ahead of the next run failed: the \
         authorization server refused the refresh token; re-authorize: run `login`",
    );
    let renewed = Renewal::Renewed {
        expires_at: Some(next_run - Duration::from_secs(3600)),
    };
    let not_asked = Renewal::NotRenewed {
        reason: "its authorization server did not answer".into(),
    };
    for (renew, renewal, state) in [
        (false, Ok(renewed.clone()), State::Ready),
        (true, Ok(Renewal::NotDue), State::Ready),
        (true, Ok(renewed.clone()), State::Ready),
        (true, Ok(not_asked.clone()), State::Ready),
        (true, Err(refused.clone()), State::Unauthenticated),
    ] {
        let script = Arc::new(Script::default());
        let connector = Arc::new(Renewing {
            inner: ScriptedConnector::new(&script),
            renewal: renewal.clone(),
            asked: Mutex::new(Vec::new()),
        });
        let mut options = quiet();
        if renew {
            options = options.renew_credentials_expiring_before(next_run);
        }
        let hub = Hub::with_connectors(
            vec![("mail".into(), connector.clone() as Arc<dyn Connector>)],
            options,
        )
        .unwrap();
        hub.connect_all();
        tokio::time::sleep(Duration::from_millis(1)).await;
        settle().await;
        let case = format!("renew {renew}, {renewal:?}");
        assert_eq!(hub.state("mail"), Some(state), "{case}");
        let asked = connector.asked.lock().unwrap().clone();
        assert_eq!(asked, if renew { vec![next_run] } else { vec![] }, "{case}");
        let kept: Vec<Renewal> = hub.renewals().into_iter().map(|(_, r)| r).collect();
        match &renewal {
            Ok(renewal @ (Renewal::Renewed { .. } | Renewal::NotRenewed { .. })) if renew => {
                assert_eq!(kept, vec![renewal.clone()], "{case}");
            }
            _ => assert!(kept.is_empty(), "{case}: {kept:?}"),
        }
        if state == State::Unauthenticated {
            assert_eq!(reason(&hub), refused.message);
            let sessions = script.sessions.lock().unwrap().clone();
            assert!(
                sessions
                    .iter()
                    .all(|s| s.shut_down.load(std::sync::atomic::Ordering::SeqCst)),
                "the connection whose renewal was refused is not kept"
            );
        }
        hub.shutdown().await;
    }
}
