//! Spans, outcomes, metrics and hooks for a call in each state.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_ready_call_goes_through_with_a_fully_tagged_client_span() {
    let (capture, _guard, metrics, servers, service) = world();

    let result = call(&service, "mcp__files__read").await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(servers.calls.load(Ordering::SeqCst), 1);

    let span = capture.only_span();
    assert_eq!(span.name, "tools/call");
    let f = &span.fields;
    assert_eq!(f["otel.name"], "tools/call read");
    assert_eq!(f["otel.kind"], "client");
    assert_eq!(f["mcp.method.name"], "tools/call");
    assert_eq!(f["gen_ai.tool.name"], "read");
    assert_eq!(f["gen_ai.operation.name"], "execute_tool");
    assert_eq!(f["mcp_readiness.server"], "files");
    assert_eq!(f["mcp_readiness.state"], "ready");
    assert_eq!(f["mcp_readiness.waited_ms"], "0");
    assert_eq!(f["mcp_readiness.timed_out"], "false");
    assert!(
        !f.contains_key("error.type") && !f.contains_key("mcp_readiness.action"),
        "{f:?}"
    );
    assert_eq!(
        metric_line(
            &metrics,
            r#"mcp_readiness_tool_calls_total{outcome="ok",server="files",tool="read"}"#
        )
        .as_deref(),
        Some(r#"mcp_readiness_tool_calls_total{outcome="ok",server="files",tool="read"} 1"#)
    );
}

#[tokio::test(start_paused = true)]
async fn an_unauthenticated_server_is_refused_at_once_without_calling_the_inner_service() {
    let (capture, _guard, metrics, servers, service) = world();

    let not_ready = refusal(&service, "mcp__chat__send").await;
    assert_eq!(
        (not_ready.state(), not_ready.waited()),
        (State::Unauthenticated, Duration::ZERO)
    );
    assert_eq!(
        not_ready.to_string(),
        "`mcp__chat__send` is not ready: server `chat` is unauthenticated (HTTP 401 with a WWW-Authenticate challenge); next step: re-authorize the `chat` connection"
    );
    assert_eq!(
        servers.calls.load(Ordering::SeqCst),
        0,
        "the inner service must not be called"
    );

    let f = capture.only_span().fields;
    assert_eq!(f["mcp_readiness.state"], "unauthenticated");
    assert_eq!(f["mcp_readiness.action"], "reauthorize");
    assert_eq!(f["error.type"], "server_unauthenticated");
    assert_eq!(f["mcp_readiness.waited_ms"], "0");
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_calls_total{outcome="not_ready",server="chat",tool="send"} 1"#,
    );
    assert_metric(
        &metrics,
        r#"mcp_readiness_avoided_wait_seconds_total{server="chat",state="unauthenticated"} 4"#,
    );
}

#[tokio::test(start_paused = true)]
async fn a_connecting_server_is_waited_on_for_the_budget_then_refused_as_a_resolve_timeout() {
    let (capture, _guard, metrics, servers, service) = world();

    let start = tokio::time::Instant::now();
    let err = call(&service, "mcp__search__query").await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(4));
    let not_ready = err.downcast_ref::<NotReady>().unwrap();
    assert!(not_ready.timed_out());
    assert_eq!(not_ready.action().as_str(), "extend_wait_budget");
    assert_eq!(servers.calls.load(Ordering::SeqCst), 0);

    let f = capture.only_span().fields;
    assert_eq!(f["mcp_readiness.state"], "connecting");
    assert_eq!(f["mcp_readiness.waited_ms"], "4000");
    assert_eq!(f["mcp_readiness.timed_out"], "true");
    assert_eq!(f["error.type"], "resolve_timeout");
    assert_metric(
        &metrics,
        r#"mcp_readiness_budget_exhausted_total{server="search"} 1"#,
    );
    assert_metric(
        &metrics,
        r#"mcp_readiness_waste_seconds_total{server="search",state="connecting"} 4"#,
    );
}

