//! The OTLP path once on a live Prometheus: agent services that push their metrics over OTLP
//! (`e2e/src/bin/otlp-agent.rs`: `telemetry::init_metrics()` and a Hub, no scrape endpoint)
//! through vmagent (the OTLP receiver: Debian's Prometheus builds have Prometheus' own patched
//! out) into a Prometheus that takes remote write and evaluates the shipped rules. Their series
//! arrive with a scrape's names and labels; one server answers 401, so `MCPServerUnauthenticated`
//! fires; then the agents are killed 5 s apart (SIGKILL: no last export, no staleness marker) and
//! the page holds, each replica's state with it, while `MCPReadinessAgentStopped` fires for
//! their job, valued at the whole silence (`alerts/tests/otlp.test.yml` runs the same scenario in
//! promtool, at the shipped windows).

use super::*;

use mcp_readiness_fixtures::tools::vmagent;

/// The job (the agents' `service.name`).
const JOB: &str = "otel-agents";
/// The `service.instance.id` the first agent is given; the second gets the library's default.
const GIVEN_INSTANCE: &str = "svc-1";
/// `agentSilenceMinutes` as rendered here (30 s).
const SILENCE_SECS: f64 = 30.0;

/// vmagent's relabeling: the resource's `service.name` and `service.instance.id` become `job`
/// and `instance`, as Prometheus' OTLP receiver and the Collector make them.
const RELABEL: &str = "\
- source_labels: [service_name]
  target_label: job
- source_labels: [service_instance_id]
  target_label: instance
- action: labeldrop
  regex: service_name|service_instance_id
";

/// vmagent on a free loopback port: OTLP over HTTP/protobuf in (the Prometheus names, only the
/// two resource attributes above as labels), remote write to `prometheus` out (every second,
/// the Prometheus protocol), with [`RELABEL`]. Waits until it is healthy.
async fn start_vmagent(
    binary: &std::path::Path,
    scratch: &Scratch,
    prometheus: &str,
) -> (Guard, String) {
    let relabel = scratch.path("vmagent-relabel.yml");
    std::fs::write(&relabel, RELABEL).unwrap();
    let flags = |addr: &str| {
        vec![
            format!("-httpListenAddr={addr}"),
            "-opentelemetry.usePrometheusNaming".to_owned(),
            "-opentelemetry.promoteAllResourceAttributes=false".to_owned(),
            "-opentelemetry.promoteResourceAttributes=service.name,service.instance.id".to_owned(),
            // Else every series gets `scope_name` and `scope_version` labels a scrape has not.
            "-opentelemetry.promoteScopeMetadata=false".to_owned(),
            format!("-remoteWrite.url=http://{prometheus}/api/v1/write"),
            "-remoteWrite.forcePromProto".to_owned(),
            "-remoteWrite.flushInterval=1s".to_owned(),
            format!("-remoteWrite.relabelConfig={}", relabel.display()),
            format!(
                "-remoteWrite.tmpDataPath={}",
                scratch.path("vmagent-data").display()
            ),
        ]
    };
    start_daemon(
        scratch,
        "vmagent",
        binary,
        &flags,
        "/health",
        Duration::from_secs(30),
    )
    .await
}

/// An agent pushing to vmagent at `vmagent` every second, with `config` and the wrong token
/// for `authz`; `instance`: its `service.instance.id`, or `None` for the library's default.
fn start_agent(
    scratch: &Scratch,
    tag: &str,
    config: &std::path::Path,
    vmagent: &str,
    instance: Option<&str>,
) -> Guard {
    let mut command = std::process::Command::new(mcp_readiness_fixtures::binaries::otlp_agent());
    command
        .arg(config)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_METRICS_EXPORTER")
        .env(
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            format!("http://{vmagent}/opentelemetry/v1/metrics"),
        )
        .env("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "1000")
        .env("OTEL_SERVICE_NAME", JOB)
        .env("MCP_ONCALL_TOKEN", WRONG_TOKEN)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(scratch.path(&format!("agent-{tag}.err"))).unwrap());
    if let Some(instance) = instance {
        command.env(
            "OTEL_RESOURCE_ATTRIBUTES",
            format!("service.instance.id={instance}"),
        );
    }
    Guard::spawn(&format!("otlp-agent {tag}"), &mut command)
}

