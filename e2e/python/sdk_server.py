"""An MCP server built with the official Python SDK (`mcp` 2.3.0 from PyPI) for the protocol tests.

It speaks 2026-07-28 (`server/discover`, `subscriptions/listen`) and the older versions
(`initialize`), as the SDK does. Five tools; `add_tool` adds a sixth (`extra`) and announces the
change to `subscriptions/listen` subscribers (2026-07-28) and as
`notifications/tools/list_changed` (older sessions).

    python sdk_server.py            # stdio
    python sdk_server.py --http     # streamable HTTP on 127.0.0.1, prints `PORT <n>`
"""

import os
import socket
import sys

from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("py-sdk-fixture", version="2.3.0-fixture")


@mcp.tool()
def echo(text: str = "") -> str:
    """Echoes its text."""
    return text


@mcp.tool()
def one() -> str:
    """Returns 1."""
    return "1"


@mcp.tool()
def pid() -> str:
    """This process's id."""
    return str(os.getpid())


@mcp.tool()
def fail_json_rpc() -> str:
    """Fails with a JSON-RPC error."""
    from mcp.shared.exceptions import MCPError

    raise MCPError(code=-32602, message="bad arguments")


def extra() -> str:
    """The tool `add_tool` adds."""
    return "extra"


@mcp.tool()
async def add_tool(ctx: Context) -> str:
    """Adds the tool `extra` and announces the change."""
    mcp.add_tool(extra, name="extra")
    await ctx.notify_tools_changed()
    try:
        await ctx.request_context.session.send_tool_list_changed()
    except Exception:  # 2026-07-28 sessions have no connection-wide notifications
        pass
    return "added"


if __name__ == "__main__":
    if "--http" in sys.argv:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        print(f"PORT {port}", flush=True)
        mcp.run("streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run()
