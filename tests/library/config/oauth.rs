//! OAuth blocks: the store relative to the file, the command that reauthorizes, and bad blocks
//! that name the file, the path and what was expected.

use super::*;
use mcp_readiness::client::{
    AssertionSource, Dpop, IdentityProvider, OAuthGrant, OAuthSpec, SigningAlgorithm,
};

/// The configuration of the one server `entry`, and its OAuth block.
#[track_caller]
fn configured(entry: &str) -> (Config, OAuthSpec) {
    let config = parse(&with_server(entry)).unwrap();
    let TransportSpec::Http { oauth, .. } = &config.servers[0].transport else {
        panic!("an HTTP server");
    };
    let oauth = oauth.clone().expect("an oauth block");
    (config, oauth)
}

/// The OAuth block of the one server `entry` configures.
#[track_caller]
fn oauth_block(entry: &str) -> OAuthSpec {
    configured(entry).1
}

#[test]
fn an_oauth_server_gets_its_store_relative_to_the_file_and_the_command_that_reauthorizes_it() {
    let (config, oauth) = configured(
        r#"{ "type": "http", "url": "http://${HOST}/mcp",
             "oauth": { "store": "tokens/s.json", "client_id": "cid", "client_secret": "${GITHUB_TOKEN}", "scopes": ["repo", "read:org"] } }"#,
    );
    assert_eq!(oauth.store, std::path::Path::new("conf/tokens/s.json"));
    assert_eq!(oauth.client_id.as_deref(), Some("cid"));
    assert_eq!(oauth.grant, OAuthGrant::AuthorizationCode);
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
            "conf/mcp.json: mcpServers.s.oauth.token: unknown key: `oauth` allows only `store`, `client_id`, `client_secret`, `client_metadata_url`, `scopes`, `grant`, `private_key`, `signing_algorithm`, `assertion_file`, `assertion_command`, `identity_provider`, `dpop`",
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
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "client_secret": "s" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.client_secret: a client secret belongs to a registered client: set `client_id` too, or remove `client_secret` (`oauth login` registers the client and keeps its secret in the store)",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "client_metadata_url": "http://h/c.json" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.client_metadata_url: expected an https:// URL with a path (the Client ID Metadata Document this client is identified by)",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "password" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.grant: expected `authorization_code` (a person runs `oauth login` once), `client_credentials` (machine to machine, no login), `workload_identity` (the platform's identity token for this workload, no secret) or `enterprise_managed` (an enterprise ID token exchanged at the identity provider)",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "client_credentials", "client_secret": "s" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.client_secret: a client secret belongs to a registered client: set `client_id` too, or remove `client_secret` (`oauth login` registers the client and keeps its secret in the store)",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "client_credentials", "client_id": "c" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.grant: client credentials need exactly one of `client_secret` (usually `${VAR}`) and `private_key` (a PEM file, for private_key_jwt)",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "client_credentials", "client_id": "c", "private_key": "k.pem", "signing_algorithm": "HS256" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.signing_algorithm: expected one of RS256, RS384, RS512, ES256, ES384",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "private_key": "k.pem" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.private_key: only for `\"grant\": \"client_credentials\"` (a login needs no key)",
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
fn a_block_without_a_client_id_registers_at_login_and_client_credentials_name_their_key_file() {
    let oauth = oauth_block(
        r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "client_metadata_url": "https://client.example/meta.json" } }"#,
    );
    assert_eq!(oauth.client_id, None);
    assert_eq!(
        oauth.client_metadata_url.as_deref(),
        Some("https://client.example/meta.json")
    );

    let oauth = oauth_block(
        r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "client_credentials", "client_id": "job", "private_key": "keys/job.pem", "signing_algorithm": "ES256" } }"#,
    );
    assert_eq!(
        oauth.grant,
        OAuthGrant::ClientCredentials {
            private_key: Some("conf/keys/job.pem".into()),
            signing_algorithm: SigningAlgorithm::Es256
        }
    );
    assert_eq!(oauth.reauthorize, None, "no login for client credentials");
}

