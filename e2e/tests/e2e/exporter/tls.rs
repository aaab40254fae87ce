//! HTTPS end to end, with the real `serve`: the fixture server over TLS with a certificate made
//! here (a test CA that `serve` trusts through `SSL_CERT_FILE`, a leaf whose notAfter is known),
//! probed with `/probe?…&debug=true` (a ready target behind a module's token, and the same server
//! without one: phases, HTTP statuses, verdicts, no secret), and supervised by the same `serve`
//! (`mcp_readiness_tls_certificate_expiry_timestamp_seconds`; none for plain HTTP; gone with the
//! server).

use std::path::PathBuf;

use super::*;

/// 2031-01-02T00:00:00Z: the notAfter of the server certificate made here.
const NOT_AFTER: f64 = 1_925_078_400.0;

struct TestPki {
    /// The CA's certificate (PEM), the only root `serve` trusts here.
    ca_pem: PathBuf,
    /// The server's certificate and PKCS#8 key (DER), for the fixture.
    cert_der: PathBuf,
    key_der: PathBuf,
    /// A certificate of the same CA and key that expired on 2020-01-01 ([`EXPIRED`]).
    expired_der: PathBuf,
}

/// 2020-01-01T00:00:00Z: the notAfter of the expired certificate.
const EXPIRED: f64 = 1_577_836_800.0;

/// A test CA and a certificate it signed for `localhost` and `127.0.0.1`, valid until
/// [`NOT_AFTER`].
fn pki(scratch: &Scratch) -> TestPki {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType, date_time_ymd,
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "mcp-readiness test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    leaf.subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    leaf.not_after = date_time_ymd(2031, 1, 2);
    let cert = leaf
        .signed_by(&key, &Issuer::from_params(&ca, &ca_key))
        .unwrap();
    let mut old = leaf.clone();
    old.not_before = date_time_ymd(2019, 1, 1);
    old.not_after = date_time_ymd(2020, 1, 1);
    let expired = old
        .signed_by(&key, &Issuer::from_params(&ca, &ca_key))
        .unwrap();
    let pki = TestPki {
        ca_pem: scratch.path("ca.pem"),
        cert_der: scratch.path("server.der"),
        key_der: scratch.path("server.key.der"),
        expired_der: scratch.path("expired.der"),
    };
    std::fs::write(&pki.expired_der, expired.der()).unwrap();
    std::fs::write(&pki.ca_pem, ca_cert.pem()).unwrap();
    std::fs::write(&pki.cert_der, cert.der()).unwrap();
    std::fs::write(&pki.key_der, key.serialize_der()).unwrap();
    pki
}

/// The phase lines of a debug log: `(name, rest of the line)`.
fn phases(log: &str) -> Vec<(String, String)> {
    log.lines()
        .filter_map(|l| l.strip_prefix("phase "))
        .map(|l| {
            let (name, rest) = l.split_once(' ').unwrap_or((l, ""));
            (name.to_owned(), rest.trim().to_owned())
        })
        .collect()
}

fn phase<'a>(phases: &'a [(String, String)], name: &str) -> &'a str {
    phases
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, rest)| rest.as_str())
        .unwrap_or_else(|| panic!("no phase {name} in {phases:?}"))
}

/// What `/probe?target=<target>&debug=true` of the exporter at `addr` answers (`target` URL-encoded):
/// the probe's log, a blank line, its metrics.
async fn debug_probe(addr: &str, target: &str) -> String {
    let query = format!("/probe?target={target}&debug=true");
    mcp_readiness_fixtures::http::get(addr, &query)
        .await
        .unwrap()
        .ok_text()
}

