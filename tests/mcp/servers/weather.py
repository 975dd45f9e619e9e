"""A local stand-in for the weather server of docs/mcp.md: ``python weather.py PORT`` (over HTTP).

Its one tool, ``forecast`` (read-only, so it runs unasked), answers with the units it was given
and the caller's ``Authorization`` header, so that a test sees the preset and the per-call
headers arrive.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

server = MCPServer("weather")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str, units: str, ctx: Context) -> str:
    """Tomorrow's forecast for a city."""
    degrees = "4 °C" if units == "metric" else "39 °F"
    caller = (ctx.headers or {}).get("authorization", "nobody")
    return f"{city}: {degrees}, for {caller}"


if __name__ == "__main__":
    server.run("streamable-http", port=int(sys.argv[1]))
