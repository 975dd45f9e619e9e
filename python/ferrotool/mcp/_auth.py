"""Who may talk to ``ferrotool serve`` over HTTP: bearer tokens, Host and Origin, call limits.

`HttpGuard` is the ASGI layer in front of every HTTP transport (streamable HTTP in both eras,
its fast path, SSE). In order, each request must:

* name an allowed ``Host`` (always checked, whatever the bind address) and, when a browser
  sends one, an allowed ``Origin``: a page elsewhere cannot reach the server through DNS
  rebinding;
* carry ``Authorization: Bearer <token>`` that the token verifier accepts, when the server has
  one: a static token (`StaticTokens`, compared in constant time) or any of the SDK's
  ``TokenVerifier``s (the MCP authorization spec's resource-server mode, with its protected
  resource metadata at ``/.well-known/oauth-protected-resource``). A token anywhere else (the
  query string, a cookie) counts for nothing;
* stay within the client's limit of requests in flight (per principal, else per address).

The authenticated principal travels in the ASGI scope: as the SDK's ``AuthenticatedUser`` (so
the SDK binds each handshake-era session to the principal that opened it) and as an
`McpPrincipal`, which each tool call's `ferrotool.RuntimeContext` holds: a tool parameter
annotated ``Injected[McpPrincipal]`` receives it. The context's ``user_id`` stays the server's
own (the session's tool state is keyed by session, not by principal).
"""

from __future__ import annotations

import hmac
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias, final

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl, ValidationError
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

TokenKind: TypeAlias = Literal["static", "oauth"]
"""How a principal authenticated: a token of the server's list, or one its verifier accepted."""

PRINCIPAL_SCOPE_KEY: Final = "ferrotool.mcp.principal"
"""Where `HttpGuard` puts the request's `McpPrincipal` in the ASGI scope."""

DEFAULT_MAX_CONCURRENT: Final = 16
"""Requests one client may have in flight at once."""

LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "::1")
_METADATA_PATH: Final = "/.well-known/oauth-protected-resource"
_TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's ``b64token``: what a bearer token may be made of."""
_LIMITED_METHODS: Final = frozenset({"POST", "DELETE"})


@final
@dataclass(frozen=True, slots=True)
class McpPrincipal:
    """The authenticated client of an MCP call over HTTP.

    Attributes:
        subject: Who the token stands for: its ``sub`` when the verifier gives one, else its
            client id (``token-N`` for the N-th static token).
        client_id: The OAuth client the token was issued to (``token-N`` for a static one).
        scopes: The token's scopes.
        token_kind: ``"static"`` for a token of the server's list, ``"oauth"`` for one the
            server's ``TokenVerifier`` accepted.
    """

    subject: str
    client_id: str
    scopes: tuple[str, ...]
    token_kind: TokenKind

    @classmethod
    def of(cls, token: AccessToken, kind: TokenKind) -> McpPrincipal:
        """The principal of a verified token."""
        return cls(token.subject or token.client_id, token.client_id, tuple(token.scopes), kind)


def principal_of(scope: Mapping[str, object]) -> McpPrincipal | None:
    """The principal `HttpGuard` authenticated for the request of ``scope``, if any."""
    principal = scope.get(PRINCIPAL_SCOPE_KEY)
    return principal if isinstance(principal, McpPrincipal) else None


