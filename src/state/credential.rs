//! When a server's credentials run out: what `mcp_readiness_credential_expiry_timestamp_seconds`
//! and the status page show.

use std::time::SystemTime;

/// Which credential an expiry is about: the `credential` label of
/// `mcp_readiness_credential_expiry_timestamp_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CredentialKind {
    /// An OAuth access token (its `expires_in`).
    AccessToken,
    /// An OAuth refresh token (its lifetime where the authorization server says it, e.g.
    /// `refresh_token_expires_in`).
    RefreshToken,
    /// A static bearer token from the configured headers that is a JWT with an `exp` claim.
    BearerToken,
    /// The workload's identity token (`"grant": "workload_identity"`, `oauth.assertion_file`):
    /// its `exp`. The platform rotates it, so it is renewable.
    WorkloadIdentityToken,
}

impl CredentialKind {
    /// The label value: `access_token`, `refresh_token`, `bearer_token` or
    /// `workload_identity_token`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CredentialKind::AccessToken => "access_token",
            CredentialKind::RefreshToken => "refresh_token",
            CredentialKind::BearerToken => "bearer_token",
            CredentialKind::WorkloadIdentityToken => "workload_identity_token",
        }
    }

    /// In words, for the status page.
    pub const fn describe(self) -> &'static str {
        match self {
            CredentialKind::AccessToken => "access token",
            CredentialKind::RefreshToken => "refresh token",
            CredentialKind::BearerToken => "bearer token",
            CredentialKind::WorkloadIdentityToken => "workload identity token",
        }
    }
}

/// One credential of a server whose expiry is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialExpiry {
    /// Which credential.
    pub kind: CredentialKind,
    /// When it stops working.
    pub expires_at: SystemTime,
    /// Whether it renews itself unattended: an access token with a refresh token beside it is
    /// replaced before it runs out (`renewable="true"`: never a reason to page). A refresh token,
    /// an access token without one, and a static bearer token are not: when they run out, a human
    /// must re-authorize (`renewable="false"`: what `MCPCredentialExpiringSoon` watches).
    pub renewable: bool,
}

impl CredentialExpiry {
    /// `expires_at` as Unix seconds (0 for a time before 1970).
    pub fn unix_seconds(&self) -> f64 {
        self.expires_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    }
}