/// The fixture over HTTPS with the certificate `cert` and its key `key` (both DER), wanting
/// `RIGHT_TOKEN`.
async fn https_fixture(scratch: &Scratch, cert: &Path, key: &Path) -> (Guard, u16) {
    let env = [
        ("FIXTURE_TLS_CERT", cert.to_str().unwrap()),
        ("FIXTURE_TLS_KEY", key.to_str().unwrap()),
    ];
    mcp_readiness_fixtures::configure::http_fixture_with_env(scratch, RIGHT_TOKEN, &env).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_mcp_server_is_explained_by_a_debug_probe_and_its_certificate_expiry_exported_for_probes_and_supervision()
 {
    let scratch = Scratch::new("tls-e2e");
    let pki = pki(&scratch);
    let (_https, port) = https_fixture(&scratch, &pki.cert_der, &pki.key_der).await;
    let expired_scratch = Scratch::new("tls-e2e-expired");
    let (_expired, expired_port) =
        https_fixture(&expired_scratch, &pki.expired_der, &pki.key_der).await;
    let plain_scratch = Scratch::new("tls-e2e-plain");
    let (_plain, plain_port) = http_fixture(&plain_scratch).await;
    let bearer = json!({ "Authorization": "Bearer ${MCP_RIGHT_TOKEN}" });
    let servers = json!({
        "secure": { "type": "http", "url": format!("https://localhost:{port}/mcp"), "headers": bearer },
        "plain": { "type": "http", "url": format!("http://127.0.0.1:{plain_port}/mcp"), "headers": bearer },
    });
    let readiness = json!({ "probe": {
        "targets": ["https://127.0.0.1:*/mcp"],
        "modules": { "team": { "targets": ["https://localhost:*/mcp"], "headers": bearer } }
    } });
    let config = write_config(&scratch, "serve.json", servers.clone(), readiness.clone());
    let mut env: Vec<(&str, &str)> = SERVE_ENV.to_vec();
    env.push(("SSL_CERT_FILE", pki.ca_pem.to_str().unwrap()));
    let serve = Serve::start(&scratch, &config, &env).await;

    // A ready target: localhost is resolved, connected, the TLS handshake made, then MCP.
    let ready_url =
        mcp_readiness_fixtures::http::url_encode(&format!("https://localhost:{port}/mcp"));
    let answer = mcp_readiness_fixtures::http::get(
        &serve.addr,
        &format!("/probe?target={ready_url}&module=team&server=secure-probe&debug=true"),
    )
    .await
    .unwrap();
    let body = answer.ok_text();
    assert_eq!(
        answer.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let (log, metrics) = body.split_once("\n\n").expect("the log, then the metrics");
    let found = phases(log);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["resolve", "connect", "tls", "handshake", "tools_list"],
        "{log}"
    );
    for (name, rest) in &found {
        assert!(
            rest.starts_with("started at") && rest.contains(" ms, took ") && rest.contains(": ok"),
            "phase {name}: {rest}\n{log}"
        );
    }
    assert!(phase(&found, "resolve").contains("localhost: "), "{log}");
    assert!(
        phase(&found, "tls").contains("certificate valid until 2031-01-02T00:00:00Z"),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.starts_with("http POST tools/list -> HTTP 2xx ")),
        "{log}"
    );
    assert!(log.contains("verdict: ready (attempt ok)"), "{log}");
    assert!(
        log.contains("tls certificate: the leaf certificate is valid until 2031-01-02T00:00:00Z"),
        "{log}"
    );
    let probed = Scrape::parse(metrics);
    assert_eq!(
        probed.get(
            "mcp_readiness_tls_certificate_expiry_timestamp_seconds",
            &[("server", "secure-probe")]
        ),
        Some(NOT_AFTER),
        "{metrics}"
    );
    for phase in ["resolve", "connect", "tls", "handshake", "tools_list"] {
        let seconds = probed
            .get(
                "mcp_readiness_probe_phase_duration_seconds",
                &[("phase", phase)],
            )
            .unwrap_or_else(|| panic!("no {phase} duration:\n{metrics}"));
        assert!((0.0..10.0).contains(&seconds), "{phase}: {seconds}");
    }
    assert_eq!(probed.get("mcp_readiness_probe_success", &[]), Some(1.0));

    // A failing target: the same server by its IP address (nothing to resolve) with the default
    // module, which sends no token: TLS is fine, the MCP server answers 401.
    let refused_url =
        mcp_readiness_fixtures::http::url_encode(&format!("https://127.0.0.1:{port}/mcp"));
    let refused = debug_probe(&serve.addr, &refused_url).await;
    let (log, metrics) = refused.split_once("\n\n").unwrap();
    let found = phases(log);
    assert!(
        phase(&found, "resolve").contains("127.0.0.1 is an IP address: nothing to resolve"),
        "{log}"
    );
    assert!(phase(&found, "tls").contains(": ok"), "{log}");
    assert!(phase(&found, "handshake").contains(": failed ("), "{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("http POST ") && l.contains("-> HTTP 401")),
        "{log}"
    );
    assert!(
        log.contains("verdict: unauthenticated (attempt unauthorized)"),
        "{log}"
    );
    assert!(log.contains("module: default"), "{log}");
    let probed = Scrape::parse(metrics);
    assert_eq!(probed.get("mcp_readiness_probe_success", &[]), Some(0.0));
    assert_eq!(
        probed.get(
            "mcp_readiness_tls_certificate_expiry_timestamp_seconds",
            &[("server", &format!("127.0.0.1:{port}"))]
        ),
        Some(NOT_AFTER),
        "{metrics}"
    );
    // An expired certificate: the TLS phase fails and says so; its end is exported all the same
    // (the alert's "has expired"), and the verdict is the handshake's own: absent.
    let expired_url =
        mcp_readiness_fixtures::http::url_encode(&format!("https://127.0.0.1:{expired_port}/mcp"));
    let expired = debug_probe(&serve.addr, &expired_url).await;
    let (log, metrics) = expired.split_once("\n\n").unwrap();
    let tls = phase(&phases(log), "tls").to_owned();
    assert!(
        tls.contains(": failed (the TLS handshake failed")
            && tls.contains("valid until 2020-01-01T00:00:00Z"),
        "{log}"
    );
    assert!(log.contains("verdict: absent"), "{log}");
    let probed = Scrape::parse(metrics);
    assert_eq!(
        probed.get(
            "mcp_readiness_tls_certificate_expiry_timestamp_seconds",
            &[("server", &format!("127.0.0.1:{expired_port}"))]
        ),
        Some(EXPIRED),
        "{metrics}"
    );
    for text in [&body, &refused, &expired] {
        assert_no_token("a debug probe", text);
    }

    // Supervised: the HTTPS server's certificate, set at its connect; none for plain HTTP.
    let scrape = settle(
        &serve,
        &[("secure", "ready"), ("plain", "ready")],
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(
        scrape.get(
            "mcp_readiness_tls_certificate_expiry_timestamp_seconds",
            &[("server", "secure")]
        ),
        Some(NOT_AFTER),
        "{}",
        scrape.text
    );
    assert_eq!(
        scrape.get(
            "mcp_readiness_tls_certificate_expiry_timestamp_seconds",
            &[("server", "plain")]
        ),
        None,
        "{}",
        scrape.text
    );

    // The server goes away (a reload without it): its certificate's series goes with it.
    let mut remaining = servers;
    remaining.as_object_mut().unwrap().remove("secure");
    write_config(&scratch, "serve.json", remaining, readiness);
    signal(serve.guard.pid(), "HUP");
    let gone = serve
        .scrape_until(Duration::from_secs(20), |text| {
            !text.contains(r#"server="secure""#)
        })
        .await;
    assert!(
        !gone.contains("mcp_readiness_tls_certificate_expiry_timestamp_seconds{"),
        "{gone}"
    );
    assert_no_token("serve's stderr", &serve.stderr());
}