#[test]
fn a_url_only_entry_uses_the_default_store_once_oauth_login_wrote_it() {
    let dir = std::env::temp_dir().join(format!("mcp-readiness-implicit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    let text = r#"{ "mcpServers": { "remote": { "type": "http", "url": "http://h/mcp" } } }"#;
    let load = || Config::parse(text, &file, |_| None).unwrap();
    let oauth_of = |config: &Config| match &config.servers[0].transport {
        TransportSpec::Http { oauth, .. } => oauth.clone(),
        TransportSpec::Stdio { .. } => panic!("an HTTP server"),
    };
    assert_eq!(oauth_of(&load()), None, "no store yet: a plain HTTP server");
    let implicit = mcp_readiness::config::implicit_oauth(&file, "remote");
    assert_eq!(implicit.store, dir.join(".mcp-readiness/oauth/remote.json"));
    assert_eq!(implicit.client_id, None);
    std::fs::create_dir_all(implicit.store.parent().unwrap()).unwrap();
    std::fs::write(&implicit.store, "").unwrap();
    assert_eq!(oauth_of(&load()), Some(implicit));
    let _ = std::fs::remove_dir_all(&dir);
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

#[test]
fn workload_identity_reads_its_token_file_relative_to_the_configuration_and_holds_no_secret() {
    let oauth = oauth_block(
        r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "workload_identity", "assertion_file": "tokens/mcp", "scopes": ["tools"] } }"#,
    );
    assert_eq!(
        oauth.grant,
        OAuthGrant::WorkloadIdentity {
            assertion: AssertionSource::File("conf/tokens/mcp".into())
        }
    );
    assert!(oauth.grant.renewed_by_hub());
    assert_eq!(oauth.reauthorize, None, "no login for workload identity");

    let oauth = oauth_block(
        r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "workload_identity", "assertion_command": ["mint-token", "--audience", "mcp"] } }"#,
    );
    assert_eq!(
        oauth.grant,
        OAuthGrant::WorkloadIdentity {
            assertion: AssertionSource::Command {
                program: "mint-token".into(),
                args: vec!["--audience".into(), "mcp".into()]
            }
        }
    );

    let cases = [
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "workload_identity", "assertion_file": "f", "assertion_command": ["x"] } }"#,
            "conf/mcp.json: mcpServers.s.oauth.assertion_command: workload identity reads its token from one place",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "workload_identity", "assertion_command": [] } }"#,
            "conf/mcp.json: mcpServers.s.oauth.assertion_command: expected the command that prints",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "workload_identity" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.grant: workload identity needs `assertion_file`",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "workload_identity", "assertion_file": "f", "client_id": "c", "client_secret": "x" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.client_secret: workload identity holds no secret",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "assertion_file": "f" } }"#,
            "conf/mcp.json: mcpServers.s.oauth.assertion_file: only for `\"grant\": \"workload_identity\"`",
        ),
    ];
    for (server, expected) in cases {
        let err = parse(&with_server(server)).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err}\nexpected: {expected}");
    }
}

