//! The demo fleet behind `mcp-readiness demo`: real MCP servers on this machine, one in every
//! state, and the steps of an unattended run that uses them.
//!
//! | server | transport | what it does | state the run finds |
//! |---|---|---|---|
//! | `notes` | stdio child | ready at once; lacks `export_pdf` | `ready` (and `absent` for `export_pdf`) |
//! | `calendar` | stdio child | ready after about 6 s | `ready`, after waiting |
//! | `warehouse` | stdio child | still starting when the budget ends | `connecting` |
//! | `wiki` | streamable HTTP, loopback | right bearer token | `ready` |
//! | `tickets` | streamable HTTP, loopback | the token sent is stale: 401 | `unauthenticated` |
//! | `crm` | stdio | its command does not exist | `absent` |
//!
//! The stdio servers are this crate's own binary started again as `mcp-readiness demo-server
//! <name>` (see [`DemoServer::serve_stdio`]); the HTTP ones run in-process ([`DemoHttpServers`]).

mod servers;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

pub use servers::{
    DemoHttpServers, DemoServer, DemoServerError, HTTP_SERVERS, STDIO_SERVERS, server,
};

use mcp_readiness::plan::Step;
use mcp_readiness::secret::Secret;
use mcp_readiness::{ServerSpec, TransportSpec};

/// The wait budget of the demo run: longer than `calendar` takes to start, shorter than
/// `warehouse`.
pub const BUDGET: Duration = Duration::from_secs(10);

/// How often the demo run looks again while a server is connecting.
pub const POLL: Duration = Duration::from_secs(1);

/// The command the `crm` server is configured with; it does not exist.
pub const MISSING_COMMAND: &str = "/nonexistent/bin/mcp-crm-server";

/// The tokens the demo's HTTP servers accept, by server.
pub const ACCEPTED_TOKENS: [(&str, &str); 2] = [
    ("wiki", "demo-wiki-token-3f9a"),
    ("tickets", "demo-tickets-token-rotated-7c21"),
];

/// The token the demo configures for `tickets`: one the server no longer accepts.
pub const STALE_TICKETS_TOKEN: &str = "demo-tickets-token-expired-0b5e";

/// The demo fleet: the stdio servers run `exe demo-server <name>` (`exe` is the
/// `mcp-readiness` binary), the HTTP ones point at `http`.
pub fn fleet(exe: &Path, http: &DemoHttpServers) -> Vec<ServerSpec> {
    let stdio = |name: &str, command: String, args: Vec<String>| ServerSpec {
        name: name.into(),
        transport: TransportSpec::Stdio {
            command,
            args,
            env: BTreeMap::new(),
            cwd: None,
        },
    };
    let bearer = |name: &str, token: &str| ServerSpec {
        name: name.into(),
        transport: TransportSpec::Http {
            url: Secret::new(http.url(name)),
            headers: BTreeMap::from([(
                "Authorization".to_owned(),
                Secret::new(format!("Bearer {token}")),
            )]),
            oauth: None,
        },
    };
    let exe = exe.display().to_string();
    let mut fleet: Vec<ServerSpec> = STDIO_SERVERS
        .iter()
        .map(|s| {
            stdio(
                s.name,
                exe.clone(),
                vec!["demo-server".into(), s.name.into()],
            )
        })
        .collect();
    fleet.push(bearer("wiki", ACCEPTED_TOKENS[0].1));
    fleet.push(bearer("tickets", STALE_TICKETS_TOKEN));
    fleet.push(stdio("crm", MISSING_COMMAND.into(), Vec::new()));
    fleet
}

/// The steps of the demo's unattended run, and what each is expected to decide.
///
/// | step | tool | required | decision |
/// |---|---|---|---|
/// | `find-notes` | `mcp__notes__search_notes` | yes | `run` |
/// | `agenda` | `mcp__calendar__list_events` | yes | `run` (after about 6 s) |
/// | `wiki-lookup` | `mcp__wiki__search` | no | `run` |
/// | `stock-report` | `mcp__warehouse__query` | yes | `retry_next_run` |
/// | `open-tickets` | `mcp__tickets__search_tickets` | yes | `abort` (re-authorize) |
/// | `crm-sync` | `mcp__crm__update_contact` | no | `fallback` to `queue-for-later` |
/// | `export` | `mcp__notes__export_pdf` | no | `fallback` to `write-markdown` |
pub fn steps() -> Vec<Step> {
    vec![
        Step::required("find-notes", "mcp__notes__search_notes"),
        Step::required("agenda", "mcp__calendar__list_events"),
        Step::optional("wiki-lookup", "mcp__wiki__search"),
        Step::required("stock-report", "mcp__warehouse__query"),
        Step::required("open-tickets", "mcp__tickets__search_tickets"),
        Step::optional("crm-sync", "mcp__crm__update_contact").with_fallback("queue-for-later"),
        Step::optional("export", "mcp__notes__export_pdf").with_fallback("write-markdown"),
    ]
}
