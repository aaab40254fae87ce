//! OAuth against a real authorization server on this machine: the official MCP Python SDK's
//! auth server pieces (`e2e/python/oauth_server.py`, short-lived access tokens, rotating
//! refresh tokens) protecting a Python SDK MCP server, driven through the real binary
//! (`oauth login`, `serve`). Also the expiry of a static bearer JWT.

use mcp_readiness_fixtures as common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::http::{free_port, get, request};
use common::process::{Guard, signal};
use common::serve::Serve;
use common::{Scratch, eventually};
use serde_json::{Value, json};

/// The venv `scripts/test` makes, or `None` (see `common::tools`).
pub(crate) fn python() -> Option<PathBuf> {
    common::tools::python_sdk()
}

/// The authorization + resource server on `port`, redirecting logins to `callback`.
async fn oauth_server(python: &PathBuf, scratch: &Scratch, port: u16, callback: u16) -> Guard {
    oauth_server_with(
        python,
        scratch,
        port,
        callback,
        &["--access-ttl", "3", "--refresh-ttl", "86400"],
    )
    .await
}

/// [`oauth_server`] with other options of `e2e/python/oauth_server.py` (`--iss`, `--job-secret`,
/// the token lifetimes).
pub(crate) async fn oauth_server_with(
    python: &PathBuf,
    scratch: &Scratch,
    port: u16,
    callback: u16,
    options: &[&str],
) -> Guard {
    let child = Command::new(python)
        .arg(common::repo().join("e2e/python/oauth_server.py"))
        .args(["--port", &port.to_string()])
        .args([
            "--callback",
            &format!("http://127.0.0.1:{callback}/callback"),
        ])
        .args(options)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(scratch.path("oauth-server.err")).unwrap())
        .spawn()
        .expect("start e2e/python/oauth_server.py");
    let mut guard = Guard::adopt("the OAuth server", child);
    let addr = format!("127.0.0.1:{port}");
    eventually("the OAuth server", Duration::from_secs(30), async || {
        if let Ok(Some(status)) = guard.child.try_wait() {
            panic!(
                "the OAuth server exited ({status}): {}",
                scratch.read("oauth-server.err")
            );
        }
        match get(&addr, "/.well-known/oauth-authorization-server").await {
            Ok(answer) if answer.status == 200 => Ok(()),
            Ok(answer) => Err(answer.head),
            Err(e) => Err(e),
        }
    })
    .await;
    guard
}

pub(crate) async fn stats(port: u16) -> Value {
    let answer = get(&format!("127.0.0.1:{port}"), "/admin/stats")
        .await
        .unwrap();
    serde_json::from_str(&answer.ok_text()).unwrap()
}

/// `oauth login` as a user would do it: run it, open the URL it prints (the server approves at
/// once and redirects), follow the redirect to its loopback listener; returns its stderr.
pub(crate) async fn login(
    scratch: &Scratch,
    config: &PathBuf,
    port: u16,
    callback: u16,
    tag: &str,
) -> String {
    let err = scratch.path(&format!("login-{tag}.err"));
    let out = scratch.path(&format!("login-{tag}.out"));
    let child = Command::new(common::cli())
        .args([
            "oauth",
            "login",
            "--server",
            "vault",
            "--port",
            &callback.to_string(),
            "--config",
        ])
        .arg(config)
        .env("RUST_LOG", "trace")
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start mcp-readiness oauth login");
    let mut guard = Guard::adopt("mcp-readiness oauth login", child);
    let prefix = format!("http://127.0.0.1:{port}");
    let target = eventually(
        "the authorization URL",
        Duration::from_secs(20),
        async || {
            if let Ok(Some(status)) = guard.child.try_wait() {
                panic!(
                    "login exited ({status}): {}",
                    std::fs::read_to_string(&err).unwrap_or_default()
                );
            }
            std::fs::read_to_string(&err)
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.trim().strip_prefix(&prefix).map(str::to_owned))
                .filter(|t| t.starts_with("/authorize?"))
                .ok_or_else(|| "no URL yet".to_owned())
        },
    )
    .await;
    let answer = get(&format!("127.0.0.1:{port}"), &target).await.unwrap();
    let location = answer
        .header("location")
        .unwrap_or_else(|| panic!("the authorization server redirects: {}", answer.head));
    let back = location
        .trim()
        .strip_prefix(&format!("http://127.0.0.1:{callback}"))
        .unwrap_or_else(|| panic!("redirect to the callback: {location}"));
    let answer = get(&format!("127.0.0.1:{callback}"), back).await.unwrap();
    assert_eq!(
        answer.status,
        200,
        "the callback page: {}\n{}",
        answer.head,
        answer.text()
    );
    let status = guard.exit_within(Duration::from_secs(20)).await;
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "login failed: {stderr}");
    stderr + &std::fs::read_to_string(&out).unwrap_or_default()
}