#[test]
fn enterprise_managed_reads_its_identity_provider_and_id_token_file_and_refuses_what_it_lacks() {
    let (config, oauth) = configured(
        r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "enterprise_managed",
             "client_id": "job", "client_secret": "${GITHUB_TOKEN}", "assertion_file": "idp/id-token",
             "identity_provider": { "issuer": "https://idp.example.com", "token_endpoint": "https://idp.example.com/token",
                                    "client_id": "job-at-idp", "client_secret": "${GITHUB_TOKEN}" } } }"#,
    );
    assert_eq!(
        oauth.grant,
        OAuthGrant::EnterpriseManaged {
            identity_provider: IdentityProvider {
                issuer: "https://idp.example.com".into(),
                token_endpoint: "https://idp.example.com/token".into(),
                client_id: "job-at-idp".into(),
                client_secret: Some(TOKEN.into()),
            },
            assertion: AssertionSource::File("conf/idp/id-token".into()),
        }
    );
    assert!(oauth.grant.renewed_by_hub());
    assert_eq!(
        oauth.reauthorize, None,
        "no login for enterprise-managed authorization"
    );
    assert!(
        !format!("{config:?}").contains(TOKEN),
        "both secrets are secrets"
    );

    let idp = r#""identity_provider": { "issuer": "https://idp.example.com", "token_endpoint": "https://idp.example.com/token", "client_id": "i" }"#;
    let cases = [
        (
            format!(r#"{{ "url": "http://h/mcp", "oauth": {{ "store": "t.json", "grant": "enterprise_managed", "assertion_file": "f", {idp} }} }}"#),
            "conf/mcp.json: mcpServers.s.oauth.grant: enterprise-managed authorization needs `client_id`",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "enterprise_managed", "client_id": "c", "assertion_file": "f" } }"#.to_owned(),
            "conf/mcp.json: mcpServers.s.oauth.grant: enterprise-managed authorization needs `identity_provider`",
        ),
        (
            format!(r#"{{ "url": "http://h/mcp", "oauth": {{ "store": "t.json", "grant": "enterprise_managed", "client_id": "c", {idp} }} }}"#),
            "conf/mcp.json: mcpServers.s.oauth.grant: enterprise-managed authorization needs `assertion_file`",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "enterprise_managed", "client_id": "c", "assertion_file": "f", "identity_provider": { "issuer": "http://idp.example.com", "token_endpoint": "https://idp.example.com/token", "client_id": "i" } } }"#.to_owned(),
            "conf/mcp.json: mcpServers.s.oauth.identity_provider.issuer: expected the identity provider's issuer identifier",
        ),
        (
            r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "grant": "enterprise_managed", "client_id": "c", "assertion_file": "f", "identity_provider": { "issuer": "https://idp.example.com", "token_endpoint": "https://idp.example.com/token" } } }"#.to_owned(),
            "conf/mcp.json: mcpServers.s.oauth.identity_provider.client_id: missing: `identity_provider` needs the client id",
        ),
        (
            format!(r#"{{ "url": "http://h/mcp", "oauth": {{ "store": "t.json", "client_id": "c", {idp} }} }}"#),
            "conf/mcp.json: mcpServers.s.oauth.identity_provider: only for `\"grant\": \"enterprise_managed\"`",
        ),
    ];
    for (server, expected) in cases {
        let err = parse(&with_server(&server)).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err}\nexpected: {expected}");
    }
}

#[test]
fn dpop_is_true_false_or_left_out_for_any_grant_and_anything_else_says_what_each_means() {
    let dpop = |block: &str| {
        oauth_block(&format!(
            r#"{{ "url": "http://h/mcp", "oauth": {{ "store": "t.json", "client_id": "c"{block} }} }}"#
        ))
        .dpop
    };
    assert_eq!(dpop(""), Dpop::WhereOffered);
    assert_eq!(dpop(r#", "dpop": null"#), Dpop::WhereOffered);
    assert_eq!(dpop(r#", "dpop": true"#), Dpop::Always);
    assert_eq!(dpop(r#", "dpop": false"#), Dpop::Never);
    assert_eq!(
        dpop(r#", "grant": "client_credentials", "client_secret": "s", "dpop": true"#),
        Dpop::Always
    );
    let err = parse(&with_server(
        r#"{ "url": "http://h/mcp", "oauth": { "store": "t.json", "dpop": "yes" } }"#,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(
            "conf/mcp.json: mcpServers.s.oauth.dpop: expected true (DPoP-bound tokens, RFC 9449, \
             for every request) or false (bearer tokens even where the authorization server \
             offers DPoP); leave it out to use DPoP where the authorization server's metadata \
             offers it"
        ),
        "{err}"
    );
}
