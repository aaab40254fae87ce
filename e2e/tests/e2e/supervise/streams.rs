//! Event streams that a server (or the proxy in front of it) cuts right after their headers:
//! re-opened with a growing, jittered wait and never sooner than the server's `retry`, instead of
//! a storm of about a thousand requests a second; every re-open counted in
//! `mcp_readiness_stream_reopens_total`.

use super::*;

use mcp_readiness::Metrics;

const TOKEN: &str = "stream-token";

/// A hub over the HTTP fixture whose `GET` streams behave as `mode` (`FIXTURE_CUT_STREAMS`);
/// returns how many streams it opened in `window` once the connection was ready, and the
/// counter's value.
async fn reopens_in(mode: &str, window: Duration) -> (usize, f64) {
    let scratch = Scratch::new("cut-streams");
    let log = scratch.path("log").display().to_string();
    let (_server, port) = http_fixture_with_env(
        &scratch,
        TOKEN,
        &[("FIXTURE_LOG", &log), ("FIXTURE_CUT_STREAMS", mode)],
    )
    .await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let metrics = Metrics::new();
    let hub = Hub::new(
        vec![http("cut", &url, Some(TOKEN))],
        options().event_sink(metrics.clone()),
    )
    .unwrap();
    hub.connect_all();
    eventually("the connection", WAIT, async || {
        hub.state("cut") == Some(State::Ready) && scratch.count("get") > 0
    })
    .await;
    let before = scratch.count("get");
    tokio::time::sleep(window).await;
    let opened = scratch.count("get") - before;
    assert_eq!(
        hub.state("cut"),
        Some(State::Ready),
        "the calls still work: the harm of a storm is to the server"
    );
    let counted = metrics
        .render()
        .lines()
        .find_map(|l| {
            l.strip_prefix(r#"mcp_readiness_stream_reopens_total{server="cut"} "#)?
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(0.0);
    hub.shutdown().await;
    (opened, counted)
}

/// The re-opens of streams in `mode` over 10 s once ready, asserted to be within `expected`;
/// returns them and the counter's value.
async fn assert_reopens(mode: &str, expected: std::ops::RangeInclusive<usize>) -> (usize, f64) {
    let window = Duration::from_secs(10);
    let (opened, counted) = reopens_in(mode, window).await;
    eprintln!("streams `{mode}`: {opened} re-opens in {window:?}");
    assert!(
        expected.contains(&opened),
        "`{mode}`: {opened} re-opens in {window:?}"
    );
    (opened, counted)
}

#[tokio::test]
async fn a_stream_cut_after_its_headers_is_reopened_with_a_growing_wait_not_at_once() {
    // 0.25-0.5 s, then 0.5-1, 1-2, 2-4, 4-8 s: at most 6 in 10 s (was about 12,000).
    let (opened, counted) = assert_reopens("cut", 2..=7).await;
    assert!(counted >= opened as f64, "counted {counted}, saw {opened}");
}

#[tokio::test]
async fn a_servers_retry_is_honoured_even_when_the_stream_then_fails() {
    // One every 3 s at most (rmcp alone re-opens a failed stream at once, whatever `retry` said).
    assert_reopens("retry-cut:3000", 2..=4).await;
}