/// A JWT (signature not checked by anyone here) expiring at `exp`.
fn jwt(exp: u64) -> String {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.{}",
        b64(r#"{"alg":"HS256","typ":"JWT"}"#),
        b64(&format!(r#"{{"sub":"svc-jwt-subject-77","exp":{exp}}}"#)),
        b64("signature-bytes-jwt-42")
    )
}

/// The value of the first series of `name` whose labels include every `k="v"` of `labels`.
pub(crate) fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.strip_prefix('{')?;
        let (set, value) = rest.split_once("} ")?;
        labels
            .iter()
            .all(|l| set.contains(l))
            .then(|| value.trim().parse().ok())?
    })
}

pub(crate) fn state_of(text: &str, server: &str) -> Option<&'static str> {
    ["ready", "connecting", "unauthenticated", "absent"]
        .into_iter()
        .find(|state| {
            sample(
                text,
                "mcp_readiness_server_state",
                &[
                    &format!("server=\"{server}\""),
                    &format!("state=\"{state}\""),
                ],
            ) == Some(1.0)
        })
}

pub(crate) fn assert_no_token(what: &str, text: &str, tokens: &[String]) {
    for token in tokens {
        assert!(
            !text.contains(token.as_str()),
            "{what} shows a token:\n{}",
            text.lines()
                .filter(|l| l.contains(token.as_str()))
                .take(3)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[tokio::test]
async fn an_oauth_server_stays_ready_across_token_expiry_and_a_refused_refresh_reads_unauthenticated_until_login()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth");
    let (port, callback) = (free_port(), free_port());
    let _server = oauth_server(&python, &scratch, port, callback).await;
    let jwt_exp = 1_893_456_000; // 2030-01-01
    let bearer = jwt(jwt_exp);
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": {
                "vault": {
                    "type": "http",
                    "url": format!("http://127.0.0.1:{port}/mcp"),
                    "oauth": { "store": "tokens/vault.json", "client_id": "mcp-readiness-test", "scopes": ["tools"] }
                },
                "jwt": {
                    "type": "http",
                    "url": format!("http://127.0.0.1:{port}/mcp"),
                    "headers": { "Authorization": format!("Bearer {bearer}") }
                }
            },
            "readiness": { "ping": "500ms", "ping_timeout": "2s", "cooldown": "1s" }
        }))
        .unwrap(),
    )
    .unwrap();

    // Authorize: the tokens land in the store, readable by this user only.
    let mut printed = login(&scratch, &config, port, callback, "first").await;
    let store = scratch.path("tokens/vault.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the store is private");
    }
    assert_eq!(stats(port).await["logins"], 1);

    let (otlp, mut exports) = common::otlp::start_http_receiver().await;
    let traces = format!("http://{otlp}/v1/traces");
    let env = [
        ("RUST_LOG", "debug"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ];
    let serve = Serve::start(&scratch, &config, &env).await;
    eventually("vault ready", Duration::from_secs(20), async || {
        let text = serve.metrics().await;
        (state_of(&text, "vault") == Some("ready"))
            .then_some(())
            .ok_or(text)
    })
    .await;

    // Three access-token lifetimes: refreshed every time, ready at every scrape.
    let refreshes_before = stats(port).await["refreshes"].as_u64().unwrap();
    let until = tokio::time::Instant::now() + Duration::from_secs(9);
    let mut scrapes = 0;
    let mut metrics = String::new();
    while tokio::time::Instant::now() < until {
        metrics = serve.metrics().await;
        assert_eq!(
            state_of(&metrics, "vault"),
            Some("ready"),
            "ready throughout:\n{metrics}"
        );
        scrapes += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let refreshes = stats(port).await["refreshes"].as_u64().unwrap() - refreshes_before;
    assert!(
        refreshes >= 2,
        "the access token (3 s) was refreshed across 9 s: {refreshes}"
    );
    eprintln!("{scrapes} scrapes ready across {refreshes} refreshes");

    // The gauge says what the authorization server said.
    let expiry = "mcp_readiness_credential_expiry_timestamp_seconds";
    eventually(
        "the gauge matching the last token issued",
        Duration::from_secs(10),
        async || {
            let text = serve.metrics().await;
            let issued = stats(port).await;
            let access = sample(
                &text,
                expiry,
                &[
                    r#"server="vault""#,
                    r#"credential="access_token""#,
                    r#"renewable="true""#,
                ],
            );
            let refresh = sample(
                &text,
                expiry,
                &[
                    r#"server="vault""#,
                    r#"credential="refresh_token""#,
                    r#"renewable="false""#,
                ],
            );
            let want_access = issued["last_access_expires_at"].as_f64().unwrap();
            let want_refresh = issued["last_refresh_expires_at"].as_f64().unwrap();
            match (access, refresh) {
                (Some(a), Some(r))
                    if (a - want_access).abs() <= 1.0 && (r - want_refresh).abs() <= 1.0 =>
                {
                    Ok(())
                }
                other => Err(format!("{other:?} vs {want_access} / {want_refresh}")),
            }
        },
    )
    .await;
    assert_eq!(
        sample(
            &metrics,
            expiry,
            &[
                r#"server="jwt""#,
                r#"credential="bearer_token""#,
                r#"renewable="false""#
            ]
        ),
        Some(jwt_exp as f64),
        "a bearer JWT's exp is exported"
    );
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    assert!(
        page.contains(r#"data-credential="refresh_token" data-renewable="false""#),
        "{page}"
    );
    assert!(
        page.contains(r#"data-credential="bearer_token""#) && page.contains("2030-01-01T00:00:00Z"),
        "{page}"
    );

    // Revoked: the next refresh is refused, and the reason says what to run.
    request(
        &format!("127.0.0.1:{port}"),
        "POST",
        "/admin/revoke",
        &[],
        b"",
    )
    .await
    .unwrap();
    eventually(
        "vault unauthenticated",
        Duration::from_secs(15),
        async || {
            let text = serve.metrics().await;
            (state_of(&text, "vault") == Some("unauthenticated"))
                .then_some(())
                .ok_or(text)
        },
    )
    .await;
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    let row = page
        .lines()
        .find(|l| l.contains(r#"data-server="vault""#))
        .unwrap_or_default();
    assert!(
        row.contains("refused the refresh token"),
        "the reason says the refresh token was refused: {row}"
    );
    assert!(
        row.contains(&format!(
            "mcp-readiness oauth login --config {} --server vault",
            config.display()
        )),
        "the reason names the command to run: {row}"
    );

    // Re-authorized: the running exporter picks the new tokens up by itself.
    printed += &login(&scratch, &config, port, callback, "again").await;
    eventually("vault ready again", Duration::from_secs(20), async || {
        let text = serve.metrics().await;
        (state_of(&text, "vault") == Some("ready"))
            .then_some(())
            .ok_or(text)
    })
    .await;

    // No token, code or JWT anywhere a human or a scraper looks.
    let mut tokens: Vec<String> = stats(port).await["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    assert!(tokens.len() >= 6);
    tokens.push(bearer.clone());
    tokens.push(bearer.split('.').nth(1).unwrap().to_owned());
    let metrics = serve.metrics().await;
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert!(
        serve.stderr().contains("DEBUG"),
        "RUST_LOG=debug took effect"
    );
    assert_no_token("/metrics", &metrics, &tokens);
    assert_no_token("the status page", &page, &tokens);
    assert_no_token("serve's stdout", &serve.stdout(), &tokens);
    assert_no_token("serve's stderr", &serve.stderr(), &tokens);
    assert_no_token("login's output", &printed, &tokens);
    let mut spans = String::new();
    while let Ok(export) = exports.try_recv() {
        spans += &format!("{export:?}");
    }
    assert!(
        spans.contains("initialize"),
        "serve exported its spans over OTLP"
    );
    assert_no_token("exported spans", &spans, &tokens);
}

/// `check` of `config` with a short budget; returns its stdout (the table and the hand-off note).
async fn check_output(config: &std::path::Path) -> String {
    let run = common::run::run(
        &[
            "check",
            "--config",
            config.to_str().unwrap(),
            "--budget",
            "5s",
            "--poll",
            "250ms",
        ],
        &[("RUST_LOG", "off")],
    )
    .await;
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    run.stdout
}

/// The `vault` row of `check`'s table reads `unauthenticated`, and the output names `fix`, never
/// the wrong system or a Rust type.
fn assert_unauthenticated_with(output: &str, fix: &[&str]) {
    let row = output
        .lines()
        .find(|l| l.starts_with("vault"))
        .unwrap_or_else(|| panic!("no row for `vault`:\n{output}"));
    assert!(row.contains("unauthenticated"), "{output}");
    for part in fix {
        assert!(output.contains(part), "`{part}` missing:\n{output}");
    }
    for wrong in ["MCP streamable-HTTP endpoint", "rmcp::", "Worker<"] {
        assert!(!output.contains(wrong), "`{wrong}` in:\n{output}");
    }
}

#[tokio::test]
async fn a_credential_store_that_is_missing_open_to_others_or_not_json_reads_unauthenticated_with_its_own_fix()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-store");
    let (port, callback) = (free_port(), free_port());
    let _server = oauth_server(&python, &scratch, port, callback).await;
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        json!({
            "mcpServers": { "vault": {
                "type": "http",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "oauth": { "store": "tokens/vault.json", "client_id": "mcp-readiness-test", "scopes": ["tools"] }
            } }
        })
        .to_string(),
    )
    .unwrap();
    let store = scratch.path("tokens/vault.json");

    // Missing: nothing to send; the server's 401 and the store say what to run.
    let missing = check_output(&config).await;
    assert_unauthenticated_with(&missing, &["holds no tokens", "oauth login"]);

    // Open to other users: refused before use, with the chmod to run.
    login(&scratch, &config, port, callback, "store").await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = check_output(&config).await;
        assert_unauthenticated_with(&open, &["is open to other users (mode 0644)", "chmod 600"]);
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // Not JSON: the line and column, never the content.
    std::fs::write(&store, "{\n  \"access_token\": oops").unwrap();
    let broken = check_output(&config).await;
    assert_unauthenticated_with(&broken, &["is not a credential store", "line 2 column"]);
    assert!(!broken.contains("oops"), "{broken}");
}
