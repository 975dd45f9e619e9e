"""Running an `McpToolServer`: stdio, SSE, streamable HTTP, one worker process or many.

One process serves streamable HTTP with the SDK's own session manager. Several processes
(``--workers N``, or the app behind any ASGI server) need every session's state where every
process reaches it: with a shared store (``--store redis://...``) the app is
`ferrotool.mcp._shared.SharedHttpApp`, whose handshake-era sessions live in Redis beside the
tool state, so any worker serves any request of any session. What to serve (a target, the demo
toolkit, the environment of a worker) is the command line's business: `ferrotool.cli.serve`.

Every HTTP app is guarded (`http_security`): the ``Host`` and ``Origin`` it accepts, the bearer
tokens or ``TokenVerifier`` it requires, the requests one client may have in flight; the
authenticated client reaches each call's context as an `McpPrincipal`. `serve_http` runs an app
with a header timeout for slow clients.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final, Literal, TypeAlias

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from ferrotool._session.state import SessionStore
from ferrotool.mcp._auth import (
    DEFAULT_MAX_CONCURRENT,
    HttpGuard,
    HttpSecurity,
    McpPrincipal,
    StaticTokens,
    check_bind,
)
from ferrotool.mcp._expiring import ExpiringSessionStore
from ferrotool.mcp._http import ENV_HEADER_TIMEOUT, HeaderTimeoutProtocol
from ferrotool.mcp.server import McpToolServer

Transport: TypeAlias = Literal["stdio", "sse", "streamable-http"]
"""The transports ``ferrotool serve`` speaks."""

TRANSPORTS: Final[tuple[Transport, ...]] = ("stdio", "sse", "streamable-http")


_SDK_CHECKS_OFF: Final = TransportSecuritySettings(enable_dns_rebinding_protection=False)
"""The SDK's own Host/Origin checks: off, `HttpGuard` makes them (with the configured lists)."""


def http_security(
    host: str,
    *,
    auth_token_env: str | None = None,
    auth_token_file: str | os.PathLike[str] | None = None,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    insecure_no_auth: bool = False,
) -> HttpSecurity:
    """What guards an HTTP server bound to ``host`` (the keywords of `http_app` and `sse_app`).

    Args:
        host: The bind address.
        auth_token_env: Accept the bearer tokens of this environment variable (one a line).
        auth_token_file: Accept the bearer tokens of this file (one a line), read now.
        token_verifier: Accept the tokens this verifier accepts (the MCP authorization spec's
            resource-server mode; not with static tokens).
        auth: The verifier's resource-server settings: ``required_scopes``, and the
            ``resource_server_url`` and ``issuer_url`` of the protected resource metadata
            served at ``/.well-known/oauth-protected-resource``.
        allowed_hosts: ``Host`` values accepted besides ``host`` and the loopback names.
        allowed_origins: ``Origin`` values accepted besides those of the allowed hosts.
        max_concurrent: Requests one client (principal, else address) may have in flight.
        insecure_no_auth: Serve a non-loopback ``host`` without authentication.

    Raises:
        ValueError: A token source is missing or empty, both kinds of authentication are
            given, ``max_concurrent`` is below 1, or ``host`` is not loopback and nothing
            authenticates.
    """
    if max_concurrent < 1:
        raise ValueError(f"max_concurrent must be 1 or more, got {max_concurrent}")
    verifier: TokenVerifier | None = token_verifier
    tokens: StaticTokens | None = None
    if auth_token_env is not None:
        tokens = StaticTokens.from_env(auth_token_env)
    if auth_token_file is not None:
        more = StaticTokens.from_file(auth_token_file)
        tokens = more if tokens is None else tokens + more
    if tokens is not None:
        if verifier is not None:
            raise ValueError("give static tokens or a token_verifier, not both")
        verifier = tokens
    if auth is not None and verifier is None:
        raise ValueError("auth settings need a token_verifier")
    security = HttpSecurity(
        token_verifier=verifier,
        auth=auth,
        allowed_hosts=tuple(allowed_hosts),
        allowed_origins=tuple(allowed_origins),
        max_concurrent=max_concurrent,
    )
    check_bind(host, security, insecure_no_auth=insecure_no_auth)
    return security


async def serve_stdio(server: McpToolServer) -> None:
    """Serve one client over this process's stdin and stdout until it disconnects."""
    lowlevel = server.server
    async with stdio_server() as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