#[tokio::test(start_paused = true)]
async fn an_absent_server_and_an_absent_tool_are_told_apart() {
    let (capture, _guard, metrics, _, service) = world();

    let err = call(&service, "mcp__gone__x").await.unwrap_err();
    assert_eq!(
        err.downcast_ref::<NotReady>().unwrap().error_type(),
        "server_absent"
    );
    let not_ready = refusal(&service, "mcp__files__write").await;
    assert_eq!(not_ready.error_type(), "tool_absent");
    assert!(
        not_ready
            .to_string()
            .contains("connected but does not offer `write`")
    );
    // The connection works: the fix is another tool name or server version, not the connection.
    assert!(
        not_ready.to_string().ends_with(
            "next step: check the tool name `write`, or run a version of `files` that offers it"
        ),
        "{not_ready}"
    );
    assert!(!not_ready.to_string().contains("add or repair"));

    let spans = capture.spans();
    assert_eq!(spans[0].fields["error.type"], "server_absent");
    assert_eq!(spans[0].fields["mcp_readiness.action"], "add_connection");
    assert_eq!(spans[1].fields["error.type"], "tool_absent");
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_absent_total{server="files",tool="write"} 1"#,
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_error_and_a_transport_error_are_classified_and_tagged() {
    let (capture, _guard, metrics, _, service) = world();

    let result = call(&service, "mcp__files__fail").await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let err = call(&service, "mcp__files__broken").await.unwrap_err();
    assert!(err.to_string().contains("connection reset"));

    let spans = capture.spans();
    assert_eq!(spans[0].fields["tool_error"], "true");
    assert_eq!(spans[0].fields["error.type"], "tool_error");
    assert_eq!(spans[1].fields["error.type"], "transport_error");
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_calls_total{outcome="tool_error",server="files",tool="fail"} 1"#,
    );
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_calls_total{outcome="transport_error",server="files",tool="broken"} 1"#,
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_that_outlives_towers_timeout_is_counted_as_timeout() {
    let capture = Capture::default();
    let _guard = capture.install();
    let metrics = Metrics::new();
    let service = ServiceBuilder::new()
        .timeout(Duration::from_secs(3))
        .layer(layer(&metrics))
        .service(Servers::default());
    let err = call(&service, "mcp__files__hang").await.unwrap_err();
    assert!(err.is::<tower::timeout::error::Elapsed>());
    // The layer sits inside the timeout here, so it sees its future dropped: cancelled.
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_calls_total{outcome="cancelled",server="files",tool="hang"} 1"#,
    );

    // With the timeout inside the layer, the layer sees the timeout itself.
    let metrics = Metrics::new();
    let inner = ServiceBuilder::new()
        .timeout(Duration::from_secs(3))
        .service(Servers::default());
    let service = ServiceBuilder::new()
        .layer(layer(&metrics))
        .service(tower::util::MapErr::new(inner, |e: BoxError| e));
    let err = call(&service, "mcp__files__hang").await.unwrap_err();
    assert!(err.is::<tower::timeout::error::Elapsed>());
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_calls_total{outcome="timeout",server="files",tool="hang"} 1"#,
    );
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_is_counted_as_cancelled_exactly_once() {
    let metrics = Metrics::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook_seen = seen.clone();
    let layer = layer_builder(&metrics)
        .on_outcome(
            move |tool: &ToolName, outcome: CallOutcome, _elapsed: Duration| {
                hook_seen.lock().unwrap().push((tool.to_string(), outcome));
            },
        )
        .build();
    let mut service = ServiceBuilder::new()
        .layer(layer)
        .service(Servers::default());
    let ready = service.ready().await.unwrap();
    let mut future = ready.call(ToolCall::new("mcp__files__hang"));
    // Poll it once so it is mid-flight, then drop it.
    assert!(futures::poll!(&mut future).is_pending());
    drop(future);
    assert_eq!(
        *seen.lock().unwrap(),
        [("mcp__files__hang".to_owned(), CallOutcome::Cancelled)]
    );
    assert_metric(
        &metrics,
        r#"mcp_readiness_tool_calls_total{outcome="cancelled",server="files",tool="hang"} 1"#,
    );
}

