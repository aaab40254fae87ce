"""An OAuth 2.1 authorization server and the MCP resource server it protects, in one process,
built from the official MCP Python SDK (`mcp` on PyPI): `mcp.server.auth` gives the /authorize,
/token, /revoke and metadata endpoints around the provider below, and MCPServer checks every
request's bearer token against it (RFC 9728 protected resource metadata included).

The provider approves every authorization request at once (a test has no human to click) and
issues short-lived access tokens and refresh tokens. Test-only endpoints:

- POST /admin/revoke   revokes every token issued so far (the refresh tokens included);
- POST /admin/revoke-refresh  revokes only the refresh tokens: the access tokens keep working
                       until they expire, the next refresh is `invalid_grant`;
- GET  /admin/stats    what was issued: counts, the last access token's expiry, every token value
                       (so the test can check that none leaks), the clients registered;
- POST /admin/rotate-job-secret  gives the client-credentials client a new secret (the old one is
                       refused from then on).

Dynamic Client Registration (the SDK's /register) is on. `--iss` sends the RFC 9207 `iss` in
authorization responses and advertises `authorization_response_iss_parameter_supported`.
`--job-secret S` registers the confidential client `mcp-readiness-job` (client_secret_post) and
answers `grant_type=client_credentials` for it at /token: the SDK's ClientAuthenticator checks the
secret, the provider issues an access token without a refresh token.
`--workload-subject SUB` answers the JWT-bearer grant (RFC 7523, workload identity) at /token:
an unexpired assertion for this server (`aud`) whose `sub` is SUB gets an access token without
a refresh token (the signature is not checked: a test's tokens are unsigned); anything else is
`invalid_grant`. POST /admin/distrust-workload refuses every assertion from then on.

`--idp-subject SUB` adds an enterprise identity provider (issuer `<base>/idp`) for
enterprise-managed authorization (SEP-990): POST /idp/token answers the RFC 8693 token exchange of
an unexpired ID token whose `sub` is SUB with an ID-JAG (`typ` oauth-id-jag+jwt, issued to client
`mcp-readiness-enterprise`, unsigned like the test's tokens), and /token answers the JWT-bearer
grant of such an ID-JAG for that client. POST /admin/idp-refuse makes the identity provider refuse
every exchange (POST /admin/idp-accept undoes it); POST /admin/distrust-idp makes the authorization server refuse every ID-JAG.

`--dpop` makes both servers DPoP servers (RFC 9449): the metadata offers
`dpop_signing_alg_values_supported: ["ES256"]`; /token wants a valid proof (ES256 signature by the
`jwk` of its header, `htm`, `htu`, a recent `iat`, a `jti` never seen) with the authorization
server's nonce (`400 use_dpop_nonce` and `DPoP-Nonce` first) and issues `token_type: DPoP`
tokens bound to the proof's key; /mcp wants such a token with the `DPoP` scheme and a valid proof
(the same checks, plus `ath` and the key the token is bound to) with the resource server's nonce
(`401 use_dpop_nonce` first), and refuses a bound token sent as `Bearer`. GET /admin/stats adds
`dpop`: the token requests and MCP requests accepted, the nonce challenges, the refusals and their
reasons, every proof accepted at /token, and every proof accepted at /mcp with its token (so the
test can replay one and check that none leaks).

Usage: oauth_server.py --port P --callback URL [--access-ttl S] [--refresh-ttl S] [--iss]
       [--job-secret S] [--workload-subject SUB] [--idp-subject SUB] [--dpop]
Prints `PORT <p>` when listening.
"""

import argparse
import base64
import hashlib
import json
import secrets
import sys
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import uvicorn
from starlette.requests import Request as StarletteRequest
from pydantic import AnyHttpUrl, AnyUrl
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

