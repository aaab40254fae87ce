//! Good files and what they configure: stdio and HTTP servers, their order, the readiness block
//! and its defaults, steps, per-server budgets, warnings; and the shipped example.

use super::*;

#[test]
fn a_stdio_server_gets_its_command_args_env_and_a_cwd_relative_to_the_file() {
    let config = parse(&with_server(
        r#"{ "command": "npx", "args": ["-y", "srv@1", "--host=${HOST}"], "env": { "API_KEY": "${GITHUB_TOKEN}" }, "cwd": "work" }"#,
    ))
    .unwrap();
    let TransportSpec::Stdio {
        command,
        args,
        env,
        cwd,
    } = &config.servers[0].transport
    else {
        panic!("expected stdio, got {:?}", config.servers[0]);
    };
    assert_eq!(command, "npx");
    assert_eq!(args, &["-y", "srv@1", "--host=127.0.0.1:8080"]);
    assert_eq!(env["API_KEY"].expose(), TOKEN);
    assert_eq!(cwd.as_deref(), Some(PathBuf::from("conf/work").as_path()));
}

#[test]
fn an_http_server_is_recognised_by_type_or_by_url_alone() {
    for entry in [
        r#"{ "type": "http", "url": "http://${HOST}/mcp" }"#,
        r#"{ "type": "streamable-http", "url": "http://${HOST}/mcp" }"#,
        r#"{ "url": "http://${HOST}/mcp", "headers": {} }"#,
    ] {
        let config = parse(&with_server(entry)).unwrap();
        let TransportSpec::Http { url, headers, .. } = &config.servers[0].transport else {
            panic!("{entry}: expected http");
        };
        assert_eq!(url.expose(), "http://127.0.0.1:8080/mcp", "{entry}");
        assert!(headers.is_empty());
    }
}

#[test]
fn servers_keep_the_order_of_the_file() {
    let config = parse(
        r#"{ "mcpServers": { "zeta": { "command": "z" }, "alpha": { "url": "http://a" }, "mid": { "command": "m" } } }"#,
    )
    .unwrap();
    let names: Vec<&str> = config.servers.iter().map(|s| &*s.name).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
}