def sse_app(
    server: McpToolServer,
    *,
    host: str = "127.0.0.1",
    security: HttpSecurity | None = None,
) -> ASGIApp:
    """The SSE transport as an ASGI app: ``GET /sse`` opens a session, ``POST /messages/``.

    Args:
        server: What to serve.
        host: The address served.
        security: Authentication, allowed hosts and origins, limits (`http_security`; by
            default the loopback names and ``host``, no authentication).
    """
    lowlevel = server.server
    transport = SseServerTransport("/messages/", security_settings=_SDK_CHECKS_OFF)

    async def connect(request: Request) -> Response:
        async with transport.connect_sse(request.scope, request.receive, request._send) as streams:
            await lowlevel.run(streams[0], streams[1], lowlevel.create_initialization_options())
        return Response()

    app = Starlette(
        routes=[
            Route("/sse", endpoint=connect, methods=["GET"]),
            Mount("/messages/", app=transport.handle_post_message),
        ]
    )
    return HttpGuard(app, host, security or http_security(host, insecure_no_auth=True))


def http_app(
    server: McpToolServer,
    *,
    host: str = "127.0.0.1",
    redis_url: str | None = None,
    security: HttpSecurity | None = None,
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
) -> ASGIApp:
    """Streamable HTTP at ``/mcp``, both protocol eras.

    A plain 2026-07-28 ``tools/call`` takes ferrotool's fast path (`ferrotool.mcp._fast`);
    everything else is the SDK's.

    Args:
        server: What to serve.
        host: The address served.
        redis_url: Keep handshake-era sessions in this Redis server (beside the tool state,
            which the server's store must keep there too), so that several worker processes
            serve one session.
        security: Authentication, allowed hosts and origins, limits (`http_security`; by
            default the loopback names and ``host``, no authentication).
        session_idle_timeout: Seconds after which a handshake-era session kept in memory
            that has seen no request is closed (``None``: never); a Redis one expires after
            ``ferrotool.mcp._shared.DEFAULT_SESSION_TTL``.
    """
    from ferrotool.mcp._fast import FastCalls

    app: ASGIApp
    if redis_url is not None:
        from ferrotool.mcp._shared import SharedHttpApp

        app = SharedHttpApp(server, redis_url, security=_SDK_CHECKS_OFF).starlette()
    else:
        app = server.server.streamable_http_app(
            transport_security=_SDK_CHECKS_OFF,
            host=host,
            session_idle_timeout=session_idle_timeout,
        )
    guarded = security or http_security(host, insecure_no_auth=True)
    return HttpGuard(FastCalls(app, server, None), host, guarded)


def serve_http(app: ASGIApp, host: str, port: int, *, header_timeout: float | None = None) -> None:
    """Serve an HTTP app with uvicorn until interrupted; slow request heads are cut off.

    Args:
        app: `http_app` or `sse_app`.
        host: The address to bind.
        port: The port to bind.
        header_timeout: Seconds a client has to send a request's head (default
            ``$FERROTOOL_SERVE_HEADER_TIMEOUT``, else 10).
    """
    import uvicorn

    if header_timeout is not None:
        os.environ[ENV_HEADER_TIMEOUT] = str(header_timeout)
    uvicorn.run(app, host=host, port=port, http=HeaderTimeoutProtocol, log_level="warning")


def run_http(
    server: McpToolServer,
    *,
    transport: Literal["sse", "streamable-http"] = "streamable-http",
    host: str = "127.0.0.1",
    port: int = 8000,
    auth_token_env: str | None = None,
    auth_token_file: str | os.PathLike[str] | None = None,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    insecure_no_auth: bool = False,
    header_timeout: float | None = None,
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
) -> None:
    """Serve ``server`` over HTTP until interrupted: ``ferrotool serve``'s HTTP in code.

    The security keywords are `http_security`'s; ``header_timeout`` is `serve_http`'s and
    ``session_idle_timeout`` `http_app`'s.

    Raises:
        ValueError: As `http_security` does (checked before anything is bound).
    """
    security = http_security(
        host,
        auth_token_env=auth_token_env,
        auth_token_file=auth_token_file,
        token_verifier=token_verifier,
        auth=auth,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        max_concurrent=max_concurrent,
        insecure_no_auth=insecure_no_auth,
    )
    app = (
        sse_app(server, host=host, security=security)
        if transport == "sse"
        else http_app(
            server, host=host, security=security, session_idle_timeout=session_idle_timeout
        )
    )
    serve_http(app, host, port, header_timeout=header_timeout)


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
    "ENV_HEADER_TIMEOUT",
    "TRANSPORTS",
    "ExpiringSessionStore",
    "HeaderTimeoutProtocol",
    "HttpSecurity",
    "McpPrincipal",
    "StaticTokens",
    "Transport",
    "http_app",
    "http_security",
    "run_http",
    "serve_http",
    "serve_stdio",
    "sse_app",
    "store_from_url",
]
