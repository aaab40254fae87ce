//! DPoP (RFC 9449): sender-constrained tokens. The tokens are bound to a P-256 key pair kept in
//! the credential store ([`DpopKey`], rotated with each login); every token request and every MCP
//! request carries a fresh proof (`typ: dpop+jwt`, ES256, new `jti` and `iat`, the request's
//! method and URL without query, and for MCP requests the access token's hash `ath`); the token
//! goes with the `DPoP` scheme; a server's nonce (`use_dpop_nonce`) is remembered per origin and
//! the request retried once with it.
//!
//! - Token requests: [`DpopTokenClient`], the OAuth HTTP client of rmcp's authorization manager
//!   (authorization code, refresh, client credentials, the JWT-bearer grant of enterprise-managed
//!   authorization), and [`Dpop::token_request`] for the workload identity grant.
//! - MCP requests: [`DpopHttp`], under rmcp's `AuthClient`, which hands it the access token.
//!
//! Neither a proof, the key nor a token is logged: header values are marked sensitive, and the
//! errors here say what failed, never a value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::client::oauth::dpop_key::{ALGORITHM, htu};
use crate::client::oauth::store::FileStore;
use crate::client::spec::Dpop as DpopMode;
use crate::util::MutexExt as _;

/// The `DPoP` header (a proof).
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The `DPoP-Nonce` header (a server's nonce).
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");
/// The largest token response read (as rmcp's own OAuth HTTP client).
const MAX_TOKEN_RESPONSE_BYTES: usize = 1024 * 1024;
/// How long a token request may take.
const TOKEN_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The origin a nonce belongs to.
fn origin(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(|_| String::new(), |u| u.origin().ascii_serialization())
}

/// Whether DPoP is used with the authorization server `metadata` describes, as `mode` says: `Ok`
/// with the answer, `Err` when `"dpop": true` but it takes no ES256 proofs.
pub(crate) fn wanted(mode: DpopMode, metadata: &AuthorizationMetadata) -> Result<bool, String> {
    let offered = metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(serde_json::Value::as_array);
    let takes_es256 =
        offered.is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some(ALGORITHM)));
    match mode {
        DpopMode::Never => Ok(false),
        DpopMode::WhereOffered => Ok(takes_es256),
        // An authorization server may take proofs without saying so in its metadata.
        DpopMode::Always if offered.is_none() || takes_es256 => Ok(true),
        DpopMode::Always => Err(format!(
            "`oauth.dpop` is true but its authorization server's metadata lists DPoP proof \
             algorithms without {ALGORITHM} (`dpop_signing_alg_values_supported`), the only one \
             this client signs with: have the authorization server accept {ALGORITHM} proofs, or \
             remove `oauth.dpop`"
        )),
    }
}

/// Whether a `WWW-Authenticate` challenge asks for a DPoP nonce (RFC 9449 §9).
fn asks_for_nonce(challenge: &str) -> bool {
    challenge.to_ascii_lowercase().contains("use_dpop_nonce")
}

/// One server's DPoP: the store's key and the nonces its servers gave, per origin.
pub(crate) struct Dpop {
    store: FileStore,
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dpop")
    }
}

