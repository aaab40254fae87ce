//! OAuth blocks: the store relative to the file, the command that reauthorizes, and bad blocks
//! that name the file, the path and what was expected.

use super::*;

#[test]
fn an_oauth_server_gets_its_store_relative_to_the_file_and_the_command_that_reauthorizes_it() {
    let config = parse(&with_server(
        r#"{ "type": "http", "url": "http://${HOST}/mcp",
             "oauth": { "store": "tokens/s.json", "client_id": "cid", "client_secret": "${GITHUB_TOKEN}", "scopes": ["repo", "read:org"] } }"#,
    ))
    .unwrap();
    let TransportSpec::Http { oauth, .. } = &config.servers[0].transport else {
        panic!("an HTTP server");
    };
    let oauth = oauth.as_ref().expect("oauth");
    assert_eq!(oauth.store, std::path::Path::new("conf/tokens/s.json"));
    assert_eq!(oauth.client_id, "cid");
    assert_eq!(oauth.client_secret.as_ref().unwrap().expose(), TOKEN);
    assert_eq!(oauth.scopes, ["repo", "read:org"]);
    assert_eq!(
        oauth.reauthorize.as_deref(),
        Some("mcp-readiness oauth login --config conf/mcp.json --server s")
    );
    assert!(
        !format!("{config:?}").contains(TOKEN),
        "the client secret is a secret"
    );
}

#[test]
fn bad_oauth_blocks_name_the_file_the_path_and_what_was_expected() {
    let cases = [
        (
            r#"{ "url": "http://h/mcp", "oauth": { "client_id": "c" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.store: missing: `oauth` needs the credential store file (where the tokens are kept)",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "client_id": "" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.client_id: expected the OAuth client id, found an empty string",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "client_id": "c", "token": "x" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.token: unknown key: `oauth` allows only `store`, `client_id`, `client_secret`, `scopes`",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "client_id": "c", "scopes": ["a b"] } }"#,
            "conf/mcp.json: mcpServers.s.oauth.scopes[0]: expected an OAuth scope (printable ASCII without spaces, `\"` or `\\`)",
        ),
        (
            r#"{ "url": "http://h/mcp", "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" }, "oauth": { "store": "t.json", "client_id": "c" } }"#,
            "conf/mcp.json: mcpServers.s.headers.Authorization: a server with `oauth` gets its Authorization header from the credential store: remove this header, or remove `oauth`",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": "yes" }"#,
            "conf/mcp.json: mcpServers.s.oauth: expected `oauth` (a JSON object), found a string",
        ),
    ];
    for (entry, want) in cases {
        let err = parse(&with_server(entry)).expect_err(entry).to_string();
        assert_eq!(err, want, "{entry}");
        assert!(!err.contains(TOKEN));
    }
}

#[test]
fn oauth_on_a_stdio_server_is_an_unknown_key() {
    let err = parse(&with_server(
        r#"{ "command": "srv", "oauth": { "store": "t.json", "client_id": "c" } }"#,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("conf/mcp.json: mcpServers.s.oauth: unknown key"),
        "{err}"
    );
}