/// The label names of a series, but `__name__`.
fn label_names(series: &Value) -> BTreeSet<String> {
    series["metric"]
        .as_object()
        .map(|m| m.keys().filter(|k| *k != "__name__").cloned().collect())
        .unwrap_or_default()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// `(alertname, severity) -> (state, activeAt, value)` of the alerts of [`JOB`] about `authz`
/// or about the job itself.
async fn job_alerts(
    prometheus: &Prometheus,
) -> Result<BTreeMap<(String, String), (String, String, f64)>, String> {
    Ok(all_alerts(prometheus)
        .await?
        .iter()
        .filter(|a| a["labels"]["job"] == JOB)
        .filter(|a| !a["labels"]["server"].is_string() || a["labels"]["server"] == "authz")
        .map(|a| {
            let l = &a["labels"];
            (
                (text(&l["alertname"]), text(&l["severity"])),
                (
                    text(&a["state"]),
                    text(&a["activeAt"]),
                    text(&a["value"]).parse().unwrap_or(f64::NAN),
                ),
            )
        })
        .collect())
}

/// The replicas of [`JOB`] whose verdict reads `authz` unauthenticated (their `instance`
/// labels), and the series themselves for a failure message.
async fn unauthenticated_replicas(prometheus: &Prometheus) -> (BTreeSet<String>, Vec<Value>) {
    let series = prometheus
        .query(&format!(
            r#"instance_server:mcp_readiness_server_state:unauthenticated{{job="{JOB}", server="authz"}}"#
        ))
        .await
        .unwrap();
    let instances = series
        .iter()
        .map(|s| label(s, "instance").to_owned())
        .collect();
    (instances, series)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otlp_agents_through_vmagent_page_unauthenticated_and_when_killed_hold_the_page_and_raise_agent_stopped()
 {
    let Some(vmagent_binary) = vmagent() else {
        return;
    };
    // The committed mixin with short `for`s, the blip window at 10 s and the state window at
    // 15 s (3 minutes each as committed; a blip window shorter than the state window must not
    // let a page resolve between the two once an agent is silent) and the agent silence at 30 s
    // (10 minutes).
    let Some(rig) = Rig::new(
        "oncall-otlp",
        json!({
            "stateBlipWindow": "10s",
            "stateStaleWindow": "15s",
            "agentSilenceMinutes": SILENCE_SECS / 60.0,
            "for": {
                "MCPServerUnauthenticated": "5s",
                "MCPReadinessAgentStopped": "5s",
            },
        }),
    ) else {
        return;
    };
    let prometheus = Prometheus::start_receiving(&rig.prometheus, &rig.scratch, &rig.rules).await;
    let (mut vm, vm_addr) = start_vmagent(&vmagent_binary, &rig.scratch, &prometheus.addr).await;

    // Two replicas of one agent service: `authz` over HTTP with a token the server refuses
    // (401: unauthenticated, every call refused), `files` over stdio (ready).
    let (_authz, authz_port) = http_fixture(&rig.scratch, "otlp-authz").await;
    let config = rig.scratch.path("agent.json");
    std::fs::write(
        &config,
        json!({
            "mcpServers": { "authz": http_entry(authz_port), "files": fixture_entry(&[]) },
        })
        .to_string(),
    )
    .unwrap();
    let mut given = start_agent(
        &rig.scratch,
        "given",
        &config,
        &vm_addr,
        Some(GIVEN_INSTANCE),
    );
    let mut default = start_agent(&rig.scratch, "default", &config, &vm_addr, None);
    // The library's default `service.instance.id`: `<hostname>-<pid>`.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let default_instance = format!("{}-{}", hostname.trim(), default.pid());
    let instances = names(&[GIVEN_INSTANCE, &default_instance]);

    // 1. The series arrive as a scrape's: the same names, and exactly the scrape's labels.
    eventually(
        "the agents' series in Prometheus",
        Duration::from_secs(60),
        async || {
            let log = || {
                format!(
                    "{}\n{}",
                    rig.scratch.read("agent-given.err"),
                    std::fs::read_to_string(rig.scratch.path("vmagent.err")).unwrap_or_default()
                )
            };
            given.assert_running(log);
            default.assert_running(log);
            vm.assert_running(log);
            let states = prometheus
                .query(&format!(r#"mcp_readiness_server_state{{job="{JOB}"}} == 1"#))
                .await?;
            let found: BTreeSet<(String, String, String)> = states
                .iter()
                .map(|s| {
                    (
                        label(s, "instance").to_owned(),
                        label(s, "server").to_owned(),
                        label(s, "state").to_owned(),
                    )
                })
                .collect();
            let wanted: BTreeSet<(String, String, String)> = instances
                .iter()
                .flat_map(|i| {
                    [
                        (i.clone(), "authz".to_owned(), "unauthenticated".to_owned()),
                        (i.clone(), "files".to_owned(), "ready".to_owned()),
                    ]
                })
                .collect();
            if found != wanted {
                return Err(format!("states: {found:?}"));
            }
            for series in &states {
                assert_eq!(
                    label_names(series),
                    names(&["job", "instance", "server", "state"]),
                    "{series}"
                );
            }
            let refused = prometheus
                .query(&format!(
                    r#"mcp_readiness_tool_calls_total{{job="{JOB}", server="authz", outcome="not_ready"}} > 0"#
                ))
                .await?;
            if refused.len() != instances.len() {
                return Err(format!("refused calls: {refused:?}"));
            }
            for series in &refused {
                assert_eq!(
                    label_names(series),
                    names(&["job", "instance", "server", "tool", "outcome"]),
                    "{series}"
                );
                assert_eq!(label(series, "tool"), "echo", "{series}");
            }
            let build = prometheus
                .query(&format!(r#"mcp_readiness_build_info{{job="{JOB}"}}"#))
                .await?;
            let build_instances: BTreeSet<String> = build
                .iter()
                .map(|s| label(s, "instance").to_owned())
                .collect();
            if build_instances != instances {
                return Err(format!("build info: {build:?}"));
            }
            for series in &build {
                let extra: Vec<String> = label_names(series)
                    .into_iter()
                    .filter(|l| !["job", "instance", "version"].contains(&l.as_str()))
                    .collect();
                assert!(extra.is_empty(), "labels a scrape has not: {series}");
            }
            Ok(())
        },
    )
    .await;
    rig.progress(format_args!(
        "oncall otlp: series of {instances:?} in Prometheus"
    ));

    // 2. `MCPServerUnauthenticated` fires for `authz`, critical and warning; nothing else of
    // the job does.
    let pages = [
        ("MCPServerUnauthenticated".to_owned(), "critical".to_owned()),
        ("MCPServerUnauthenticated".to_owned(), "warning".to_owned()),
    ];
    let first = eventually(
        "the unauthenticated page",
        Duration::from_secs(90),
        async || {
            let now = job_alerts(&prometheus).await?;
            all_firing(&now, pages.iter().cloned())
        },
    )
    .await;
    let others: Vec<_> = job_alerts(&prometheus)
        .await
        .unwrap()
        .into_keys()
        .filter(|k| !pages.contains(k))
        .collect();
    assert!(others.is_empty(), "other alerts of {JOB}: {others:?}");
    rig.progress(format_args!(
        "oncall otlp: MCPServerUnauthenticated firing: {first:?}"
    ));

    // 3. SIGKILL both agents (their fixture children with them): no last export, and no
    // staleness marker ends their series. A third of the state window apart, as replicas that
    // die together report last up to an export interval apart: the first one's state leaves
    // the window while the second still reports, and it must be held as down, not dropped as
    // gone (before, its held state was lost at that moment, and the CI run failed on it).
    given.kill();
    let first_killed = unix_secs();
    tokio::time::sleep(Duration::from_secs(5)).await;
    default.kill();
    let killed = unix_secs();

    // Until MCPReadinessAgentStopped fires, and 10 s more (past the state window, the blip
    // window and the silence), every observation: the page firing with the activeAt it had.
    let check = async |now_alerts: &BTreeMap<(String, String), (String, String, f64)>| {
        for (k, active_at) in &first {
            let (state, at, _) = now_alerts
                .get(k)
                .unwrap_or_else(|| panic!("{k:?} resolved after the agents died: {now_alerts:?}"));
            assert_eq!(
                (state.as_str(), at),
                ("firing", active_at),
                "{k:?} re-fired after the agents died: {now_alerts:?}"
            );
        }
        // And each replica's own verdict, through the blip window, the state window and the
        // silence: a replica's page is never lost in between.
        let (seen, _) = unauthenticated_replicas(&prometheus).await;
        assert_eq!(
            seen,
            instances,
            "a replica's verdict lost {:.1} s after the first kill",
            unix_secs() - first_killed
        );
    };
    let stopped = ("MCPReadinessAgentStopped".to_owned(), "warning".to_owned());
    let value = eventually(
        "MCPReadinessAgentStopped for the job",
        Duration::from_secs(90),
        async || {
            let now_alerts = job_alerts(&prometheus).await?;
            check(&now_alerts).await;
            match now_alerts.get(&stopped) {
                Some((state, _, value)) if state == "firing" => Ok(*value),
                other => Err(format!("{other:?} in {now_alerts:?}")),
            }
        },
    )
    .await;
    let silent = unix_secs() - killed;
    eprintln!(
        "oncall otlp: MCPReadinessAgentStopped firing {silent:.1} s after the kill, valued {value:.1} s"
    );
    // Not before the silence and its `for` (less an evaluation interval); valued at the whole
    // silence since the last sample, which is up to an export interval and a flush before the
    // kill (the value before the fix was 15 s short: the silence past the state window).
    assert!(
        silent >= SILENCE_SECS + 5.0 - 1.0,
        "fired {silent:.1} s after the kill"
    );
    assert!(
        value > SILENCE_SECS && value <= silent + 3.0 && value >= silent - 5.0,
        "valued {value} s, {silent:.1} s after the kill"
    );
    let alert = prometheus
        .query(r#"ALERTS{alertname="MCPReadinessAgentStopped", alertstate="firing"}"#)
        .await
        .unwrap();
    assert_eq!(alert.len(), 1, "{alert:?}");
    assert_eq!(
        label_names(&alert[0]),
        names(&["alertname", "alertstate", "job", "severity"]),
        "{alert:?}"
    );
    assert_eq!(label(&alert[0], "job"), JOB);
    for _ in 0..20 {
        let now_alerts = job_alerts(&prometheus).await.unwrap();
        check(&now_alerts).await;
        assert_eq!(
            now_alerts.get(&stopped).map(|v| v.0.as_str()),
            Some("firing"),
            "{now_alerts:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The held states are the ones the agents reported last.
    let (held_instances, held) = unauthenticated_replicas(&prometheus).await;
    assert_eq!(held_instances, instances, "{held:?}");
    eprintln!(
        "oncall otlp: the page held {:.1} s after the kill ({:.1} s in all)",
        unix_secs() - killed,
        unix_secs() - rig.started
    );
    vm.kill();
    drop(prometheus);
}
