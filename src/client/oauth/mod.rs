//! OAuth 2.1 for streamable-HTTP servers, through rmcp's authorization support: an
//! [`AuthorizationManager`](rmcp::transport::auth::AuthorizationManager) over a credential store
//! file ([`FileStore`](store::FileStore)), wrapped around the HTTP client of the transport
//! ([`AuthClient`](rmcp::transport::auth::AuthClient)).
//!
//! - Every request asks the manager for the access token; one that expires within
//!   `min(30 s, expires_in / 2)` is refreshed first (rmcp's rule), and a 401 on a token the server
//!   no longer accepts gets one refresh and one retry. So a token that expires and refreshes keeps
//!   the server `ready`.
//! - A refresh the authorization server refuses (`invalid_grant`) is remembered by the store; the
//!   server reads `unauthenticated` with a reason that says so and names the command that
//!   re-authorizes it. Once the store holds another refresh token, the server may try again.
//! - Every token issued or refreshed updates the expiries the hub exports as
//!   `mcp_readiness_credential_expiry_timestamp_seconds`.
//! - Without a configured `client_id`, `oauth login` registers the client
//!   ([`registration`]) and keeps the registration in the store, where the hub finds it.
//! - With `"grant": "client_credentials"` there is no login: the token is fetched at connect
//!   and renewed before it expires ([`client_credentials`]).
//! - With `"grant": "workload_identity"` neither: the workload's identity token (a file the
//!   platform rotates) is exchanged with the JWT-bearer grant at connect and at each renewal
//!   ([`workload_identity`]).
//! - With `"grant": "enterprise_managed"` neither: an enterprise ID token is exchanged at the
//!   identity provider for an ID-JAG, and that at the authorization server for the token, at
//!   connect and at each renewal ([`enterprise_managed`]).
//! - With DPoP (`"dpop": true`, or where the authorization server offers it), the tokens of any
//!   grant are bound to a key pair kept in the store, and every token and MCP request carries a
//!   proof ([`dpop`]).

mod address_policy;
mod client_credentials;
mod credentials;
mod discovery;
mod dpop;
mod dpop_key;
mod enterprise_managed;
mod login;
mod registration;
mod store;
mod token_error;
mod workload_identity;

pub(crate) use credentials::OAuthCredentials;
pub use login::{LoginError, authorize};
