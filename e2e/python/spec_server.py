"""Plain JSON-RPC MCP servers over stdio that follow the specification, for edge cases the SDKs
do not produce on demand. Standard library only.

    python spec_server.py initialize-2027   # rejects server/discover, answers initialize with 2027-03-01
    python spec_server.py discover-2027     # server/discover: unsupported version, supported [2027-03-01]
    python spec_server.py tasks             # 2026-07-28; every tools/call becomes a task
    python spec_server.py mrtr              # 2026-07-28; tools/call `confirm` asks for an
                                            # elicitation (input_required + requestState) first
"""

import json
import sys

MODE = sys.argv[1]
POLLS = {}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def discovered(name: str) -> dict:
    """A complete `server/discover` answer of a 2026-07-28 server with tools, named `name`."""
    return {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": name, "version": "1.0"}},
    }


def result(rid, body):
    send({"jsonrpc": "2.0", "id": rid, "result": body})


def error(rid, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": rid, "error": err})


TOOLS = [
    {"name": n, "inputSchema": {"type": "object"}}
    for n in ("task_ok", "task_fails", "task_needs_input", "task_never_ends")
]


def task(task_id, status, **extra):
    body = {
        "taskId": task_id,
        "status": status,
        "createdAt": "2026-12-01T00:00:00Z",
        "lastUpdatedAt": "2026-12-01T00:00:00Z",
        "ttlMs": None,
        "pollIntervalMs": 20,
    }
    body.update(extra)
    return body


def on_request(rid, method, params):
    if MODE == "initialize-2027":
        if method == "server/discover":
            return error(rid, -32601, "Method not found")
        if method == "initialize":
            return result(rid, {
                "protocolVersion": "2027-03-01",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "future-server", "version": "9.0"},
            })
    if MODE == "discover-2027":
        if method == "server/discover":
            return error(rid, -32022, "Unsupported protocol version",
                         {"supported": ["2027-03-01"], "requested": "2026-07-28"})
        if method == "initialize":
            return error(rid, -32602, "Unsupported protocol version",
                         {"supported": ["2027-03-01"]})
    if MODE == "mrtr":
        if method == "server/discover":
            return result(rid, discovered("mrtr-server"))
        if method == "tools/list":
            return result(rid, {"resultType": "complete", "tools": [
                {"name": "confirm", "inputSchema": {"type": "object"}}]})
        if method == "tools/call":
            answers = params.get("inputResponses")
            if not answers:
                return result(rid, {
                    "resultType": "input_required",
                    "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                        "mode": "form",
                        "message": "Deploy to production?",
                        "requestedSchema": {"type": "object", "properties": {
                            "confirmed": {"type": "boolean", "default": False}}}}}},
                    "requestState": f"state-{rid}",
                })
            text = json.dumps({"answer": answers.get("confirm"), "state": params.get("requestState")},
                              sort_keys=True)
            return result(rid, {"resultType": "complete", "content": [{"type": "text", "text": text}]})
    if MODE == "tasks":
        if method == "server/discover":
            return result(rid, discovered("task-server"))
        if method == "tools/list":
            return result(rid, {"resultType": "complete", "tools": TOOLS})
        if method == "tools/call":
            name = params.get("name")
            task_id = f"{name}-{rid}"
            POLLS[task_id] = 0
            return result(rid, dict(resultType="task", **task(task_id, "working")))
        if method == "tasks/get":
            task_id = params.get("taskId", "")
            POLLS[task_id] = POLLS.get(task_id, 0) + 1
            if POLLS[task_id] < 3 or task_id.startswith("task_never_ends"):
                return result(rid, dict(resultType="complete", **task(task_id, "working")))
            if task_id.startswith("task_ok"):
                return result(rid, dict(resultType="complete", **task(
                    task_id, "completed",
                    result={"content": [{"type": "text", "text": "done"}], "isError": False})))
            if task_id.startswith("task_fails"):
                return result(rid, dict(resultType="complete", **task(
                    task_id, "failed", error={"code": -32000, "message": "backend exploded"})))
            return result(rid, dict(resultType="complete", **task(
                task_id, "input_required",
                inputRequests={"confirm": {"method": "elicitation/create", "params": {
                    "message": "Really?", "requestedSchema": {"type": "object", "properties": {}}}}})))
        if method == "tasks/cancel":
            sys.stderr.write(f"cancelled {params.get('taskId')}\n")
            sys.stderr.flush()
            return result(rid, {"resultType": "complete"})
    return error(rid, -32601, f"Method not found: {method}")


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    message = json.loads(line)
    if "id" in message and "method" in message:
        on_request(message["id"], message["method"], message.get("params") or {})
