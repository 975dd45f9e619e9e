"""A FastMCP server: ``python fastmcp_server.py PORT`` serves it over streamable HTTP at ``/mcp``.

Tools: ``count`` (reports progress 1/3, 2/3, 3/3, each with a message) and ``add``. Prompts:
``review`` (its file ``skill://review/checklist.md`` a resource) and ``greet`` (which needs a
``name``).
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


REVIEW = "Read the whole diff first, then comment on each file; see checklist.md."
CHECKLIST = "- tests cover the change\n- the docs say what changed\n"


@server.prompt
def review() -> str:
    """Review a change carefully."""
    return REVIEW


@server.prompt
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Say hello to {name}."


@server.resource("skill://review/checklist.md", mime_type="text/markdown")
def checklist() -> str:
    """What a review checks."""
    return CHECKLIST


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
