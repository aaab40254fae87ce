//! Bad files, each with its exact error; secrets never in errors or `Debug`; an unreadable file
//! names its path and what to check; a path that is not a regular file (a FIFO, a device, a
//! directory) is refused without blocking.

use super::*;

#[test]
fn every_bad_file_gives_its_exact_error() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "syntax error",
            "{ \"mcpServers\": {,} }".into(),
            "conf/mcp.json:1:18: invalid JSON: key must be a string",
        ),
        (
            "syntax error on a later line",
            "{\n  \"mcpServers\": {}\n  \"readiness\": {}\n}".into(),
            "conf/mcp.json:3:3: invalid JSON: expected `,` or `}`",
        ),
        (
            "truncated file",
            "{ \"mcpServers\": {".into(),
            "conf/mcp.json:1:17: invalid JSON: EOF while parsing an object",
        ),
        (
            "top level not an object",
            "[]".into(),
            "conf/mcp.json: expected the top level (a JSON object), found an array",
        ),
        (
            "no mcpServers",
            "{}".into(),
            "conf/mcp.json: mcpServers: missing: the file needs an `mcpServers` object (it may be empty)",
        ),
        (
            "unknown top-level key",
            r#"{ "mcpServers": {}, "mcp_servers": {} }"#.into(),
            "conf/mcp.json: mcp_servers: unknown key (did you mean `mcpServers`?): the top level allows only `mcpServers`, `readiness`",
        ),
        (
            "duplicate server",
            r#"{ "mcpServers": { "a": { "command": "x" }, "a": { "command": "y" } } }"#.into(),
            "conf/mcp.json: mcpServers.a: duplicate key: each key may appear only once in an object",
        ),
        (
            "server name that cannot be a tool prefix",
            r#"{ "mcpServers": { "a__b": { "command": "x" } } }"#.into(),
            "conf/mcp.json: mcpServers.a__b: a server name must fit in `mcp__<server>__<tool>`: use letters, digits, `-` and single `_` (no leading, trailing or doubled `_`)",
        ),
        (
            "server not an object",
            with_server(r#""npx""#),
            "conf/mcp.json: mcpServers.s: expected a server (a JSON object), found a string",
        ),
        (
            "neither command nor url",
            with_server("{}"),
            "conf/mcp.json: mcpServers.s: expected `command` (a server started as a child process) or `url` (a streamable-HTTP server)",
        ),
        (
            "both command and url",
            with_server(r#"{ "command": "x", "url": "http://h" }"#),
            r#"conf/mcp.json: mcpServers.s: has both `command` and `url`: keep one, or write "type": "stdio" or "type": "http""#,
        ),
        (
            "unknown type",
            with_server(r#"{ "type": "websocket", "url": "http://h" }"#),
            r#"conf/mcp.json: mcpServers.s.type: expected "stdio", "http" or "streamable-http""#,
        ),
        (
            "sse type",
            with_server(r#"{ "type": "sse", "url": "http://h" }"#),
            r#"conf/mcp.json: mcpServers.s.type: the legacy SSE transport is not supported: point "url" at the server's streamable-HTTP endpoint and write "type": "http""#,
        ),
        (
            "empty command",
            with_server(r#"{ "command": "" }"#),
            "conf/mcp.json: mcpServers.s.command: expected the program to run, found an empty string",
        ),
        (
            "command empty after expansion",
            with_server(r#"{ "command": "${EMPTY}" }"#),
            "conf/mcp.json: mcpServers.s.command: expected the program to run, found an empty string",
        ),
        (
            "stdio type without command",
            with_server(r#"{ "type": "stdio" }"#),
            "conf/mcp.json: mcpServers.s.command: missing: a stdio server needs the program to run",
        ),
        (
            "command not a string",
            with_server(r#"{ "command": ["npx"] }"#),
            "conf/mcp.json: mcpServers.s.command: expected a string, found an array",
        ),
        (
            "args not strings",
            with_server(r#"{ "command": "x", "args": ["a", 2] }"#),
            "conf/mcp.json: mcpServers.s.args[1]: expected a string, found a number",
        ),
        (
            "misspelt key with a hint",
            with_server(r#"{ "command": "x", "arg": [] }"#),
            "conf/mcp.json: mcpServers.s.arg: unknown key (did you mean `args`?): a stdio server allows only `type`, `command`, `args`, `env`, `cwd`",
        ),
        (
            "http key on a stdio server",
            with_server(r#"{ "command": "x", "headers": {} }"#),
            "conf/mcp.json: mcpServers.s.headers: unknown key: a stdio server allows only `type`, `command`, `args`, `env`, `cwd`",
        ),
        (
            "stdio key on an http server",
            with_server(r#"{ "type": "http", "url": "http://h", "env": {} }"#),
            "conf/mcp.json: mcpServers.s.env: unknown key: a streamable-HTTP server allows only `type`, `url`, `headers`, `oauth`",
        ),
        (
            "env name with =",
            with_server(r#"{ "command": "x", "env": { "A=B": "1" } }"#),
            r#"conf/mcp.json: mcpServers.s.env["A=B"]: expected an environment variable name without `=`"#,
        ),
        (
            "env value not a string",
            with_server(r#"{ "command": "x", "env": { "PORT": 8080 } }"#),
            "conf/mcp.json: mcpServers.s.env.PORT: expected a string, found a number",
        ),
        (
            "empty cwd",
            with_server(r#"{ "command": "x", "cwd": "" }"#),
            "conf/mcp.json: mcpServers.s.cwd: expected a directory, found an empty string: remove `cwd` to use the current directory",
        ),
        (
            "missing url",
            with_server(r#"{ "type": "http" }"#),
            "conf/mcp.json: mcpServers.s.url: missing: a streamable-HTTP server needs the endpoint URL",
        ),
        (
            "missing variable",
            with_server(
                r#"{ "url": "https://h/mcp", "headers": { "Authorization": "Bearer ${GITLAB_TOKEN}" } }"#,
            ),
            "conf/mcp.json: mcpServers.s.headers.Authorization: environment variable `GITLAB_TOKEN` is not set: set it, or write `${GITLAB_TOKEN:-default}` to give a default",
        ),
        (
            "unterminated variable",
            with_server(r#"{ "command": "x", "args": ["--port=${PORT"] }"#),
            "conf/mcp.json: mcpServers.s.args[0]: `${` at character 7 is not closed: write `${NAME}` or `${NAME:-default}`, or `$${` for a literal `${`",
        ),
        (
            "bad variable name",
            with_server(r#"{ "command": "${1PATH}" }"#),
            "conf/mcp.json: mcpServers.s.command: `${...}` at character 0 does not name a variable: expected `${NAME}` or `${NAME:-default}` with NAME made of letters, digits and `_`",
        ),
        (
            "bad header name",
            with_server(r#"{ "url": "http://h", "headers": { "X Token": "1" } }"#),
            r#"conf/mcp.json: mcpServers.s.headers["X Token"]: expected an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)"#,
        ),
        (
            "header injection through a variable",
            with_server(r#"{ "url": "http://h", "headers": { "X-Id": "${NEWLINE}" } }"#),
            "conf/mcp.json: mcpServers.s.headers.X-Id: the value contains a line break or NUL once expanded: check the variable it uses",
        ),
        (
            "readiness not an object",
            with_readiness("[]"),
            "conf/mcp.json: readiness: expected `readiness` (a JSON object), found an array",
        ),
        (
            "unknown readiness key",
            with_readiness(r#"{ "timeout": "5s" }"#),
            "conf/mcp.json: readiness.timeout: unknown key: `readiness` allows only `budget`, `poll`, `cooldown`, `ping`, `ping_timeout`, `connect_timeout`, `call_timeout`, `steps`, `servers`, `probe`, `schedule`",
        ),
        (
            "unknown schedule key",
            with_readiness(r#"{ "schedule": { "cron": "0 3 * * *" } }"#),
            "conf/mcp.json: readiness.schedule.cron: unknown key: `readiness.schedule` allows only `every`",
        ),
        (
            "zero schedule",
            with_readiness(r#"{ "schedule": { "every": "0s" } }"#),
            "conf/mcp.json: readiness.schedule.every: expected a positive duration: how long from one run to the next",
        ),
        (
            "bad duration",
            with_readiness(r#"{ "budget": "20 sekunden" }"#),
            r#"conf/mcp.json: readiness.budget: expected a duration like "20s", "1m30s" or "500ms", found "20 sekunden": unknown time unit "sekunden", supported units: ns, us/µs, ms, sec, min, hours, days, weeks, months, years (and few variations)"#,
        ),
        (
            "duration without unit",
            with_readiness(r#"{ "poll": "2" }"#),
            r#"conf/mcp.json: readiness.poll: expected a duration like "20s", "1m30s" or "500ms", found "2": time unit needed, for example 2sec or 2ms"#,
        ),
        (
            "duration as a number",
            with_readiness(r#"{ "cooldown": 60 }"#),
            r#"conf/mcp.json: readiness.cooldown: expected a duration like "20s", "1m30s" or "500ms", found a number"#,
        ),
        (
            "duration from a missing variable",
            with_readiness(r#"{ "budget": "${BUDGET}" }"#),
            "conf/mcp.json: readiness.budget: environment variable `BUDGET` is not set: set it, or write `${BUDGET:-default}` to give a default",
        ),
        (
            "poll longer than budget",
            with_readiness(r#"{ "budget": "5s", "poll": "10s" }"#),
            "conf/mcp.json: readiness.poll: poll interval 10s is longer than the wait budget 5s: use a poll no longer than the budget",
        ),
        (
            "zero poll",
            with_readiness(r#"{ "poll": "0s" }"#),
            "conf/mcp.json: readiness.poll: poll interval must be greater than zero (wait budget 20s): use e.g. 2s",
        ),
        (
            "budget shorter than the default poll",
            with_readiness(r#"{ "budget": "1s" }"#),
            "conf/mcp.json: readiness.budget: poll interval 2s is longer than the wait budget 1s: use a poll no longer than the budget",
        ),
        (
            "zero ping",
            with_readiness(r#"{ "ping": "0s" }"#),
            r#"conf/mcp.json: readiness.ping: expected a positive interval: write "off" to disable health pings"#,
        ),
        (
            "zero connect timeout",
            with_readiness(r#"{ "connect_timeout": "0s" }"#),
            "conf/mcp.json: readiness.connect_timeout: expected a positive duration: a zero timeout fails every attempt",
        ),
        (
            "steps not an array",
            with_readiness(r#"{ "steps": {} }"#),
            "conf/mcp.json: readiness.steps: expected an array of steps, found an object",
        ),
        (
            "unknown step key",
            with_readiness(
                r#"{ "steps": [ { "id": "a", "tool": "mcp__s__t", "optional": true } ] }"#,
            ),
            "conf/mcp.json: readiness.steps[0].optional: unknown key: a step allows only `id`, `tool`, `required`, `fallback`",
        ),
        (
            "step without id",
            with_readiness(r#"{ "steps": [ { "tool": "mcp__s__t" } ] }"#),
            "conf/mcp.json: readiness.steps[0].id: missing: every step needs an `id` and a `tool`",
        ),
        (
            "duplicate step id",
            with_readiness(
                r#"{ "steps": [ { "id": "a", "tool": "mcp__s__t" }, { "id": "b", "tool": "mcp__s__t" }, { "id": "a", "tool": "mcp__s__u" } ] }"#,
            ),
            "conf/mcp.json: readiness.steps[2].id: duplicate step id `a` (first used at readiness.steps[0]): give each step its own id",
        ),
        (
            "step tool not qualified",
            with_readiness(r#"{ "steps": [ { "id": "a", "tool": "Bash" } ] }"#),
            "conf/mcp.json: readiness.steps[0].tool: expected a tool named `mcp__<server>__<tool>`, found `Bash`",
        ),
        (
            "servers not an object",
            with_readiness(r#"{ "servers": ["s"] }"#),
            "conf/mcp.json: readiness.servers: expected `readiness.servers` (server name → overrides) (a JSON object), found an array",
        ),
        (
            "a server's overrides not an object",
            with_readiness(r#"{ "servers": { "s": "45s" } }"#),
            "conf/mcp.json: readiness.servers.s: expected a server's overrides (a JSON object), found a string",
        ),
        (
            "unknown per-server key",
            with_readiness(r#"{ "servers": { "s": { "budgte": "45s" } } }"#),
            "conf/mcp.json: readiness.servers.s.budgte: unknown key (did you mean `budget`?): a server's overrides allows only `budget`",
        ),
        (
            "bad per-server budget",
            with_readiness(r#"{ "servers": { "google-drive": { "budget": 45 } } }"#),
            r#"conf/mcp.json: readiness.servers.google-drive.budget: expected a duration like "20s", "1m30s" or "500ms", found a number"#,
        ),
        (
            "per-server budget shorter than the poll",
            with_readiness(r#"{ "poll": "2s", "servers": { "s": { "budget": "1s" } } }"#),
            "conf/mcp.json: readiness.servers.s.budget: poll interval 2s is longer than the wait budget 1s: use a poll no longer than the budget (`readiness.poll`)",
        ),
        (
            "per-server budget from a missing variable",
            with_readiness(r#"{ "servers": { "s": { "budget": "${S_BUDGET}" } } }"#),
            "conf/mcp.json: readiness.servers.s.budget: environment variable `S_BUDGET` is not set: set it, or write `${S_BUDGET:-default}` to give a default",
        ),
        (
            "required not a boolean",
            with_readiness(
                r#"{ "steps": [ { "id": "a", "tool": "mcp__s__t", "required": "yes" } ] }"#,
            ),
            "conf/mcp.json: readiness.steps[0].required: expected true or false, found a string",
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, expected) in &cases {
        match parse(text) {
            Ok(_) => failures.push(format!("{name}: parsed, expected {expected:?}")),
            Err(err) if err.to_string() != *expected => {
                failures.push(format!(
                    "{name}:\n   got {:?}\n  want {expected:?}",
                    err.to_string()
                ));
            }
            Err(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn secrets_never_appear_in_errors_or_debug_output() {
    let text = r#"{ "mcpServers": {
        "gh": { "url": "https://bob:${GITHUB_TOKEN}@h.example/mcp?token=${GITHUB_TOKEN}", "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" } },
        "local": { "command": "srv", "env": { "TOKEN": "${GITHUB_TOKEN}" } }
    } }"#;
    let config = parse(text).unwrap();
    let debug = format!("{config:?} {config:#?}");
    assert!(!debug.contains(TOKEN), "token in Debug: {debug}");
    assert!(!debug.contains("bob"), "URL user in Debug: {debug}");
    assert!(debug.contains("[redacted]"));

    // Errors after a secret was expanded, and errors about the secret-bearing values themselves.
    for bad in [
        text.replace(r#""command": "srv""#, r#""command": """#),
        text.replace("\"Authorization\"", "\"Author ization\""),
        text.replace("Bearer ${GITHUB_TOKEN}", "${GITHUB_TOKEN}${NEWLINE}"),
    ] {
        let err = parse(&bad).expect_err("each variant is invalid");
        let shown = format!("{err} {err:?}");
        assert!(
            !shown.contains(TOKEN) && !shown.contains("bob"),
            "secret in error: {shown}"
        );
    }
}

/// A URL the hub cannot use is that server's problem alone (it loads; the hub makes the server
/// `absent`): its reason and its calls' errors name `url`, never the URL's user or token.
#[tokio::test(start_paused = true)]
async fn a_bad_url_carrying_a_secret_reads_absent_without_the_secret_in_its_reason() {
    let text = r#"{ "mcpServers": {
        "gh": { "url": "https://bob:${GITHUB_TOKEN}@h.example/mcp?token=${GITHUB_TOKEN}" } } }"#;
    for bad in [
        text.replace("https://bob", "ftp://bob"),
        text.replace("}@h.example", "}@"),
        text.replace("https://bob", "bob"),
    ] {
        let config = parse(&bad).expect("the file loads");
        let hub = config.hub(|options| options).expect("the hub starts");
        assert_eq!(hub.state("gh"), Some(mcp_readiness::State::Absent), "{bad}");
        let reason = hub.servers()[0].reason.clone().unwrap_or_default();
        let error = hub
            .call(mcp_readiness::ToolCall::new("mcp__gh__search"))
            .await
            .unwrap_err();
        let shown = format!("{reason} {error} {error:?}");
        assert!(shown.contains("fix `url`"), "{shown}");
        assert!(
            !shown.contains(TOKEN) && !shown.contains("bob"),
            "secret in the reason: {shown}"
        );
    }
}

#[test]
fn an_unreadable_file_names_the_path_and_what_to_check() {
    let err = Config::load_with_env("/nonexistent/mcp.json", env).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/nonexistent/mcp.json: cannot read the configuration file: No such file or directory (os error 2): check the path (`--config` on the command line)"
    );
}

/// A path that is not a regular file is refused before a byte is read, naming what it is.
#[cfg(unix)]
fn refused_as(path: &std::path::Path, kind: &str) {
    let err = Config::load_with_env(path, env).unwrap_err();
    assert!(
        matches!(err, ConfigError::NotAFile { .. }),
        "{}: {err:?}",
        path.display()
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the configuration path is {kind}, not a regular file: copy a pipe's or a \
             device's contents into a regular file and give its path (`--config` on the command \
             line)",
            path.display()
        )
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_with_no_writer_is_refused_at_once_instead_of_blocking() {
    let dir = std::env::temp_dir().join(format!("mcp-readiness-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("mcp.json");
    let _ = std::fs::remove_file(&fifo);
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // Without a writer, a plain open of the FIFO would block this thread for ever.
    refused_as(&fifo, "a FIFO (named pipe)");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_character_device_is_refused_instead_of_read() {
    refused_as(std::path::Path::new("/dev/zero"), "a character device");
    refused_as(std::path::Path::new("/dev/null"), "a character device");
}

#[cfg(unix)]
#[test]
fn a_directory_is_refused_with_its_kind() {
    refused_as(&std::env::temp_dir(), "a directory");
}
