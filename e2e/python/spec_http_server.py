"""A plain streamable-HTTP MCP server (protocol 2025-11-25, sessions) that follows the
specification, for the HTTP edge cases: stale sessions, throttling, 401 and 403 with and without
a challenge. Standard library only. Prints `PORT <n>`.

    python spec_http_server.py MODE

| MODE | behaviour |
|---|---|
| `sessions` | `Bearer good` required; tool `expire` makes every session stale (then 401 + challenge on it); tool `revoke` rejects the token everywhere |
| `throttle-429` / `throttle-503` | the first request is answered 429 / 503 with `Retry-After: 1`; then `sessions` |
| `forbidden` | every request: 403 without a challenge |
| `forbidden-challenge` | every request: 403 with an `insufficient_scope` challenge |
| `unauthorized-bare` | every request: 401 without a challenge |
"""

import itertools
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
LOCK = threading.Lock()
STATE = {"stale": set(), "live": set(), "revoked": False, "throttled": 0, "initializes": 0}
IDS = itertools.count(1)
CHALLENGE = 'Bearer realm="spec", error="invalid_token"'


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        message = json.loads(self.rfile.read(length) or b"{}")
        if MODE == "forbidden":
            return self.reply(403)
        if MODE == "forbidden-challenge":
            return self.reply(403, headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="tools"')])
        if MODE == "unauthorized-bare":
            return self.reply(401)
        if MODE.startswith("throttle-"):
            with LOCK:
                first = STATE["throttled"] == 0
                STATE["throttled"] += 1
            if first:
                return self.reply(int(MODE.split("-")[1]), headers=[("Retry-After", "1")])
        if self.headers.get("Authorization") != "Bearer good" or STATE["revoked"]:
            return self.reply(401, headers=[("WWW-Authenticate", CHALLENGE)])
        method = message.get("method")
        rid = message.get("id")
        if rid is None:
            return self.reply(202)
        if method == "server/discover":
            return self.reply(200, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
        if method == "initialize":
            session = f"s{next(IDS)}"
            with LOCK:
                STATE["live"].add(session)
                STATE["initializes"] += 1
            return self.reply(200, {"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "spec-http", "version": "1.2.3"},
            }}, headers=[("Mcp-Session-Id", session)])
        session = self.headers.get("Mcp-Session-Id")
        if session in STATE["stale"]:
            return self.reply(401, headers=[("WWW-Authenticate", CHALLENGE)])
        if session not in STATE["live"]:
            return self.reply(404)
        if method == "ping":
            return self.reply(200, {"jsonrpc": "2.0", "id": rid, "result": {}})
        if method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "expire", "revoke", "stats")]
            return self.reply(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        if method == "tools/call":
            name = message["params"]["name"]
            with LOCK:
                if name == "expire":
                    STATE["stale"] |= STATE["live"]
                    STATE["live"] = set()
                if name == "revoke":
                    STATE["revoked"] = True
                text = json.dumps({"initializes": STATE["initializes"]}) if name == "stats" else name
            return self.reply(200, {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
        return self.reply(200, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"PORT {server.server_address[1]}", flush=True)
server.serve_forever()