@final
class StaticTokens:
    """A ``TokenVerifier`` over a fixed list of tokens, compared in constant time.

    Every token is compared (none is skipped once one matches), so the time taken says nothing
    about which token matched or how much of one did.

    Args:
        tokens: The accepted tokens; surrounding whitespace is dropped and blank ones skipped.

    Raises:
        ValueError: No token is left, or one holds characters a bearer token cannot.
    """

    __slots__ = ("_tokens",)

    def __init__(self, tokens: Iterable[str]) -> None:
        kept = tuple(token.strip() for token in tokens if token.strip())
        if not kept:
            raise ValueError("no authentication token given (all empty)")
        for token in kept:
            if not _TOKEN.fullmatch(token):
                raise ValueError(
                    "an authentication token may hold only letters, digits and -._~+/ "
                    "(then = padding)"
                )
        self._tokens: Final = tuple(token.encode() for token in kept)

    @classmethod
    def from_env(cls, name: str) -> StaticTokens:
        """The tokens of an environment variable (one a line).

        Raises:
            ValueError: The variable is unset or holds no token.
        """
        value = os.environ.get(name)
        if value is None:
            raise ValueError(f"the environment variable {name} is not set")
        try:
            return cls(value.splitlines())
        except ValueError as exc:
            raise ValueError(f"${name}: {exc}") from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> StaticTokens:
        """The tokens of a file (one a line), read now.

        Raises:
            ValueError: The file cannot be read or holds no token.
        """
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read the token file {os.fspath(path)!r}: {exc}") from None
        try:
            return cls(text.splitlines())
        except ValueError as exc:
            raise ValueError(f"token file {os.fspath(path)!r}: {exc}") from None

    def __add__(self, other: StaticTokens) -> StaticTokens:
        return StaticTokens([token.decode() for token in (*self._tokens, *other._tokens)])

    def __len__(self) -> int:
        return len(self._tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access of ``token`` (client ``token-N`` for the N-th token), or ``None``."""
        given = token.encode()
        found = 0
        for index, known in enumerate(self._tokens, start=1):
            if hmac.compare_digest(known, given):
                found = found or index
        if not found:
            return None
        return AccessToken(token=token, client_id=f"token-{found}", scopes=[])


@final
@dataclass(frozen=True, slots=True)
class HttpSecurity:
    """How `HttpGuard` protects a server (see the module).

    Attributes:
        token_verifier: Checks each request's bearer token (``None``: no authentication).
        auth: The resource-server settings of an OAuth verifier: the required scopes, the
            resource URL, the authorization server the protected resource metadata names.
        allowed_hosts: ``Host`` values accepted besides the bind address and the loopback
            names: ``name`` (any port) or ``name:port``.
        allowed_origins: ``Origin`` values accepted besides those of the allowed hosts
            (``scheme://name[:port]``).
        max_concurrent: Requests one client (principal, else address) may have in flight.
    """

    token_verifier: TokenVerifier | None = None
    auth: AuthSettings | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_concurrent: int = DEFAULT_MAX_CONCURRENT


def is_loopback(host: str) -> bool:
    """Whether a bind address is reachable from this machine only."""
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def check_bind(host: str, security: HttpSecurity, *, insecure_no_auth: bool) -> None:
    """Refuse to serve a non-loopback address without authentication.

    Raises:
        ValueError: ``host`` is reachable from other machines, no token verifier guards it,
            and ``insecure_no_auth`` does not say so on purpose.
    """
    if security.token_verifier is None and not is_loopback(host) and not insecure_no_auth:
        raise ValueError(
            f"refusing to serve {host} without authentication: give --auth-token-env or "
            "--auth-token-file (or --insecure-no-auth to serve anyone who can reach it)"
        )


def _split_host(value: str) -> tuple[str, str | None]:
    """A ``Host`` value as (name, port), the name lowercased, an IPv6 one without brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return name, port or None
    if value.count(":") == 1:
        name, _, port = value.partition(":")
        return name, port or None
    return value, None


@final
class _Hosts:
    """The ``Host`` and ``Origin`` values a server accepts."""

    __slots__ = ("_hosts", "_origins")

    def __init__(self, bind: str, hosts: Sequence[str], origins: Sequence[str]) -> None:
        self._hosts: Final = frozenset(
            _split_host(host) for host in (*LOOPBACK_HOSTS, bind, *hosts) if host.strip()
        )
        self._origins: Final = frozenset(origin.strip().lower().rstrip("/") for origin in origins)

    def host_ok(self, value: str | None) -> bool:
        if not value:
            return False
        name, port = _split_host(value)
        return (name, port) in self._hosts or (name, None) in self._hosts

    def origin_ok(self, value: str) -> bool:
        origin = value.strip().lower().rstrip("/")
        if origin in self._origins:
            return True
        scheme, sep, rest = origin.partition("://")
        return bool(sep) and scheme in ("http", "https") and "/" not in rest and self.host_ok(rest)


def _json(
    status: int, body: Mapping[str, str], headers: Sequence[tuple[bytes, bytes]] = ()
) -> ASGIApp:
    data = json.dumps(body).encode()

    async def respond(scope: Scope, receive: Receive, send: Send) -> None:
        head = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            *headers,
        ]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": data})

    return respond


@final
class HttpGuard:
    """ASGI: the checks of the module's docstring, in front of ``app``.

    Args:
        app: The transport's app.
        host: The bind address (always an allowed ``Host``).
        security: What to check.
    """

    __slots__ = (
        "_app",
        "_auth",
        "_challenge",
        "_hosts",
        "_in_flight",
        "_kind",
        "_limit",
        "_metadata",
        "_resource",
        "_verifier",
    )

    def __init__(self, app: ASGIApp, host: str, security: HttpSecurity) -> None:
        self._app = app
        self._hosts = _Hosts(host, security.allowed_hosts, security.allowed_origins)
        self._verifier = security.token_verifier
        self._kind: TokenKind = "static" if isinstance(self._verifier, StaticTokens) else "oauth"
        self._auth = security.auth
        self._limit = max(1, security.max_concurrent)
        self._in_flight: dict[str, int] = {}
        self._metadata: ASGIApp | None = None
        self._resource: AnyHttpUrl | None = None
        challenge = "Bearer"
        auth = security.auth
        if auth is not None and auth.resource_server_url is not None:
            self._metadata = Starlette(
                routes=create_protected_resource_routes(
                    resource_url=auth.resource_server_url,
                    authorization_servers=[auth.issuer_url],
                    scopes_supported=auth.required_scopes,
                )
            )
            metadata_url = build_resource_metadata_url(auth.resource_server_url)
            challenge = f'Bearer resource_metadata="{metadata_url}"'
            if auth.validate_token_resource:
                self._resource = auth.resource_server_url
        self._challenge = challenge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":  # a WebSocket: no transport of this server speaks it
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = Headers(scope=scope)
        if not self._hosts.host_ok(headers.get("host")):
            await _json(421, {"error": "invalid_host"})(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and not self._hosts.origin_ok(origin):
            await _json(403, {"error": "invalid_origin"})(scope, receive, send)
            return
        if self._metadata is not None and scope["path"].startswith(_METADATA_PATH):
            await self._metadata(scope, receive, send)
            return
        principal: McpPrincipal | None = None
        if self._verifier is not None:
            token = await self._authenticate(headers)
            if not isinstance(token, AccessToken):
                await token(scope, receive, send)
                return
            principal = McpPrincipal.of(token, self._kind)
            scope = {
                **scope,
                "user": AuthenticatedUser(token),
                "auth": AuthCredentials(token.scopes),
                PRINCIPAL_SCOPE_KEY: principal,
            }
        if scope["method"] not in _LIMITED_METHODS:
            await self._app(scope, receive, send)
            return
        client = scope.get("client")
        key = (
            f"{principal.token_kind}:{principal.client_id}:{principal.subject}"
            if principal is not None
            else f"address:{client[0] if client else ''}"
        )
        count = self._in_flight.get(key, 0)
        if count >= self._limit:
            refusal = _json(
                429,
                {"error": "too_many_requests", "error_description": "too many calls in flight"},
                [(b"retry-after", b"1")],
            )
            await refusal(scope, receive, send)
            return
        self._in_flight[key] = count + 1
        try:
            await self._app(scope, receive, send)
        finally:
            left = self._in_flight[key] - 1
            if left:
                self._in_flight[key] = left
            else:
                del self._in_flight[key]

    async def _authenticate(self, headers: Headers) -> AccessToken | ASGIApp:
        """The request's verified token, or the response refusing it."""
        values = headers.getlist("authorization")
        token = _bearer(values[0]) if len(values) == 1 else None
        access = None
        if token is not None and self._verifier is not None:
            access = await self._verifier.verify_token(token)
        if access is not None and access.expires_at and access.expires_at < int(time.time()):
            access = None
        if access is not None and self._resource is not None and not self._for_us(access):
            access = None
        if access is None:
            error = "invalid_token" if values else None
            return self._refusal(401, error, "Authentication required")
        required = (self._auth.required_scopes if self._auth is not None else None) or []
        missing = [scope for scope in required if scope not in access.scopes]
        if missing:
            return self._refusal(403, "insufficient_scope", f"Required scope: {' '.join(missing)}")
        return access

    def _for_us(self, access: AccessToken) -> bool:
        try:
            resource = str(AnyHttpUrl(access.resource or ""))
        except ValidationError:
            return False
        return resource.removesuffix("/") == str(self._resource).removesuffix("/")

    def _refusal(self, status: int, error: str | None, description: str) -> ASGIApp:
        challenge = self._challenge
        body = {"error": error or "invalid_request", "error_description": description}
        if error is not None:
            sep = ", " if challenge != "Bearer" else " "
            challenge = f'{challenge}{sep}error="{error}"'
        return _json(status, body, [(b"www-authenticate", challenge.encode())])


def _bearer(value: str) -> str | None:
    """The token of an ``Authorization`` value (scheme case-insensitive), or ``None``."""
    scheme, _, token = value.strip().partition(" ")
    token = token.lstrip(" ")
    if scheme.lower() != "bearer" or not _TOKEN.fullmatch(token):
        return None
    return token


__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "PRINCIPAL_SCOPE_KEY",
    "HttpGuard",
    "HttpSecurity",
    "McpPrincipal",
    "StaticTokens",
    "TokenKind",
    "check_bind",
    "is_loopback",
    "principal_of",
]