impl Dpop {
    /// DPoP with the key of `store`.
    pub(crate) fn new(store: FileStore) -> Arc<Self> {
        Arc::new(Dpop {
            store,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// A proof for `method` to `url` (with the nonce last given by its origin), as a header
    /// value marked sensitive.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<HeaderValue, String> {
        let key = self.store.dpop_key()?;
        let nonce = self.nonces.lock_unpoisoned().get(&origin(url)).cloned();
        let proof = key.proof(method, url, nonce.as_deref(), access_token)?;
        let mut value =
            HeaderValue::try_from(proof).map_err(|_| "a DPoP proof is not a header".to_owned())?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// Remembers the nonce `headers` carry for `url`'s origin; whether there was a new one.
    fn note_nonce(&self, url: &str, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty() && n.len() <= 1024)
        else {
            return false;
        };
        let mut nonces = self.nonces.lock_unpoisoned();
        let previous = nonces.insert(origin(url), nonce.to_owned());
        previous.as_deref() != Some(nonce)
    }

    /// Sends a token request to `url` (a form `body`) with a proof, and once more with the
    /// nonce the authorization server asks for (`400 use_dpop_nonce`); the workload identity
    /// grant's token request.
    pub(crate) async fn token_request(
        &self,
        http: &reqwest::Client,
        url: &str,
        headers: HeaderMap,
        body: String,
    ) -> Result<reqwest::Response, String> {
        let mut retried = false;
        loop {
            let proof = self.proof("POST", url, None)?;
            let response = http
                .post(url)
                .headers(headers.clone())
                .header(DPOP, proof)
                .body(body.clone())
                .send()
                .await
                .map_err(|e| crate::client::reasons::reason::explain(&e))?;
            let new_nonce = self.note_nonce(url, response.headers());
            if !retried && new_nonce && response.status() == reqwest::StatusCode::BAD_REQUEST {
                retried = true;
                continue;
            }
            return Ok(response);
        }
    }
}

/// The OAuth HTTP client of rmcp's authorization manager when DPoP is on: a request to the
/// authorization server's token endpoint goes with a proof (and once more with the nonce it
/// asks for); every other request (discovery, registration, an identity provider's exchange)
/// goes unchanged. Every request keeps to the addresses its policy reaches (for the MCP server's
/// authorization server, those rmcp's own client would reach: see `address_policy`), with a
/// timeout and bounded answers.
pub(crate) struct DpopTokenClient {
    dpop: Arc<Dpop>,
    token_endpoint: String,
    policy: super::address_policy::Policy,
    follow: reqwest::Client,
    stop: reqwest::Client,
    /// Whether a `token_type: DPoP` answer is handed on as `Bearer` (see
    /// [`DpopTokenClient::answering_bearer`]).
    answer_bearer: bool,
}

impl DpopTokenClient {
    /// Proofs on the requests to `token_endpoint`, with `dpop`; every request to the addresses
    /// `policy` reaches.
    pub(crate) fn new(
        dpop: Arc<Dpop>,
        token_endpoint: &str,
        policy: super::address_policy::Policy,
    ) -> Result<Self, AuthError> {
        let build = |redirect| {
            reqwest::Client::builder()
                .timeout(TOKEN_REQUEST_TIMEOUT)
                .redirect(redirect)
                .dns_resolver(policy.resolver())
                .build()
                .map_err(|e| AuthError::InternalError(e.to_string()))
        };
        let hops = policy.clone();
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !hops.allows(attempt.url()) {
                attempt.error("a redirect to an address this OAuth request may not reach")
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        });
        Ok(DpopTokenClient {
            dpop,
            token_endpoint: htu(token_endpoint).map_err(AuthError::InternalError)?,
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            policy,
            answer_bearer: false,
        })
    }

    /// Hands a token response's `token_type: DPoP` on as `Bearer`: rmcp's enterprise-managed
    /// exchange accepts bearer tokens only, and the token is used with the `DPoP` scheme and a
    /// proof all the same (the DPoP of a server does not depend on the stored `token_type`).
    pub(crate) fn answering_bearer(mut self) -> Self {
        self.answer_bearer = true;
        self
    }

    /// `response` with `token_type: DPoP` read as `Bearer`, when answering bearer.
    fn handed_on(&self, response: http::Response<Vec<u8>>) -> http::Response<Vec<u8>> {
        if !self.answer_bearer || !response.status().is_success() {
            return response;
        }
        let (parts, body) = response.into_parts();
        let body = match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(mut doc)
                if doc["token_type"]
                    .as_str()
                    .is_some_and(|t| t.eq_ignore_ascii_case("dpop")) =>
            {
                doc["token_type"] = "Bearer".into();
                serde_json::to_vec(&doc).unwrap_or(body)
            }
            _ => body,
        };
        let mut response = http::Response::from_parts(parts, body);
        response.headers_mut().remove(http::header::CONTENT_LENGTH);
        response
    }

