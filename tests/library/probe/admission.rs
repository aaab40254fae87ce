//! A storm of probes: at most `max_in_flight` run, as many wait, the rest are answered 503 at
//! once; `/metrics` keeps answering meanwhile.

use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_readiness::probe::ProbeConfig;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_probes_runs_at_most_max_in_flight_answers_the_excess_503_and_metrics_still_answers()
 {
    let (url, accepted, _open) = silent_server().await;
    let mut config = ProbeConfig::allowing(loopback());
    config.max_in_flight = 2;
    let server = probe_endpoint(prober(config)).await;
    let addr = server.local_addr();
    let client = reqwest::Client::new();
    let target = url.replace(':', "%3A").replace('/', "%2F");
    let storm: Vec<_> = (0..12)
        .map(|_| {
            let request = client
                .get(format!("http://{addr}/probe?target={target}"))
                .header("X-Prometheus-Scrape-Timeout-Seconds", "2.5");
            tokio::spawn(async move {
                let response = request.send().await.unwrap();
                (response.status().as_u16(), response.text().await.unwrap())
            })
        })
        .collect();
    // While the storm runs, /metrics answers at once.
    let scrape = tokio::time::timeout(
        Duration::from_secs(1),
        client.get(format!("http://{addr}/metrics")).send(),
    )
    .await;
    assert!(
        scrape.is_ok_and(|r| r.is_ok_and(|r| r.status() == 200)),
        "/metrics kept waiting"
    );
    let mut answers = Vec::new();
    for probe in storm {
        answers.push(probe.await.unwrap());
    }
    let busy = answers.iter().filter(|(s, _)| *s == 503).count();
    let probed: Vec<&String> = answers
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b)
        .collect();
    // 2 run and 2 wait (one second at most, then they run too or are told to come back): at most
    // four are probed, and at least eight are answered 503 without waiting.
    assert!(busy >= 8, "{answers:?}");
    assert!(!probed.is_empty() && probed.len() <= 4, "{answers:?}");
    assert_eq!(busy + probed.len(), 12, "{answers:?}");
    for body in probed {
        assert!(body.contains(r#"state="connecting"} 1"#), "{body}");
    }
    assert!(
        answers
            .iter()
            .filter(|(s, _)| *s == 503)
            .all(|(_, b)| b.contains("max_in_flight"))
    );
    assert!(
        accepted.load(Ordering::SeqCst) <= 4,
        "{} connections",
        accepted.load(Ordering::SeqCst)
    );
}
