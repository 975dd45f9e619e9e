"""A FastMCP server: ``python fastmcp_server.py PORT`` serves it over streamable HTTP at ``/mcp``.

Tools: ``count`` (reports progress 1/3, 2/3, 3/3, each with a message) and ``add``.
"""

from __future__ import annotations

import sys

from fastmcp import Context, FastMCP

server: FastMCP = FastMCP("fastmcp-test")


@server.tool
async def count(ctx: Context) -> str:
    """Count to three, reporting each step."""
    for step in (1, 2, 3):
        await ctx.report_progress(step, 3, f"step {step} of 3")
    return "counted"


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