CLIENT_ID = "mcp-readiness-test"
JOB_CLIENT_ID = "mcp-readiness-job"
ENTERPRISE_CLIENT_ID = "mcp-readiness-enterprise"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def claims_of(jwt: str) -> tuple[dict, dict]:
    """The header and claims of a compact JWT (not verified); ValueError when it is not one."""
    parts = jwt.split(".")
    if len(parts) != 3:
        raise ValueError("not a JWT")
    decode = lambda part: json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decode(parts[0]), decode(parts[1])


class Provider:
    """In-memory OAuthAuthorizationServerProvider that auto-approves."""

    def __init__(self, callback: str, access_ttl: int, refresh_ttl: int | None, issuer: str | None):
        self.issuer = issuer
        self.client_credentials = 0
        self.jwt_bearer = 0
        self.assertions = []
        self.workload_subject = None
        self.access_ttl = access_ttl
        self.refresh_ttl = refresh_ttl
        self.clients = {
            CLIENT_ID: OAuthClientInformationFull(
                client_id=CLIENT_ID,
                redirect_uris=[AnyUrl(callback)],
                token_endpoint_auth_method="none",
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                scope="tools",
            )
        }
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.issued: list[str] = []
        self.refreshes = 0
        self.logins = 0
        self.last_access_expires_at = 0
        self.last_refresh_expires_at = 0

    async def get_client(self, client_id: str):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["tools"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    async def load_authorization_code(self, client, authorization_code: str):
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        now = int(time.time())
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + self.access_ttl,
            resource=resource,
        )
        refresh_expires = now + self.refresh_ttl if self.refresh_ttl else None
        self.refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=refresh_expires,
            resource=resource,
        )
        self.issued += [access, refresh]
        self.last_access_expires_at = now + self.access_ttl
        self.last_refresh_expires_at = refresh_expires or 0
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    def issue_access_only(self, client_id: str, scopes: list[str], grant: str = "client_credentials") -> dict:
        """A client-credentials (or JWT-bearer) token: an access token, no refresh token."""
        now = int(time.time())
        access = "cc-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=now + self.access_ttl
        )
        self.issued.append(access)
        if grant == "client_credentials":
            self.client_credentials += 1
        else:
            self.jwt_bearer += 1
        self.last_access_expires_at = now + self.access_ttl
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.access_ttl,
            "scope": " ".join(scopes),
        }

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        self.logins += 1
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token: str):
        token = self.refresh.get(refresh_token)
        return token if token and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        # Rotate: the old refresh token is spent.
        self.refresh.pop(refresh_token.token, None)
        self.refreshes += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str):
        return self.access.get(token)

    async def revoke_token(self, token) -> None:
        self.access.clear()
        self.refresh.clear()


def advertise_iss(doc) -> bool:
    doc["authorization_response_iss_parameter_supported"] = True
    return True


def advertise_dpop(doc) -> bool:
    doc["dpop_signing_alg_values_supported"] = ["ES256"]
    return True


async def edit_json_answer(app, scope, receive, send, edit):
    """Runs `app` and sends its answer with the JSON body changed by `edit` (which changes the
    parsed document in place and says whether it did), `Content-Length` set again; a body that is
    not JSON passes unchanged."""
    start = {}
    body = []

    async def capture(message):
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))
            if not message.get("more_body"):
                data = b"".join(body)
                try:
                    doc = json.loads(data)
                    if edit(doc):
                        data = json.dumps(doc).encode()
                except ValueError:
                    pass
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(data)).encode()))
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": data})

    await app(scope, receive, capture)


class RefreshLifetime:
    """Adds `refresh_token_expires_in` to /token answers (the SDK's OAuthToken has no such field;
    many authorization servers send it)."""

    def __init__(self, app, provider: Provider):
        self.app = app
        self.provider = provider

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/token" or not self.provider.refresh_ttl:
            return await self.app(scope, receive, send)
        await edit_json_answer(self.app, scope, receive, send, self.add_lifetime)

    def add_lifetime(self, doc):
        if "refresh_token" in doc:
            doc["refresh_token_expires_in"] = self.provider.refresh_ttl
            return True
        return False


