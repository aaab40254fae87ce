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

Usage: oauth_server.py --port P --callback URL [--access-ttl S] [--refresh-ttl S] [--iss]
       [--job-secret S] [--workload-subject SUB] [--idp-subject SUB]
Prints `PORT <p>` when listening.
"""

import argparse
import base64
import json
import secrets
import sys
import time

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


class RefreshLifetime:
    """Adds `refresh_token_expires_in` to /token answers (the SDK's OAuthToken has no such field;
    many authorization servers send it)."""

    def __init__(self, app, provider: Provider):
        self.app = app
        self.provider = provider

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/token" or not self.provider.refresh_ttl:
            return await self.app(scope, receive, send)
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
                        if "refresh_token" in doc:
                            doc["refresh_token_expires_in"] = self.provider.refresh_ttl
                            data = json.dumps(doc).encode()
                    except ValueError:
                        pass
                    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(data)).encode()))
                    await send({**start, "headers": headers})
                    await send({"type": "http.response.body", "body": data})

        await self.app(scope, receive, capture)


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
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        request = StarletteRequest(scope, replay)
        form = await request.form()
        if form.get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            response = self.jwt_bearer(form, request.headers.get("authorization", ""))
            return await response(scope, replay, send)
        if form.get("grant_type") != "client_credentials":
            sent = False
            return await self.app(scope, replay, send)
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
                        doc["authorization_response_iss_parameter_supported"] = True
                        data = json.dumps(doc).encode()
                    except ValueError:
                        pass
                    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(data)).encode()))
                    await send({**start, "headers": headers})
                    await send({"type": "http.response.body", "body": data})

        await self.app(scope, receive, capture)


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
    args = parser.parse_args()

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

    @server.custom_route("/admin/idp-refuse", methods=["POST"])
    async def idp_refuse(request: Request):
        provider.idp_refuses = True
        return JSONResponse({"refusing": True})

    @server.custom_route("/admin/idp-accept", methods=["POST"])
    async def idp_accept(request: Request):
        provider.idp_refuses = False
        return JSONResponse({"refusing": False})

    @server.custom_route("/admin/distrust-idp", methods=["POST"])
    async def distrust_idp(request: Request):
        provider.idp_trusted = False
        return JSONResponse({"distrusted": True})

    @server.custom_route("/admin/distrust-workload", methods=["POST"])
    async def distrust(request: Request):
        provider.workload_subject = None
        return JSONResponse({"distrusted": True})

    @server.custom_route("/admin/rotate-job-secret", methods=["POST"])
    async def rotate(request: Request):
        client = provider.clients.get(JOB_CLIENT_ID)
        if client is not None:
            client.client_secret = secrets.token_hex(16)
        return JSONResponse({"rotated": client is not None})

    app = ClientCredentials(RefreshLifetime(server.streamable_http_app(), provider), provider)
    if args.iss:
        app = IssAdvertised(app)
    print(f"PORT {args.port}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    sys.exit(main())
