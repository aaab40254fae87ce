//! What the store knows of its credentials' lifetimes: the expiries the gauge exports, the refresh
//! token's lifetime when the authorization server said it, and the fingerprints that tell one
//! token from the next (a token itself is never kept outside the file).

use std::hash::{Hash as _, Hasher as _};
use std::time::{Duration, SystemTime};

use oauth2::TokenResponse as _;
use rmcp::transport::auth::StoredCredentials;

use super::file::StoreFile;
use crate::state::{CredentialExpiry, CredentialKind};

pub(super) fn fingerprint(token: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    token.hash(&mut hasher);
    hasher.finish()
}

pub(super) fn access_fingerprint(credentials: &StoredCredentials) -> Option<u64> {
    credentials
        .token_response
        .as_ref()
        .map(|t| fingerprint(t.access_token().secret()))
}

pub(super) fn refresh_fingerprint(credentials: &StoredCredentials) -> Option<u64> {
    credentials
        .token_response
        .as_ref()?
        .refresh_token()
        .map(|t| fingerprint(t.secret()))
}

/// The expiries a store file says: the access token's (renewable when a refresh token is there)
/// and the refresh token's when its lifetime is known.
pub(super) fn expiries_of(file: &StoreFile, renewed_by_hub: bool) -> Vec<CredentialExpiry> {
    let Some(token) = file.credentials.token_response.as_ref() else {
        return Vec::new();
    };
    let at = |secs: u64| SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs));
    let has_refresh = token.refresh_token().is_some();
    let mut out = Vec::new();
    if let (Some(lifetime), Some(received)) =
        (token.expires_in(), file.credentials.token_received_at)
        && let Some(expires_at) = at(received.saturating_add(lifetime.as_secs()))
    {
        out.push(CredentialExpiry {
            kind: CredentialKind::AccessToken,
            expires_at,
            renewable: has_refresh || renewed_by_hub,
        });
    }
    if has_refresh && let Some(expires_at) = refresh_expires_at(file).and_then(at) {
        out.push(CredentialExpiry {
            kind: CredentialKind::RefreshToken,
            expires_at,
            renewable: false,
        });
    }
    out
}

/// The refresh token's expiry: what the file recorded, else what the token response says.
pub(super) fn refresh_expires_at(file: &StoreFile) -> Option<u64> {
    file.refresh_token_expires_at
        .or_else(|| refresh_lifetime_from_response(&file.credentials))
}

pub(super) fn refresh_lifetime_from_response(credentials: &StoredCredentials) -> Option<u64> {
    let lifetime = credentials
        .token_response
        .as_ref()?
        .extra_fields()
        .0
        .get("refresh_token_expires_in")?
        .as_u64()?;
    Some(credentials.token_received_at?.saturating_add(lifetime))
}