    /// Sends `request` (with a proof when `prove`) and reads the answer, bounded.
    async fn send(
        &self,
        request: &http::Request<Vec<u8>>,
        redirect: OAuthHttpRedirectPolicy,
        prove: bool,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let url = reqwest::Url::parse(&request.uri().to_string())?;
        if !self.policy.allows(&url) {
            return Err(format!(
                "`{}` is an address an OAuth request for this server may not reach (a \
                 loopback, private or link-local address that the MCP server's own URL does not \
                 name)",
                url.host_str().unwrap_or_default()
            )
            .into());
        }
        let client = match redirect {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let mut builder = client
            .request(request.method().clone(), url.clone())
            .headers(request.headers().clone())
            .body(request.body().clone());
        if prove {
            builder = builder.header(DPOP, self.dpop.proof("POST", url.as_str(), None)?);
        }
        let response = builder.send().await?;
        let mut answer = http::Response::builder()
            .status(response.status())
            .version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
            let chunk = chunk?;
            if body.len() + chunk.len() > MAX_TOKEN_RESPONSE_BYTES {
                return Err(format!(
                    "the authorization server's answer is larger than {MAX_TOKEN_RESPONSE_BYTES} \
                     bytes"
                )
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(answer.body(body)?)
    }
}

impl OAuthHttpClient for DpopTokenClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let policy = request.redirect_policy;
            let to_token_endpoint = request.request.method() == http::Method::POST
                && htu(&request.request.uri().to_string()).as_deref()
                    == Ok(self.token_endpoint.as_str());
            if !to_token_endpoint {
                return self.send(&request.request, policy, false).await;
            }
            let url = request.request.uri().to_string();
            let first = self.send(&request.request, policy, true).await?;
            // A `400 use_dpop_nonce` with a nonce: once more with it (RFC 9449 §8).
            if self.dpop.note_nonce(&url, first.headers())
                && first.status() == http::StatusCode::BAD_REQUEST
            {
                return Ok(self.handed_on(self.send(&request.request, policy, true).await?));
            }
            Ok(self.handed_on(first))
        })
    }
}

/// What [`DpopHttp`] hands its inner client: the bearer token (none with DPoP) and the headers.
type Authorized = (Option<String>, HashMap<HeaderName, HeaderValue>);

/// The HTTP client of MCP requests under rmcp's `AuthClient`: with DPoP, the access token goes
/// as `Authorization: DPoP <token>` with a fresh proof, and a `401` that asks for a nonce is
/// answered by learning it and sending the request once more; without, rmcp's bearer header.
#[derive(Clone)]
pub(crate) struct DpopHttp {
    inner: reqwest::Client,
    dpop: Option<Arc<Dpop>>,
}

impl DpopHttp {
    /// MCP requests through `inner`, with `dpop` when on.
    pub(crate) fn new(inner: reqwest::Client, dpop: Option<Arc<Dpop>>) -> Self {
        DpopHttp { inner, dpop }
    }