class ClientCredentials:
    """Answers `grant_type=client_credentials` at /token (the SDK's token handler has no such
    grant): the SDK's ClientAuthenticator authenticates the client, the provider issues the token.
    Every other request goes to the app unchanged."""

    def __init__(self, app, provider: Provider):
        self.app = app
        self.provider = provider

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/token" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        replay = replaying(body)
        request = StarletteRequest(scope, replay)
        form = await request.form()
        if form.get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            response = self.jwt_bearer(form, request.headers.get("authorization", ""))
            return await response(scope, replay, send)
        if form.get("grant_type") != "client_credentials":
            # The form was read: the app gets the body replayed afresh.
            return await self.app(scope, replaying(body), send)
        try:
            client = await ClientAuthenticator(self.provider).authenticate_request(request)
        except AuthenticationError as e:
            response = JSONResponse({"error": "invalid_client", "error_description": e.message}, status_code=401)
            return await response(scope, replay, send)
        scopes = str(form.get("scope") or "tools").split()
        response = JSONResponse(self.provider.issue_access_only(client.client_id, scopes))
        return await response(scope, replay, send)


    def jwt_bearer(self, form, authorization: str = ""):
        """RFC 7523: the assertion's claims decide (its signature is not checked here)."""
        provider = self.provider
        refuse = lambda why: JSONResponse({"error": "invalid_grant", "error_description": why}, status_code=400)
        try:
            header, claims = claims_of(str(form.get("assertion") or ""))
        except ValueError:
            header, claims = {}, {}
        if header.get("typ") == "oauth-id-jag+jwt":
            provider.id_jag_grants += 1
            client_id = str(form.get("client_id") or "")
            if authorization.startswith("Basic "):
                client_id = base64.b64decode(authorization[6:]).decode().split(":", 1)[0]
            if not provider.idp_trusted:
                return refuse("this authorization server does not trust the identity provider")
            if claims.get("iss") != provider.idp_issuer or claims.get("client_id") != client_id:
                return refuse("the ID-JAG is not for this client from the trusted identity provider")
            if claims.get("exp", 0) <= time.time():
                return refuse("the ID-JAG expired")
            scopes = str(claims.get("scope") or "tools").split()
            return JSONResponse(provider.issue_access_only(client_id, scopes, grant="jwt_bearer"))
        if provider.workload_subject is None:
            return refuse("this authorization server trusts no workload")
        try:
            payload = str(form.get("assertion") or "").split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (IndexError, ValueError):
            return refuse("the assertion is not a JWT")
        provider.assertions.append(claims.get("jti"))
        if claims.get("sub") != provider.workload_subject:
            return refuse(f"subject {claims.get('sub')!r} is not trusted")
        if claims.get("exp", 0) <= time.time():
            return refuse("the assertion expired")
        scopes = str(form.get("scope") or "tools").split()
        client_id = str(form.get("client_id") or "workload")
        return JSONResponse(provider.issue_access_only(client_id, scopes, grant="jwt_bearer"))


