"""What ``ferrotool serve`` serves: a target's toolkit or the demo's, and each worker's app.

The transports themselves are the MCP wing's (`ferrotool.mcp.serve`).
"""

from __future__ import annotations

import argparse
import os
from typing import Final, TypedDict

import orjson
from starlette.types import ASGIApp

from ferrotool._session.state import SessionStore
from ferrotool.cli.demo import DEMO_CONTEXT, demo_toolkit
from ferrotool.cli.target import load_toolkit
from ferrotool.mcp.serve import http_app, http_security, store_from_url
from ferrotool.mcp.server import McpToolServer

ENV_TARGET: Final = "FERROTOOL_SERVE_TARGET"
ENV_STORE: Final = "FERROTOOL_SERVE_STORE"
ENV_HOST: Final = "FERROTOOL_SERVE_HOST"
ENV_SECURITY: Final = "FERROTOOL_SERVE_SECURITY"


class SecurityOptions(TypedDict):
    """The HTTP security options of the command line (`ferrotool.mcp.serve.http_security`)."""

    auth_token_env: str | None
    auth_token_file: str | None
    allowed_hosts: list[str]
    allowed_origins: list[str]
    max_concurrent: int
    insecure_no_auth: bool


def security_options(args: argparse.Namespace) -> SecurityOptions:
    """The HTTP security options ``ferrotool serve`` was given."""
    return SecurityOptions(
        auth_token_env=args.auth_token_env,
        auth_token_file=args.auth_token_file,
        allowed_hosts=list(args.allowed_host),
        allowed_origins=list(args.allowed_origin),
        max_concurrent=args.max_concurrent_calls,
        insecure_no_auth=args.insecure_no_auth,
    )


def server_for(target: str | None, store: SessionStore | None) -> McpToolServer:
    """The server of ``MODULE:OBJECT``, or of the demo toolkit (with its context) for ``None``."""
    if target:
        return McpToolServer(load_toolkit(target), store=store)
    return McpToolServer(demo_toolkit(), store=store, context=DEMO_CONTEXT, name="ferrotool-demo")


def app_from_env() -> ASGIApp:
    """The streamable HTTP app described by the environment (for ``--workers``).

    Each worker process builds its own app from ``FERROTOOL_SERVE_TARGET`` (``MODULE:OBJECT``)
    and ``FERROTOOL_SERVE_STORE``, guarded as ``FERROTOOL_SERVE_SECURITY`` says (the JSON of
    `SecurityOptions`; each worker reads the tokens itself); uvicorn calls this in every worker.
    """
    target = os.environ.get(ENV_TARGET)
    url = os.environ.get(ENV_STORE) or None
    host = os.environ.get(ENV_HOST, "127.0.0.1")
    options: SecurityOptions = orjson.loads(os.environ.get(ENV_SECURITY) or "{}")
    server = server_for(target or None, store_from_url(url))
    return http_app(server, host=host, redis_url=url, security=http_security(host, **options))


__all__ = [
    "ENV_HOST",
    "ENV_SECURITY",
    "ENV_STORE",
    "ENV_TARGET",
    "SecurityOptions",
    "app_from_env",
    "security_options",
    "server_for",
]
