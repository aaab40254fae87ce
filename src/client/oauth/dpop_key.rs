//! The DPoP key pair (RFC 9449) kept in each credential store: a P-256 key, its public JWK, and
//! the proof it signs for one request. The store keeps it; `dpop.rs` sends its proofs.

use aws_lc_rs::rand::SecureRandom as _;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;

/// The proof algorithm: ES256 (P-256, SHA-256), the one every DPoP server must accept.
pub(crate) const ALGORITHM: &str = "ES256";

/// A P-256 key pair that signs DPoP proofs. Never printed.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    /// The public key as a JWK (`crv`, `kty`, `x`, `y`: the members of its thumbprint).
    pub(crate) jwk: serde_json::Value,
    /// The private key as kept in the store: PKCS#8 DER, base64url.
    stored: String,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(<redacted>)")
    }
}

impl DpopKey {
    /// A new key pair.
    pub(crate) fn generate() -> Result<Self, String> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| "generating a DPoP key pair failed".to_owned())?;
        let der = pair
            .to_pkcs8v1()
            .map_err(|_| "encoding the DPoP key pair failed".to_owned())?;
        Self::from_der(der.as_ref())
    }

    /// The key pair kept in a store (see [`DpopKey::stored`]).
    pub(crate) fn from_stored(stored: &str) -> Result<Self, String> {
        let der = B64
            .decode(stored.trim())
            .map_err(|_| "the `dpop_key` is not base64url".to_owned())?;
        Self::from_der(&der)
    }

    fn from_der(der: &[u8]) -> Result<Self, String> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der)
            .map_err(|_| "the `dpop_key` is not a P-256 private key (PKCS#8)".to_owned())?;
        // The uncompressed point: 0x04, x, y.
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err("the DPoP public key is not an uncompressed P-256 point".to_owned());
        }
        let jwk = serde_json::json!({
            "crv": "P-256",
            "kty": "EC",
            "x": B64.encode(&point[1..33]),
            "y": B64.encode(&point[33..]),
        });
        Ok(DpopKey {
            pair,
            jwk,
            stored: B64.encode(der),
        })
    }

    /// The private key as kept in the store.
    pub(crate) fn stored(&self) -> &str {
        &self.stored
    }

    /// A proof for one request: `method` to `url` (its query and fragment dropped), with the
    /// server's `nonce` and, for a resource request, the hash of `access_token`.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, String> {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let mut jti = [0u8; 16];
        rng.fill(&mut jti)
            .map_err(|_| "no randomness for a DPoP proof".to_owned())?;
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let header = serde_json::json!({ "typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk });
        let mut claims = serde_json::json!({
            "jti": B64.encode(jti),
            "htm": method,
            "htu": htu(url)?,
            "iat": iat,
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        if let Some(token) = access_token {
            let hash = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
            claims["ath"] = B64.encode(hash).into();
        }
        let input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&rng, input.as_bytes())
            .map_err(|_| "signing a DPoP proof failed".to_owned())?;
        Ok(format!("{input}.{}", B64.encode(signature.as_ref())))
    }
}

/// The `htu` of a request to `url`: scheme, host, port and path; no user info, query or
/// fragment (RFC 9449 §4.2).
pub(crate) fn htu(url: &str) -> Result<String, String> {
    let mut url =
        reqwest::Url::parse(url).map_err(|_| "the request URL is not a URL".to_owned())?;
    url.set_query(None);
    url.set_fragment(None);
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Ok(url.to_string())
}