class IssAdvertised:
    """Adds `authorization_response_iss_parameter_supported: true` to the authorization server
    metadata (RFC 9207 §3)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/.well-known/oauth-authorization-server"):
            return await self.app(scope, receive, send)
        await edit_json_answer(self.app, scope, receive, send, advertise_iss)


def b64d(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DpopState:
    """What the DPoP servers know: the nonces, the jti seen, the tokens bound to keys."""

    def __init__(self):
        self.as_nonce = "as-" + secrets.token_urlsafe(12)
        self.rs_nonce = "rs-" + secrets.token_urlsafe(12)
        self.jtis = set()
        self.bound = {}  # access token -> JWK thumbprint
        self.token_requests = 0
        self.requests = 0
        self.as_challenges = 0
        self.rs_challenges = 0
        self.refused = []
        self.token_proofs = []
        self.proofs = []

    def stats(self) -> dict:
        return {
            "token_requests": self.token_requests,
            "requests": self.requests,
            "as_nonce_challenges": self.as_challenges,
            "rs_nonce_challenges": self.rs_challenges,
            "refused": self.refused,
            "token_proofs": self.token_proofs,
            "proofs": self.proofs,
            "bound": len(self.bound),
        }

    def verify(self, proof: str, method: str, url: str, token: str | None = None) -> tuple[str, dict, str]:
        """Checks a proof (RFC 9449 §4.3) and returns its key's thumbprint, its claims and its jti; ValueError why not."""
        parts = (proof or "").split(".")
        if len(parts) != 3:
            raise ValueError("no DPoP proof, or not a JWT")
        try:
            header, claims = json.loads(b64d(parts[0])), json.loads(b64d(parts[1]))
        except ValueError:
            raise ValueError("the proof is not a JWT")
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
            raise ValueError("typ must be dpop+jwt and alg ES256")
        jwk = header.get("jwk") or {}
        if "d" in jwk or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
            raise ValueError("jwk must be a public P-256 key")
        try:
            key = ec.EllipticCurvePublicNumbers(
                int.from_bytes(b64d(jwk["x"]), "big"), int.from_bytes(b64d(jwk["y"]), "big"), ec.SECP256R1()
            ).public_key()
            signature = b64d(parts[2])
            if len(signature) != 64:
                raise ValueError("bad signature length")
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
        except (KeyError, ValueError, InvalidSignature):
            raise ValueError("the proof's signature does not verify with its jwk")
        if claims.get("htm") != method:
            raise ValueError("htm is not the request's method")
        if claims.get("htu") != url:
            raise ValueError("htu is not the request's URL")
        if abs(time.time() - float(claims.get("iat") or 0)) > 60:
            raise ValueError("iat is not recent")
        if token is not None and claims.get("ath") != b64e(hashlib.sha256(token.encode()).digest()):
            raise ValueError("ath is not the hash of the access token")
        jti = claims.get("jti")
        if not jti or jti in self.jtis:
            raise ValueError("the jti was seen before: a replayed proof")
        canonical = json.dumps(
            {"crv": "P-256", "kty": "EC", "x": jwk["x"], "y": jwk["y"]}, separators=(",", ":"), sort_keys=True
        )
        return b64e(hashlib.sha256(canonical.encode()).digest()), claims, jti