#[test]
fn a_missing_readiness_block_gives_the_documented_defaults() {
    let config = parse(r#"{ "mcpServers": {} }"#).unwrap();
    let r = &config.readiness;
    assert_eq!(r.budget, Budget::default());
    assert_eq!(r.budget.wait(), Duration::from_secs(20));
    assert_eq!(r.budget.poll(), Duration::from_secs(2));
    assert_eq!(r.cooldown, Duration::from_secs(60));
    assert_eq!(r.ping, Some(Duration::from_secs(30)));
    assert_eq!(r.connect_timeout, Duration::from_secs(30));
    assert_eq!(r.call_timeout, Duration::from_secs(60));
    assert!(r.steps.is_empty());
    assert!(config.servers.is_empty() && config.warnings.is_empty());
}

#[test]
fn readiness_durations_parse_in_humantime_and_ping_can_be_turned_off() {
    let config = parse(&with_readiness(
        r#"{ "budget": "1m30s", "poll": "500ms", "cooldown": "0s", "ping": "off", "connect_timeout": "${CT:-15s}", "call_timeout": "2m" }"#,
    ))
    .unwrap();
    let r = &config.readiness;
    assert_eq!(r.budget.wait(), Duration::from_secs(90));
    assert_eq!(r.budget.poll(), Duration::from_millis(500));
    assert_eq!(r.cooldown, Duration::ZERO);
    assert_eq!(r.ping, None);
    assert_eq!(r.connect_timeout, Duration::from_secs(15));
    assert_eq!(r.call_timeout, Duration::from_secs(120));
}

#[test]
fn steps_default_to_required_and_accept_a_null_fallback() {
    let config = parse(&with_readiness(
        r#"{ "steps": [ { "id": "a", "tool": "mcp__s__read" }, { "id": "b", "tool": "mcp__s__write", "required": false, "fallback": null }, { "id": "c", "tool": "mcp__s__put", "required": false, "fallback": "write-file" } ] }"#,
    ))
    .unwrap();
    let steps = &config.readiness.steps;
    assert_eq!(steps.len(), 3);
    assert!(steps[0].required && steps[0].fallback.is_none());
    assert_eq!(
        (steps[0].tool.server(), steps[0].tool.tool()),
        ("s", "read")
    );
    assert!(!steps[1].required && steps[1].fallback.is_none());
    assert_eq!(steps[2].fallback.as_deref(), Some("write-file"));
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn a_per_server_budget_overrides_the_global_one_for_that_server_only() {
    let config = parse(
        r#"{ "mcpServers": { "warehouse": { "command": "wh" }, "files": { "command": "fs" } },
             "readiness": { "budget": "20s", "poll": "1s", "servers": { "warehouse": { "budget": "45s" } } } }"#,
    )
    .unwrap();
    let readiness = &config.readiness;
    assert_eq!(
        readiness.servers["warehouse"].budget,
        Some(Budget::try_new(Duration::from_secs(45), Duration::from_secs(1)).unwrap())
    );
    assert_eq!(
        readiness.budget_for("warehouse").wait(),
        Duration::from_secs(45)
    );
    assert_eq!(
        readiness.budget_for("warehouse").poll(),
        Duration::from_secs(1)
    );
    assert_eq!(
        readiness.budget_for("files").wait(),
        Duration::from_secs(20)
    );
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    // Without any override every server has the global budget.
    let plain = parse(&with_readiness(r#"{ "budget": "5s", "poll": "1s" }"#)).unwrap();
    assert!(plain.readiness.servers.is_empty());
    assert_eq!(
        plain.readiness.budget_for("s").wait(),
        Duration::from_secs(5)
    );
}

#[test]
fn a_per_server_override_for_an_unconfigured_server_is_accepted_with_a_warning() {
    let config = parse(&with_readiness(
        r#"{ "servers": { "nope": { "budget": "45s" } } }"#,
    ))
    .unwrap();
    assert_eq!(config.warnings.len(), 1);
    assert_eq!(
        config.warnings[0].to_string(),
        "conf/mcp.json: readiness.servers.nope: server `nope` is not in `mcpServers`: these overrides apply to nothing"
    );
}

#[test]
fn a_step_on_an_unconfigured_server_is_accepted_with_a_warning() {
    let config = parse(&with_readiness(
        r#"{ "steps": [ { "id": "a", "tool": "mcp__slack__post" }, { "id": "b", "tool": "mcp__s__t", "fallback": "x" } ] }"#,
    ))
    .unwrap();
    assert_eq!(config.readiness.steps[0].tool.server(), "slack");
    let warnings: Vec<String> = config.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "conf/mcp.json: readiness.steps[0].tool: server `slack` is not in `mcpServers`: this step will resolve as absent",
            "conf/mcp.json: readiness.steps[1].fallback: a required step aborts instead of falling back: set \"required\": false to use this fallback",
        ]
    );
}

#[test]
fn the_shipped_example_parses_with_a_github_token() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mcp.json");
    let config = Config::load_with_env(path, env).unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let names: Vec<&str> = config.servers.iter().map(|s| &*s.name).collect();
    assert_eq!(names, ["files", "github"]);
    let TransportSpec::Http { url, headers, .. } = &config.servers[1].transport else {
        panic!("github should be http");
    };
    assert_eq!(url.expose(), "https://example.invalid/mcp");
    assert_eq!(
        headers["Authorization"],
        Secret::new(format!("Bearer {TOKEN}"))
    );
    let steps: Vec<(&str, &str, bool, Option<&str>)> = config
        .readiness
        .steps
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.tool.as_str(),
                s.required,
                s.fallback.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("fetch-issues", "mcp__github__search_issues", true, None),
            (
                "archive",
                "mcp__files__write_file",
                false,
                Some("write-local")
            ),
        ]
    );

    let err = Config::load_with_env(path, |_| None).unwrap_err();
    assert_eq!(
        err.json_path(),
        Some("mcpServers.github.headers.Authorization")
    );
}
