//! A child's own exit ends its session, whoever holds its stdout: a wrapper that starts a helper
//! in the background (`sh -c 'helper & exec server'`) leaves that helper holding the pipe after
//! the server exits, and the exit must still be noticed at once, reaped, and counted by the
//! crash-loop rules like any other exit.

use super::*;

/// A stdio spec that runs the fixture through `sh`, which first starts `sleep 300` in the
/// background (it inherits stdout and logs `helper <pid>`), then `exec`s the fixture.
fn wrapped(name: &str, scratch: &Scratch, env: &[(&str, &str)]) -> ServerSpec {
    let mut spec = stdio(name, scratch, env);
    let TransportSpec::Stdio { command, args, .. } = &mut spec.transport else {
        unreachable!("stdio() makes a stdio spec")
    };
    let fixture = std::mem::replace(command, "sh".into());
    *args = vec![
        "-c".into(),
        r#"sleep 300 & echo "helper $!" >> "$FIXTURE_LOG"; exec "$0""#.into(),
        fixture,
    ];
    spec
}

/// The pids a field of the log names (`exit <pid>`, `helper <pid>`), in order.
fn logged(scratch: &Scratch, kind: &str) -> Vec<u32> {
    scratch
        .log()
        .iter()
        .filter_map(|l| l.strip_prefix(kind)?.trim().parse().ok())
        .collect()
}

/// Whether `pid` is a zombie: exited but not reaped by its parent (this process).
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            == Some("Z")
    })
}

#[tokio::test]
async fn a_child_that_exits_while_a_background_helper_holds_its_stdout_is_noticed_at_once_and_reaped()
 {
    let scratch = Scratch::new("held-stdout");
    // No health ping: only the exit itself can end the session.
    let hub = Hub::new(
        vec![wrapped("mail", &scratch, &[])],
        options().reconnect_on_drop(false),
    )
    .unwrap();
    let pid = child_pid(&hub, "mail").await;
    let helper = logged(&scratch, "helper ")[0];
    assert!(alive(helper), "the helper holds the child's stdout");
    assert_eq!(hub.state("mail"), Some(State::Ready));

    // The fixture's `exit` tool answers, then exits 50 ms later.
    let _ = hub.call(ToolCall::new("mcp__mail__exit")).await;
    eventually("the child to exit", WAIT, async || !alive(pid)).await;
    let exited = Instant::now();
    eventually("the exit to end the session", WAIT, async || {
        hub.state("mail") != Some(State::Ready)
    })
    .await;
    let after = exited.elapsed();
    eprintln!("exit noticed after {after:?} with the helper holding stdout");
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    let reason = hub.servers()[0].reason.clone().unwrap();
    assert!(
        reason.contains("lost") && reason.contains("its process exited with status"),
        "{reason}"
    );
    eventually(
        "the child to be reaped",
        Duration::from_secs(2),
        async || !zombie(pid),
    )
    .await;
    mcp_readiness_fixtures::process::assert_all_gone(
        "the helper, killed with the child's group",
        &[helper],
        Duration::from_secs(2),
    )
    .await;
    assert!(
        after < Duration::from_secs(2),
        "the exit took {after:?} to notice"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_wrapped_child_that_keeps_exiting_is_restarted_then_backed_off_like_any_crash_loop() {
    let scratch = Scratch::new("held-stdout-loop");
    let hub = Hub::new(
        vec![wrapped(
            "mail",
            &scratch,
            &[("FIXTURE_EXIT_AFTER_MS", "200")],
        )],
        options().crash_backoff(Duration::from_secs(1), Duration::from_secs(4)),
    )
    .unwrap();
    hub.connect_all();
    let started = Instant::now();
    // Exit 1 is restarted at once; exit 2 backs off 1 s, exit 3 2 s: the fourth start comes
    // about 4 s in (three handshakes of ~200 ms lives plus 1 s + 2 s of backoff).
    eventually("four starts", Duration::from_secs(12), async || {
        scratch.count("start") >= 4
    })
    .await;
    let took = started.elapsed();
    eprintln!("4 starts of a crash-looping wrapped child in {took:?}");
    eventually("the backoff's reason", WAIT, async || {
        hub.servers()[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("keeps exiting"))
    })
    .await;
    let reason = hub.servers()[0].reason.clone().unwrap();
    assert!(
        reason.contains("its process exited with status 0"),
        "{reason}"
    );
    for pid in logged(&scratch, "exit ") {
        eventually(
            "each exited child reaped",
            Duration::from_secs(2),
            async || !zombie(pid),
        )
        .await;
    }
    let helpers = logged(&scratch, "helper ");
    hub.shutdown().await;
    mcp_readiness_fixtures::process::assert_all_gone(
        "every helper",
        &helpers,
        Duration::from_secs(5),
    )
    .await;
}
