//! Credential expiry that needs no authorization server: the `exp` claim of a static bearer token
//! that is a JWT, read without verifying it (the server verifies; we only want to know when it
//! stops working). The token itself is never logged or returned.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::secret::Secret;
use crate::state::{CredentialExpiry, CredentialKind};

/// What a [`Connector`](crate::client::Connector) knows of its credentials, as it changes
/// ([`Connector::credentials`](crate::client::Connector::credentials)): every credential whose expiry is
/// known, and a counter that goes up each time the credentials were replaced after being refused
/// (a re-authorization: the hub lets an unauthenticated server try again).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CredentialState {
    /// Every credential whose expiry is known.
    pub expiries: Vec<CredentialExpiry>,
    /// How many times the credentials were re-authorized after being refused.
    pub reauthorized: u64,
}

/// The longest JWT payload decoded (a bearer token is a few hundred bytes to a few kilobytes).
const MAX_PAYLOAD: usize = 64 * 1024;

/// The expiry of the `Authorization: Bearer <JWT>` among `headers`, if it is a JWT with a numeric
/// `exp`. Anything else (an opaque token, a malformed JWT, no `exp`) is `None`: nothing is known.
pub(crate) fn bearer_expiry(headers: &BTreeMap<String, Secret>) -> Option<CredentialExpiry> {
    let value = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.expose())?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let exp = jwt_exp(token.trim())?;
    Some(CredentialExpiry {
        kind: CredentialKind::BearerToken,
        expires_at: SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs_f64(exp))?,
        renewable: false,
    })
}

/// The `exp` claim (seconds since 1970) of a compact JWS/JWT, unverified.
pub(crate) fn jwt_exp(token: &str) -> Option<f64> {
    let mut parts = token.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || payload.len() > MAX_PAYLOAD {
        return None;
    }
    // Some issuers pad; the JWT spec says not to.
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let exp = claims.get("exp")?.as_f64()?;
    // Negative, NaN, or beyond what a clock can hold: not an expiry we can show.
    (exp.is_finite() && (0.0..1e12).contains(&exp)).then_some(exp)
}

#[cfg(test)]
mod tests {
    use crate::client::credential_expiry::*;

    fn jwt(claims: &str) -> String {
        format!(
            "{}.{}.c2ln",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#),
            URL_SAFE_NO_PAD.encode(claims)
        )
    }

    #[test]
    fn a_bearer_jwt_with_exp_has_a_known_expiry_that_cannot_renew_itself() {
        let headers = BTreeMap::from([(
            "Authorization".to_owned(),
            Secret::new(format!("Bearer {}", jwt(r#"{"sub":"x","exp":1767225600}"#))),
        )]);
        let expiry = bearer_expiry(&headers).unwrap();
        assert_eq!(expiry.kind, CredentialKind::BearerToken);
        assert_eq!(expiry.unix_seconds(), 1_767_225_600.0);
        assert!(!expiry.renewable);
    }

    #[test]
    fn opaque_tokens_malformed_jwts_and_other_schemes_have_no_known_expiry() {
        for value in [
            "Bearer opaque-token-1234".to_owned(),
            format!("Basic {}", jwt(r#"{"exp":1767225600}"#)),
            format!("Bearer {}", jwt(r#"{"sub":"no exp"}"#)),
            format!("Bearer {}", jwt(r#"{"exp":"tomorrow"}"#)),
            format!("Bearer {}", jwt(r#"{"exp":-5}"#)),
            "Bearer a.!!!.c".to_owned(),
            "Bearer a.b.c.d".to_owned(),
        ] {
            let headers = BTreeMap::from([("authorization".to_owned(), Secret::new(value))]);
            assert_eq!(bearer_expiry(&headers), None);
        }
        assert_eq!(bearer_expiry(&BTreeMap::new()), None);
    }

    #[test]
    fn a_padded_payload_is_read_too() {
        let token = format!("h.{}==.s", URL_SAFE_NO_PAD.encode(r#"{"exp":100}"#));
        assert_eq!(jwt_exp(&token), Some(100.0));
    }
}
