"""What ``ferrotool serve`` serves: a target's toolkit or the demo's, and each worker's app.

The transports themselves are the MCP wing's (`ferrotool.mcp.serve`).
"""

from __future__ import annotations

import os
from typing import Final

from starlette.types import ASGIApp

from ferrotool._session.state import SessionStore
from ferrotool.cli.demo import DEMO_CONTEXT, demo_toolkit
from ferrotool.cli.target import load_toolkit
from ferrotool.mcp.serve import http_app, store_from_url
from ferrotool.mcp.server import McpToolServer

ENV_TARGET: Final = "FERROTOOL_SERVE_TARGET"
ENV_STORE: Final = "FERROTOOL_SERVE_STORE"
ENV_HOST: Final = "FERROTOOL_SERVE_HOST"


def server_for(target: str | None, store: SessionStore | None) -> McpToolServer:
    """The server of ``MODULE:OBJECT``, or of the demo toolkit (with its context) for ``None``."""
    if target:
        return McpToolServer(load_toolkit(target), store=store)
    return McpToolServer(demo_toolkit(), store=store, context=DEMO_CONTEXT, name="ferrotool-demo")


def app_from_env() -> ASGIApp:
    """The streamable HTTP app described by the environment (for ``--workers``).

    Each worker process builds its own app from ``FERROTOOL_SERVE_TARGET`` (``MODULE:OBJECT``)
    and ``FERROTOOL_SERVE_STORE``; uvicorn calls this in every worker.
    """
    target = os.environ.get(ENV_TARGET)
    url = os.environ.get(ENV_STORE) or None
    server = server_for(target or None, store_from_url(url))
    return http_app(server, host=os.environ.get(ENV_HOST, "127.0.0.1"), redis_url=url)


__all__ = ["ENV_HOST", "ENV_STORE", "ENV_TARGET", "app_from_env", "server_for"]
