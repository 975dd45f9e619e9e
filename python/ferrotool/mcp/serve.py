"""Running an `McpToolServer`: stdio, SSE, streamable HTTP, one worker process or many.

One process serves streamable HTTP with the SDK's own session manager. Several processes
(``--workers N``, or the app behind any ASGI server) need every session's state where every
process reaches it: with a shared store (``--store redis://...``) the app is
`ferrotool.mcp._shared.SharedHttpApp`, whose handshake-era sessions live in Redis beside the
tool state, so any worker serves any request of any session. What to serve (a target, the demo
toolkit, the environment of a worker) is the command line's business: `ferrotool.cli.serve`.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from ferrotool._session.state import SessionStore
from ferrotool.mcp.server import McpToolServer

Transport: TypeAlias = Literal["stdio", "sse", "streamable-http"]
"""The transports ``ferrotool serve`` speaks."""

TRANSPORTS: Final[tuple[Transport, ...]] = ("stdio", "sse", "streamable-http")


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback server (the SDK's default for one)."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


async def serve_stdio(server: McpToolServer) -> None:
    """Serve one client over this process's stdin and stdout until it disconnects."""
    lowlevel = server.server
    async with stdio_server() as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


def sse_app(server: McpToolServer, *, host: str = "127.0.0.1") -> Starlette:
    """The SSE transport as an ASGI app: ``GET /sse`` opens a session, ``POST /messages/``."""
    lowlevel = server.server
    transport = SseServerTransport("/messages/", security_settings=_security(host))

    async def connect(request: Request) -> Response:
        async with transport.connect_sse(request.scope, request.receive, request._send) as streams:
            await lowlevel.run(streams[0], streams[1], lowlevel.create_initialization_options())
        return Response()

    return Starlette(
        routes=[
            Route("/sse", endpoint=connect, methods=["GET"]),
            Mount("/messages/", app=transport.handle_post_message),
        ]
    )


def http_app(
    server: McpToolServer, *, host: str = "127.0.0.1", redis_url: str | None = None
) -> ASGIApp:
    """Streamable HTTP at ``/mcp``, both protocol eras.

    A plain 2026-07-28 ``tools/call`` takes ferrotool's fast path (`ferrotool.mcp._fast`);
    everything else is the SDK's.

    Args:
        server: What to serve.
        host: The address served (a loopback one turns DNS-rebinding protection on).
        redis_url: Keep handshake-era sessions in this Redis server (beside the tool state,
            which the server's store must keep there too), so that several worker processes
            serve one session.
    """
    from ferrotool.mcp._fast import FastCalls

    security = _security(host)
    app: ASGIApp
    if redis_url is not None:
        from ferrotool.mcp._shared import SharedHttpApp

        app = SharedHttpApp(server, redis_url, security=security).starlette()
    else:
        app = server.server.streamable_http_app(transport_security=security, host=host)
    return FastCalls(app, server, security)


def store_from_url(url: str | None) -> SessionStore | None:
    """The session store a ``--store`` URL names (``redis://...``), or ``None`` for memory."""
    if not url or url == "memory":
        return None
    if url.startswith(("redis://", "rediss://", "unix://")):
        from ferrotool.redis import RedisSessionStore

        # Sessions end without saying so: a day after its last change, a session's state goes.
        return RedisSessionStore.from_url(url, prefix="ferrotool:mcp:", ttl=86400)
    raise ValueError(f"unknown store {url!r}: expected redis://... or memory")


__all__ = [
    "TRANSPORTS",
    "Transport",
    "http_app",
    "serve_stdio",
    "sse_app",
    "store_from_url",
]
