//! `mcp-readiness oauth login`: authorizes one configured server (OAuth 2.1, authorization code
//! with PKCE) and writes its tokens to the server's credential store.

use std::path::PathBuf;
use std::process::ExitCode;

use mcp_readiness::secret::escape_controls;

use super::common::{EXIT_INVALID, load_config, print_stderr};

/// Arguments of `mcp-readiness oauth`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Authorize a server: prints a URL to open in a browser, receives the redirect on
    /// 127.0.0.1 and writes the tokens to the server's `oauth.store` (mode 0600). Without
    /// `oauth.client_id` it registers the client first (Client ID Metadata Document or Dynamic
    /// Client Registration) and keeps the registration in the store. A URL-only HTTP entry is
    /// authorized into `.mcp-readiness/oauth/<server>.json` beside the configuration. A running
    /// `serve` picks the new tokens up by itself.
    Login(LoginArgs),
}

#[derive(Debug, clap::Args)]
struct LoginArgs {
    /// The `.mcp.json`-style configuration file.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The server to authorize (its name in `mcpServers`; it needs an `oauth` block).
    #[arg(long, value_name = "NAME")]
    server: String,
    /// The loopback port of the redirect (`http://127.0.0.1:PORT/callback`); 0 picks a free one.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    port: u16,
}

pub(crate) async fn run(args: Args) -> ExitCode {
    let Command::Login(args) = args.command;
    let config = match load_config(&args.config) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let Some(found) = config.servers.iter().find(|s| *s.name == *args.server) else {
        print_stderr(&format!(
            "error: server `{}` is not in `mcpServers` of {}\n",
            escape_controls(&args.server),
            args.config.display()
        ));
        return ExitCode::from(EXIT_INVALID);
    };
    let spec = &with_implicit_oauth(found, &args.config);
    let shown = |url: &str| {
        print_stderr(&format!(
            "Open this URL in a browser to authorize `{}`:\n\n  {}\n\nWaiting for the redirect...\n",
            spec.name,
            escape_controls(url)
        ));
    };
    match mcp_readiness::client::authorize(spec, args.port, shown).await {
        Ok(store) => {
            print_stderr(&format!(
                "Authorized `{}`: tokens written to {}\n",
                spec.name,
                store.display()
            ));
            ExitCode::SUCCESS
        }
        Err(err) => {
            print_stderr(&format!("error: {}\n", escape_controls(&err.to_string())));
            ExitCode::FAILURE
        }
    }
}

/// `spec`, with the OAuth of a URL-only HTTP entry (no `oauth`, no `Authorization` header) when it
/// has none: registration at login, tokens in the default store.
fn with_implicit_oauth(
    spec: &mcp_readiness::ServerSpec,
    file: &std::path::Path,
) -> mcp_readiness::ServerSpec {
    use mcp_readiness::TransportSpec;
    let mut spec = spec.clone();
    if let TransportSpec::Http { headers, oauth, .. } = &mut spec.transport
        && oauth.is_none()
        && !headers
            .keys()
            .any(|h| h.eq_ignore_ascii_case("authorization"))
    {
        *oauth = Some(mcp_readiness::config::implicit_oauth(file, &spec.name));
    }
    spec
}
