//! The configuration file: Claude-style `.mcp.json` (`mcpServers`) plus an optional `readiness`
//! block.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "files":  { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"], "env": {} },
//!     "github": { "type": "http", "url": "https://example.invalid/mcp", "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" } }
//!   },
//!   "readiness": {
//!     "budget": "20s", "poll": "2s", "cooldown": "60s", "ping": "30s",
//!     "connect_timeout": "30s", "call_timeout": "60s",
//!     "steps": [
//!       { "id": "fetch-issues", "tool": "mcp__github__search_issues", "required": true },
//!       { "id": "archive", "tool": "mcp__files__write_file", "required": false, "fallback": "write-local" }
//!     ]
//!   }
//! }
//! ```
//!
//! # Servers
//!
//! A stdio server has `command` (required, non-empty), `args`, `env` and `cwd` (relative to the
//! file's directory), and optionally `"type": "stdio"`. A streamable-HTTP server has
//! `"type": "http"` (or `"streamable-http"`), an `http://` or `https://` `url` and `headers`.
//! An HTTP server may have `oauth` instead of an `Authorization` header: `store` (the credential
//! store file, relative to the file's directory), and optionally `client_id` (without it `oauth
//! login` registers the client), `client_secret`, `client_metadata_url`, `scopes`, and `grant`
//! (`client_credentials` with `client_secret` or `private_key`; see `docs/oauth.md`). A URL-only
//! entry authorized by `oauth login` uses the store [`implicit_oauth`] names.
//! Without `type`, `command` means stdio and `url` means HTTP. Header values, `env` values and the
//! URL become [`Secret`](crate::secret::Secret)s: they never appear in errors or `Debug` output.
//!
//! # Readiness
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `budget` | `20s` | how long a resolution may wait for a `connecting` server |
//! | `poll` | `2s` | how often a waiting resolution looks again (at most `budget`) |
//! | `cooldown` | `60s` | the longest a server whose connects keep failing fails fast before the next attempt (1 s after the first failure in a row, doubling up to this) |
//! | `ping` | `30s` | health-ping interval of a live connection; `"off"` disables pings |
//! | `connect_timeout` | `30s` | how long one connection attempt may take |
//! | `call_timeout` | `60s` | how long one tool call may take |
//! | `steps` | none | the steps of the unattended run: `id`, `tool`, `required` (default `true`), `fallback` |
//! | `servers` | none | per-server overrides by server name: `budget` (that server's wait budget, polled every `poll`) |
//! | `probe` | off | `GET /probe?target=URL` (see below) |
//!
//! `probe` turns on `GET /probe` (the [`probe`](crate::probe) module): `targets` (required, the
//! allow-list of URL patterns such as `"http://127.0.0.1:*/mcp"` or `"https://*.example.com/mcp"`),
//! `max_in_flight` (default 16), `timeout` (default `10s`) and `modules` by name, each with
//! `targets` (required when it has credentials: they go to these only), `headers`, `oauth` (as a
//! server's), `timeout` and `protocol_generations` (`"2026-07-28"`, `"2025-11-25"`, or both, the
//! default).
//!
//! Durations are written like `"20s"`, `"1m30s"` or `"500ms"`. A step's tool must be
//! `mcp__<server>__<tool>`; a server that is not configured is accepted (the step resolves as
//! `absent`) and reported in [`Config::warnings`].
//!
//! # Variables
//!
//! Every string value may use `${VAR}` (an error if `VAR` is unset) and `${VAR:-default}` (the
//! default when `VAR` is unset or empty); `$${` writes a literal `${`.
//!
//! # Errors
//!
//! Every [`ConfigError`] names the file and the JSON path (or line and column) and says what was
//! expected, e.g. `mcp.json: mcpServers.github.url: expected an http:// or https:// URL, found
//! scheme `ftp``.

mod error;
mod expand;
mod hub;
mod identity_provider;
mod node;
mod oauth;
pub(crate) mod parsed;
mod probe;
mod readiness;
mod servers;
mod walk;

use std::time::Duration;

pub use error::{ConfigError, ConfigWarning};
pub use oauth::implicit as implicit_oauth;
pub(crate) use parsed::Config;
pub use parsed::{ReadinessConfig, ServerReadiness, StepConfig};

pub(super) const TOP_KEYS: &[&str] = &["mcpServers", "readiness"];

/// The largest configuration file read (4 MiB): a configuration is a few kilobytes, and a path
/// such as `/dev/zero` must not make the process grow without bound.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The longest duration the file accepts (365 days): longer ones are typing errors, and near
/// `u64::MAX` seconds they do not fit in a clock reading.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 86_400);
