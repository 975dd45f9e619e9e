"""The SDK's own `MCPServer`: ``python sdk_server.py [stdio|sse|streamable-http PORT]``.

Tools: ``echo`` (read-only), ``whoami`` (the request's ``Authorization`` header), ``progress``
(two progress notifications) and ``add``.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

server = MCPServer("sdk-test")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo a text."""
    return text


@server.tool()
def whoami(ctx: Context) -> str:
    """The caller's Authorization header."""
    return (ctx.headers or {}).get("authorization", "nobody")


@server.tool()
async def progress(ctx: Context) -> str:
    """Reports progress twice."""
    await ctx.report_progress(1, 2, "half")
    await ctx.report_progress(2, 2, "all")
    return "done"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run()
    else:
        server.run(transport, port=int(sys.argv[2]))  # type: ignore[call-overload]