#[tokio::test(start_paused = true)]
async fn the_on_not_ready_hook_sees_every_refusal() {
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let seen = refusals.clone();
    let layer = layer_builder(&Metrics::new())
        .on_not_ready(move |err: &NotReady| {
            seen.lock()
                .unwrap()
                .push((err.server().to_owned(), err.state()));
        })
        .build();
    let service = ServiceBuilder::new()
        .layer(layer)
        .service(Servers::default());
    let _ = call(&service, "mcp__chat__send").await;
    let _ = call(&service, "mcp__gone__x").await;
    let _ = call(&service, "mcp__files__read").await;
    assert_eq!(
        *refusals.lock().unwrap(),
        [
            ("chat".to_owned(), State::Unauthenticated),
            ("gone".to_owned(), State::Absent)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_outer_execute_tool_span_is_enriched_instead_of_opening_a_second() {
    let capture = Capture::default();
    let _guard = capture.install();
    let service = ServiceBuilder::new()
        .layer(layer(&Metrics::new()))
        .service(Servers::default());
    let outer = execute_tool_span(&ToolName::parse("mcp__chat__send"));
    let _ = service
        .oneshot(ToolCall::new("mcp__chat__send"))
        .then(|r| async { r })
        .await;
    // Not entered: a second span opens.
    assert_eq!(capture.spans().len(), 2);
    let service = ServiceBuilder::new()
        .layer(layer(&Metrics::new()))
        .service(Servers::default());
    {
        let _entered = outer.enter();
        let _ = service
            .oneshot(ToolCall::new("mcp__chat__send"))
            .now_or_never();
    }
    let spans = capture.spans();
    assert_eq!(spans.len(), 2, "no third span: {spans:#?}");
    assert_eq!(spans[0].fields["mcp_readiness.state"], "unauthenticated");
}

#[tokio::test(start_paused = true)]
async fn a_services_own_enclosing_span_is_left_alone_and_the_call_opens_its_own() {
    let (capture, _guard, _, _, service) = world();
    let request = tracing::info_span!("handle_request", gen_ai.operation.name = "execute_tool");
    {
        let _entered = request.enter();
        service
            .oneshot(ToolCall::new("mcp__files__read"))
            .now_or_never()
            .expect("a ready call completes at once")
            .unwrap();
    }
    let spans = capture.spans();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert_eq!(spans[0].name, "handle_request");
    assert!(
        !spans[0].fields.contains_key("mcp_readiness.state"),
        "{spans:#?}"
    );
    assert_eq!(spans[1].name, "tools/call");
    assert_eq!(spans[1].fields["mcp_readiness.state"], "ready");
}

#[tokio::test(start_paused = true)]
async fn the_layer_composes_with_buffer_and_concurrency_limit() {
    let metrics = Metrics::new();
    let servers = Servers::default();
    let service = ServiceBuilder::new()
        .buffer(8)
        .concurrency_limit(2)
        .layer(layer(&metrics))
        .service(servers.clone());
    let calls: Vec<_> = (0..6)
        .map(|i| {
            let service = service.clone();
            let name = if i % 2 == 0 {
                "mcp__files__read"
            } else {
                "mcp__chat__send"
            };
            tokio::spawn(service.oneshot(ToolCall::new(name)))
        })
        .collect();
    let mut ok = 0;
    let mut refused = 0;
    for call in calls {
        match call.await.unwrap() {
            Ok(_) => ok += 1,
            Err(err) => {
                assert!(err.downcast_ref::<NotReady>().is_some(), "{err}");
                refused += 1;
            }
        }
    }
    assert_eq!((ok, refused), (3, 3));
    assert_eq!(servers.calls.load(Ordering::SeqCst), 3);
}