async def read_body(receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def replaying(body: bytes):
    sent = False

    async def replay():
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class DpopServers:
    """The DPoP checks of the authorization server (/token) and the resource server (/mcp), in
    front of the SDK's app (see the module's `--dpop`)."""

    def __init__(self, app, base: str, state: DpopState):
        self.app = app
        self.base = base
        self.state = state

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path.startswith("/.well-known/oauth-authorization-server"):
            return await self.metadata(scope, receive, send)
        if path == "/token" and scope["method"] == "POST":
            return await self.token(scope, receive, send)
        if path == "/mcp" or path.startswith("/mcp/"):
            return await self.resource(scope, receive, send)
        return await self.app(scope, receive, send)

    async def metadata(self, scope, receive, send):
        await edit_json_answer(self.app, scope, receive, send, advertise_dpop)

    async def token(self, scope, receive, send):
        state = self.state
        body = await read_body(receive)
        request = StarletteRequest(scope, replaying(body))
        try:
            thumbprint, claims, jti = state.verify(
                request.headers.get("dpop", ""), "POST", f"{self.base}/token"
            )
        except ValueError as e:
            state.refused.append(f"token: {e}")
            response = JSONResponse({"error": "invalid_dpop_proof", "error_description": str(e)}, status_code=400)
            return await response(scope, replaying(body), send)
        state.jtis.add(jti)
        if claims.get("nonce") != state.as_nonce:
            state.as_challenges += 1
            response = JSONResponse(
                {"error": "use_dpop_nonce", "error_description": "Authorization server requires nonce in DPoP proof"},
                status_code=400,
                headers={"DPoP-Nonce": state.as_nonce},
            )
            return await response(scope, replaying(body), send)
        state.token_requests += 1
        state.token_proofs.append(request.headers.get("dpop", ""))

        def bind(doc) -> bool:
            if "access_token" in doc:
                state.bound[doc["access_token"]] = thumbprint
                doc["token_type"] = "DPoP"
                return True
            return False

        await edit_json_answer(self.app, scope, replaying(body), send, bind)

    async def resource(self, scope, receive, send):
        state = self.state
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        authorization = headers.get("authorization", "")
        scheme, _, token = authorization.partition(" ")

        async def refuse(error: str, why: str, nonce: bool = False):
            extra = {"DPoP-Nonce": state.rs_nonce} if nonce else {}
            response = JSONResponse(
                {"error": error, "error_description": why},
                status_code=401,
                headers={
                    "WWW-Authenticate": f'DPoP error="{error}", error_description="{why}", '
                    f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"',
                    **extra,
                },
            )
            return await response(scope, receive, send)

        if scheme.lower() == "bearer" and token in state.bound:
            state.refused.append("resource: a DPoP-bound token sent as a bearer token")
            return await refuse("invalid_token", "a DPoP-bound token needs the DPoP scheme and a proof")
        if scheme.lower() != "dpop":
            return await self.app(scope, receive, send)
        try:
            thumbprint, claims, jti = state.verify(headers.get("dpop", ""), scope["method"], f"{self.base}/mcp", token)
            if state.bound.get(token) != thumbprint:
                raise ValueError("the proof's key is not the key the token is bound to (cnf.jkt)")
        except ValueError as e:
            state.refused.append(f"resource: {e}")
            return await refuse("invalid_dpop_proof", str(e))
        state.jtis.add(jti)
        if claims.get("nonce") != state.rs_nonce:
            state.rs_challenges += 1
            return await refuse("use_dpop_nonce", "Resource server requires nonce in DPoP proof", nonce=True)
        state.requests += 1
        state.proofs.append([headers.get("dpop", ""), token])
        rewritten = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
        rewritten.append((b"authorization", f"Bearer {token}".encode()))
        return await self.app({**scope, "headers": rewritten}, receive, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--callback", required=True)
    parser.add_argument("--access-ttl", type=int, default=4)
    parser.add_argument("--refresh-ttl", type=int, default=0)
    parser.add_argument("--iss", action="store_true")
    parser.add_argument("--job-secret", default=None)
    parser.add_argument("--workload-subject", default=None)
    parser.add_argument("--idp-subject", default=None)
    parser.add_argument("--dpop", action="store_true")
    args = parser.parse_args()
    dpop = DpopState()

    base = f"http://127.0.0.1:{args.port}"
    provider = Provider(args.callback, args.access_ttl, args.refresh_ttl or None, base if args.iss else None)
    provider.workload_subject = args.workload_subject
    provider.idp_subject = args.idp_subject
    provider.idp_issuer = f"{base}/idp"
    provider.idp_refuses = False
    provider.idp_trusted = args.idp_subject is not None
    provider.token_exchanges = 0
    provider.id_jag_grants = 0
    if args.job_secret:
        provider.clients[JOB_CLIENT_ID] = OAuthClientInformationFull(
            client_id=JOB_CLIENT_ID,
            client_secret=args.job_secret,
            redirect_uris=[AnyUrl(args.callback)],
            token_endpoint_auth_method="client_secret_post",
            grant_types=["authorization_code", "client_credentials"],
            response_types=["code"],
            scope="tools",
        )
    server = MCPServer(
        name="oauth-fixture",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["tools"], default_scopes=["tools"]),
            revocation_options=RevocationOptions(enabled=True),
            required_scopes=["tools"],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Echoes its input."""
        return text

    @server.custom_route("/admin/revoke", methods=["POST"])
    async def revoke(request: Request):
        await provider.revoke_token(None)
        return JSONResponse({"revoked": True})

    @server.custom_route("/admin/revoke-refresh", methods=["POST"])
    async def revoke_refresh(request: Request):
        provider.refresh.clear()
        return JSONResponse({"revoked": True})

    @server.custom_route("/admin/stats", methods=["GET"])
    async def stats(request: Request):
        return JSONResponse(
            {
                "logins": provider.logins,
                "refreshes": provider.refreshes,
                "last_access_expires_at": provider.last_access_expires_at,
                "last_refresh_expires_at": provider.last_refresh_expires_at,
                "issued": provider.issued,
                "client_credentials": provider.client_credentials,
                "jwt_bearer": provider.jwt_bearer,
                "token_exchanges": provider.token_exchanges,
                "id_jag_grants": provider.id_jag_grants,
                "assertions": provider.assertions,
                "clients": sorted(provider.clients),
                "secrets": sorted(c.client_secret for c in provider.clients.values() if c.client_secret),
                "dpop": dpop.stats(),
            }
        )

    @server.custom_route("/idp/token", methods=["POST"])
    async def idp_token(request: Request):
        """The enterprise identity provider's RFC 8693 token exchange: ID token -> ID-JAG."""
        form = await request.form()
        provider.token_exchanges += 1
        refuse = lambda code, why: JSONResponse({"error": code, "error_description": why}, status_code=400)
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
            return refuse("unsupported_grant_type", "only token exchange")
        if (
            form.get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token"
            or form.get("requested_token_type") != ID_JAG
            or not form.get("audience")
            or not form.get("resource")
        ):
            return refuse("invalid_request", "missing or wrong token exchange parameters")
        if provider.idp_subject is None or provider.idp_refuses:
            return refuse("invalid_grant", "this identity provider refuses the exchange")
        try:
            _, id_token = claims_of(str(form.get("subject_token") or ""))
        except ValueError:
            return refuse("invalid_grant", "the subject token is not a JWT")
        provider.assertions.append(id_token.get("jti"))
        now = int(time.time())
        if id_token.get("sub") != provider.idp_subject or id_token.get("exp", 0) <= now:
            return refuse("invalid_grant", "the ID token is expired or not for a known user")
        claims = {
            "iss": provider.idp_issuer,
            "sub": id_token["sub"],
            "aud": str(form.get("audience")),
            "client_id": ENTERPRISE_CLIENT_ID,
            "resource": str(form.get("resource")),
            "jti": secrets.token_hex(8),
            "iat": now,
            "exp": now + 60,
        }
        answer = {"issued_token_type": ID_JAG, "token_type": "N_A"}
        if form.get("scope"):
            claims["scope"] = answer["scope"] = str(form.get("scope"))
        jag = f"{b64({'alg': 'ES256', 'typ': 'oauth-id-jag+jwt'})}.{b64(claims)}.c2ln"
        provider.issued.append(jag)
        return JSONResponse({"access_token": jag, **answer})

    def admin_switch(path, field, value, answer):
        """`POST path` sets the provider's `field` to `value` and answers `answer`."""

        @server.custom_route(path, methods=["POST"])
        async def switch(request: Request):
            setattr(provider, field, value)
            return JSONResponse(answer)

    for path, field, value, answer in [
        ("/admin/idp-refuse", "idp_refuses", True, {"refusing": True}),
        ("/admin/idp-accept", "idp_refuses", False, {"refusing": False}),
        ("/admin/distrust-idp", "idp_trusted", False, {"distrusted": True}),
        ("/admin/distrust-workload", "workload_subject", None, {"distrusted": True}),
    ]:
        admin_switch(path, field, value, answer)

    @server.custom_route("/admin/rotate-job-secret", methods=["POST"])
    async def rotate(request: Request):
        client = provider.clients.get(JOB_CLIENT_ID)
        if client is not None:
            client.client_secret = secrets.token_hex(16)
        return JSONResponse({"rotated": client is not None})

    app = ClientCredentials(RefreshLifetime(server.streamable_http_app(), provider), provider)
    if args.iss:
        app = IssAdvertised(app)
    if args.dpop:
        app = DpopServers(app, base, dpop)
    print(f"PORT {args.port}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    sys.exit(main())