    /// The token and headers for `inner`: with DPoP, no bearer token but the `DPoP` scheme and
    /// a proof.
    fn authorize(
        &self,
        method: &str,
        uri: &str,
        token: Option<String>,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Authorized, StreamableHttpError<reqwest::Error>> {
        let (Some(dpop), Some(token)) = (&self.dpop, token.as_deref()) else {
            return Ok((token, headers));
        };
        let failed = |why: String| StreamableHttpError::Auth(AuthError::InternalError(why));
        let mut scheme = HeaderValue::try_from(format!("DPoP {token}"))
            .map_err(|_| failed("the access token is not a header value".to_owned()))?;
        scheme.set_sensitive(true);
        headers.insert(http::header::AUTHORIZATION, scheme);
        headers.insert(DPOP, dpop.proof(method, uri, Some(token)).map_err(failed)?);
        Ok((None, headers))
    }

    /// After a `401` that asks for a nonce: learns it with a `ping` sent as the failed request
    /// was (same token, same nonce, so it is refused the same way), so that the request can be
    /// sent once more with it. Whether a new nonce was learnt.
    async fn learn_nonce(
        &self,
        uri: &str,
        token: &str,
        session_id: Option<&str>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> bool {
        let Some(dpop) = &self.dpop else {
            return false;
        };
        let Ok((_, headers)) = self.authorize("POST", uri, Some(token.to_owned()), headers.clone())
        else {
            return false;
        };
        let mut request = self
            .inner
            .post(uri)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = session_id {
            request = request.header("mcp-session-id", session_id);
        }
        match request.send().await {
            Ok(response) => dpop.note_nonce(uri, response.headers()),
            Err(_) => false,
        }
    }
}

/// Whether `result` is a `401` that asks for a DPoP nonce.
fn nonce_challenge<T>(result: &Result<T, StreamableHttpError<reqwest::Error>>) -> bool {
    matches!(result, Err(StreamableHttpError::AuthRequired(challenge))
        if asks_for_nonce(&challenge.www_authenticate_header))
}

impl StreamableHttpClient for DpopHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let (token, headers) =
            self.authorize("POST", &uri, auth_token.clone(), custom_headers.clone())?;
        let result = self
            .inner
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
                limits,
            )
            .await;
        let Some(sent) = auth_token.as_deref().filter(|_| self.dpop.is_some()) else {
            return result;
        };
        if !nonce_challenge(&result)
            || !self
                .learn_nonce(&uri, sent, session_id.as_deref(), &custom_headers)
                .await
        {
            return result;
        }
        let (token, headers) = self.authorize("POST", &uri, auth_token, custom_headers)?;
        self.inner
            .post_message_with_response_limits(uri, message, session_id, token, headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let (token, headers) = self.authorize("DELETE", &uri, auth_token, custom_headers)?;
        self.inner
            .delete_session(uri, session_id, token, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let (token, headers) = self.authorize("GET", &uri, auth_token, custom_headers)?;
        self.inner
            .get_stream(uri, session_id, last_event_id, token, headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let (token, headers) = self.authorize("GET", &uri, auth_token, custom_headers)?;
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                token,
                headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::dpop_key::DpopKey;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;

    /// Decodes a proof and checks its signature with the public key in its own header.
    fn verified(proof: &str) -> (serde_json::Value, serde_json::Value) {
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value =
            serde_json::from_slice(&B64.decode(parts[0]).unwrap()).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&B64.decode(parts[1]).unwrap()).unwrap();
        let jwk = &header["jwk"];
        let mut point = vec![4u8];
        point.extend(B64.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(B64.decode(jwk["y"].as_str().unwrap()).unwrap());
        let key = aws_lc_rs::signature::UnparsedPublicKey::new(
            &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED,
            point,
        );
        key.verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &B64.decode(parts[2]).unwrap(),
        )
        .expect("the proof's signature verifies with its jwk");
        (header, claims)
    }

    #[test]
    fn a_proof_is_signed_by_the_stored_key_and_names_the_request_without_its_query() {
        let key = DpopKey::generate().unwrap();
        let key = DpopKey::from_stored(key.stored()).unwrap();
        let proof = key
            .proof(
                "POST",
                "https://user:pw@mcp.example/mcp?tenant=1#x",
                Some("n-1"),
                Some("the-token"),
            )
            .unwrap();
        let (header, claims) = verified(&proof);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        let ath = B64.encode(aws_lc_rs::digest::digest(
            &aws_lc_rs::digest::SHA256,
            b"the-token",
        ));
        assert_eq!(claims["ath"], ath.as_str());
        assert!(claims["iat"].as_u64().unwrap() > 1_700_000_000);
        let again = key
            .proof("POST", "https://mcp.example/mcp", None, None)
            .unwrap();
        let (_, again) = verified(&again);
        assert_ne!(claims["jti"], again["jti"], "a fresh jti each time");
        assert!(again.get("ath").is_none() && again.get("nonce").is_none());
        // The key a token is bound to (`cnf.jkt`, RFC 7638) is the one in the proof's header.
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#,
            header["jwk"]["x"], header["jwk"]["y"]
        );
        let own = format!(
            r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#,
            key.jwk["x"], key.jwk["y"]
        );
        assert_eq!(canonical, own);
        assert!(!format!("{key:?}").contains(key.stored()));
    }

    #[test]
    fn a_stored_key_that_is_not_one_is_named_without_its_content() {
        let why = DpopKey::from_stored("bm90IGEga2V5").unwrap_err();
        assert!(why.contains("not a P-256 private key"), "{why}");
        assert!(!why.contains("bm90"));
    }

    #[test]
    fn dpop_is_used_where_offered_always_when_asked_unless_es256_is_refused() {
        let metadata = |algs: Option<serde_json::Value>| {
            let mut m: AuthorizationMetadata = serde_json::from_value(serde_json::json!({
                "authorization_endpoint": "https://as.example/authorize",
                "token_endpoint": "https://as.example/token",
            }))
            .unwrap();
            if let Some(algs) = algs {
                m.additional_fields
                    .insert("dpop_signing_alg_values_supported".into(), algs);
            }
            m
        };
        let es256 = metadata(Some(serde_json::json!(["ES256", "RS256"])));
        let rs256 = metadata(Some(serde_json::json!(["RS256"])));
        let none = metadata(None);
        assert_eq!(wanted(DpopMode::WhereOffered, &es256), Ok(true));
        assert_eq!(wanted(DpopMode::WhereOffered, &rs256), Ok(false));
        assert_eq!(wanted(DpopMode::WhereOffered, &none), Ok(false));
        assert_eq!(wanted(DpopMode::Never, &es256), Ok(false));
        assert_eq!(wanted(DpopMode::Always, &none), Ok(true));
        assert_eq!(wanted(DpopMode::Always, &es256), Ok(true));
        let why = wanted(DpopMode::Always, &rs256).unwrap_err();
        assert!(why.contains("ES256") && why.contains("oauth.dpop"), "{why}");
    }

    #[test]
    fn a_dpop_token_type_is_handed_on_as_bearer_only_where_asked() {
        let client = DpopTokenClient::new(
            Dpop::new(FileStore::new(
                std::env::temp_dir().join("unused-dpop-store.json"),
            )),
            "https://as.example/token?x=1",
            crate::client::oauth::address_policy::Policy::for_server("https://mcp.example/mcp"),
        )
        .unwrap();
        assert_eq!(client.token_endpoint, "https://as.example/token");
        let answer = |body: &str| {
            http::Response::builder()
                .status(200)
                .header(http::header::CONTENT_LENGTH, body.len())
                .body(body.as_bytes().to_vec())
                .unwrap()
        };
        let dpop = r#"{"access_token":"a","token_type":"DPoP","expires_in":60}"#;
        let kept = client.handed_on(answer(dpop));
        assert_eq!(kept.body(), dpop.as_bytes());
        let client = client.answering_bearer();
        let handed = client.handed_on(answer(dpop));
        let doc: serde_json::Value = serde_json::from_slice(handed.body()).unwrap();
        assert_eq!(doc["token_type"], "Bearer");
        assert_eq!(doc["access_token"], "a");
        assert!(handed.headers().get(http::header::CONTENT_LENGTH).is_none());
    }

    #[test]
    fn a_nonce_challenge_is_told_from_other_challenges() {
        assert!(asks_for_nonce(
            r#"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce""#
        ));
        assert!(!asks_for_nonce(r#"DPoP error="invalid_token""#));
        assert!(!asks_for_nonce(r#"Bearer resource_metadata="https://x/""#));
    }
}
