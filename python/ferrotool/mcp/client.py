"""`McpClient`: one MCP server, over stdio, SSE or streamable HTTP, kept connected.

The client is the `mcp` SDK's own (``mcp.Client``), so it speaks both protocol eras: the
session-based one (the ``initialize`` handshake, up to 2025-11-25) and the stateless one
(2026-07-28); ``mode`` chooses as the SDK does (``"auto"`` probes and falls back).

What ferrotool adds is the life around it. The connection lives in a task of its own, so that
`initialize`, the calls and `close` may come from any task. A connection that breaks (a stdio
server that died, an HTTP server that dropped) fails the calls in flight with an error, and the
next call connects again, waiting longer after each failure in a row (``backoff`` doubling up
to ``max_backoff``). A server that writes something other than JSON-RPC fails the calls in
flight instead of hanging them. Start-up and each request have their own timeouts.

Each time a server comes up (connected, negotiated, its tools listed: at `initialize` and at
every reconnection), an ``INFO`` record on the ``ferrotool.mcp`` logger says so, with these
fields (``extra``) for a structured formatter: ``ferrotool_server`` (the client's name),
``ferrotool_transport`` (``stdio``, ``sse`` or ``streamable-http``), ``ferrotool_tools`` (how
many tools it listed), ``ferrotool_protocol`` (the protocol version negotiated) and
``ferrotool_duration_ms`` (the time it took).
"""

# Longer than the ~600 lines a module is held to, on purpose: the module is one class whose
# connection life (start, hold, listen, refresh, break, reconnect with backoff, close) is one
# state machine over private fields; split across modules, each part would reach into the
# others' state. The transports, conversions and registration already live apart (_transport,
# _convert, _registration).

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any, Final, Literal, Self, TypeAlias, TypeVar, cast, final

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.shared.dispatcher import ProgressFnT
from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT

from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.errors import McpError
from ferrotool.mcp._convert import SESSION_META_KEY, RejectedTool, check_server_name
from ferrotool.mcp._transport import (
    CALL_HEADERS,
    Http,
    InProcess,
    Sse,
    Stdio,
    Target,
    all_pages,
    describe,
    in_process,
    list_all,
    listens,
    sdk_client,
    snippet,
    spawn,
)

_log: Final = logging.getLogger("ferrotool.mcp")
_TRANSPORTS: Final[Mapping[type[Target], str]] = MappingProxyType(
    {Stdio: "stdio", Sse: "sse", Http: "streamable-http", InProcess: "in-process"}
)

DEFAULT_STARTUP_TIMEOUT: Final = 30.0
"""Seconds to connect, negotiate and list the tools (AgentScope's default)."""
DEFAULT_REQUEST_TIMEOUT: Final = 120.0
"""Seconds one request may take (AgentScope's default)."""

Mode: TypeAlias = Literal["auto", "legacy"] | str
"""How the protocol version is chosen: ``"auto"`` (probe, fall back to the handshake),
``"legacy"`` (the ``initialize`` handshake), or a modern version pinned (``"2026-07-28"``)."""

HeaderProvider: TypeAlias = Callable[[RuntimeContext], Mapping[str, str]]
"""Gives the HTTP headers of one call from its runtime context (per-user credentials)."""

ProgressHandler: TypeAlias = ProgressFnT
"""Receives a call's progress notifications: ``async (progress, total, message) -> None``."""

AnswerT = TypeVar("AnswerT")
ItemT = TypeVar("ItemT")
Page: TypeAlias = tuple[list[ItemT], str | None]
"""One page of a listing: its items, and the cursor of the next (``None``: the last)."""

ToolsListener: TypeAlias = Callable[[tuple[types.Tool, ...]], Awaitable[None]]
"""Receives the server's new tool listing after it said the list changed."""


@final
@dataclass(frozen=True, slots=True)
class McpMeta:
    """``_meta`` for the MCP calls made with a runtime context that holds this value.

    Put one in the context (``RuntimeContext.of(McpMeta({"trace": "t1"}))``); an empty one
    sends no ``_meta``.

    Attributes:
        values: The entries, sent as the request's ``_meta``.
    """

    values: Mapping[str, JsonValue] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(slots=True, eq=False)
class _Connection:
    """One live connection: the SDK client, its listing, and the event that ends it."""

    client: Client
    tools: tuple[types.Tool, ...]
    session: str | None = None
    rejected: tuple[RejectedTool, ...] = ()
    """The listing's tools the SDK refuses (`ferrotool.mcp._transport.list_all`)."""
    done: anyio.Event = field(default_factory=anyio.Event)
    broken: BaseException | None = None


@dataclass(slots=True, eq=False)
class _InFlight:
    scope: anyio.CancelScope
    fault: str | None = None


@final
class McpClient:
    """One MCP server's tools, for a `Toolkit` (`register_mcp`) or called directly.

    Build one with `stdio`, `sse`, `streamable_http` or `in_process`; `initialize` connects
    (and is a no-op when connected), `close` disconnects. ``async with`` does both. The
    connection is held by a task of the client's own, on the running event loop (asyncio or
    trio).

    Args:
        name: The server's name in tool names (``mcp__{name}__{tool}``): 1 to 32 letters,
            digits, ``_`` or ``-``.
        startup_timeout: Seconds to connect and list the tools.
        request_timeout: Seconds one request may take (a call can ask for another).
        mode: How the protocol version is chosen (see `Mode`).
        backoff: Seconds waited before connecting again after a failure; doubled after each
            failure in a row, up to ``max_backoff``; a success resets it.
        max_backoff: The longest wait before connecting again.
        request_headers: For streamable HTTP, the headers of each call, from its runtime
            context (say, the user's credentials); added to the client's fixed headers.

    Raises:
        ValueError: The name is empty or not made of the allowed characters, or a timeout is
            not positive.
    """

    __slots__ = (
        "_connecting",
        "_connection",
        "_failures",
        "_host_done",
        "_inflight",
        "_listed_rejects",
        "_listeners",
        "_rejected_tools",
        "_stop",
        "_target",
        "_task_group",
        "_tools",
        "backoff",
        "max_backoff",
        "mode",
        "name",
        "request_headers",
        "request_timeout",
        "startup_timeout",
    )

    def __init__(
        self,
        name: str,
        target: Target,
        *,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        mode: Mode = "auto",
        backoff: float = 0.1,
        max_backoff: float = 10.0,
        request_headers: HeaderProvider | None = None,
    ) -> None:
        self.name: Final = check_server_name(name)
        for label, seconds in (
            ("startup_timeout", startup_timeout),
            ("request_timeout", request_timeout),
        ):
            if not (math.isfinite(seconds) and seconds > 0):
                raise ValueError(f"{label} must be a positive number of seconds, not {seconds!r}")
        self._target = target
        self.startup_timeout: Final = startup_timeout
        self.request_timeout: Final = request_timeout
        self.mode: Final = mode
        self.backoff: Final = backoff
        self.max_backoff: Final = max_backoff
        self.request_headers: Final = request_headers
        self._connection: _Connection | None = None
        self._tools: tuple[types.Tool, ...] | None = None
        self._connecting: anyio.Lock | None = None
        self._failures = 0
        self._inflight: set[_InFlight] = set()
        self._listeners: dict[object, ToolsListener] = {}
        self._rejected_tools: tuple[RejectedTool, ...] = ()
        self._listed_rejects: tuple[RejectedTool, ...] = ()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._stop: anyio.Event | None = None
        self._host_done: anyio.Event | None = None

    # - construction -

    @classmethod
    def stdio(
        cls,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        mode: Mode = "auto",
        backoff: float = 0.1,
        max_backoff: float = 10.0,
    ) -> McpClient:
        """A server run as a subprocess, spoken to over its stdin and stdout.

        The process gets the SDK's short list of safe environment variables (``PATH``,
        ``HOME``...) plus ``env``.
        """
        target = Stdio(command, tuple(args), env, None if cwd is None else str(cwd))
        return cls(
            name,
            target,
            startup_timeout=startup_timeout,
            request_timeout=request_timeout,
            mode=mode,
            backoff=backoff,
            max_backoff=max_backoff,
        )

    @classmethod
    def sse(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        mode: Mode = "auto",
        backoff: float = 0.1,
        max_backoff: float = 10.0,
    ) -> McpClient:
        """A server behind the SSE transport (the one streamable HTTP superseded)."""
        return cls(
            name,
            Sse(url, MappingProxyType(dict(headers or {}))),
            startup_timeout=startup_timeout,
            request_timeout=request_timeout,
            mode=mode,
            backoff=backoff,
            max_backoff=max_backoff,
        )

    @classmethod
    def streamable_http(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        request_headers: HeaderProvider | None = None,
        auth: httpx2.Auth | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        mode: Mode = "auto",
        backoff: float = 0.1,
        max_backoff: float = 10.0,
    ) -> McpClient:
        """A server behind streamable HTTP.

        Args:
            name: The server's name in tool names.
            url: The MCP endpoint (``http://host:port/mcp``).
            headers: Sent with every request.
            request_headers: Gives extra headers for each call from its runtime context, so
                that calls for different users share one connection with each user's
                credentials.
            auth: Signs every request (an ``httpx2.Auth``: a bearer token, or the SDK's
                ``mcp.client.auth.OAuthClientProvider``, which runs the OAuth flow itself).
            startup_timeout: Seconds to connect and list the tools.
            request_timeout: Seconds one request may take.
            mode: How the protocol version is chosen.
            backoff: The first wait before connecting again after a failure.
            max_backoff: The longest such wait.
        """
        return cls(
            name,
            Http(url, MappingProxyType(dict(headers or {})), auth),
            startup_timeout=startup_timeout,
            request_timeout=request_timeout,
            mode=mode,
            backoff=backoff,
            max_backoff=max_backoff,
            request_headers=request_headers,
        )

    @classmethod
    def in_process(
        cls,
        name: str,
        server: object,
        *,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        mode: Mode = "legacy",
    ) -> McpClient:
        """A server object of this process, spoken to without a transport (in memory).

        The session-based era is the default here: the SDK's in-memory path for the stateless
        one (2026-07-28) carries no notifications, so a call's progress would not arrive.

        Args:
            name: The server's name in tool names.
            server: A FastMCP server, the SDK's ``MCPServer`` or low-level ``Server``, or a
                `ferrotool.mcp.server.McpToolServer`. A FastMCP server's lifespan runs while
                the client is connected.
            startup_timeout: Seconds to connect and list the tools.
            request_timeout: Seconds one request may take.
            mode: How the protocol version is chosen (``"legacy"``: the ``initialize``
                handshake).

        Raises:
            TypeError: ``server`` is none of these.
        """
        return cls(
            name,
            in_process(server),
            startup_timeout=startup_timeout,
            request_timeout=request_timeout,
            mode=mode,
        )

    # - state -

    @property
    def is_initialized(self) -> bool:
        """Whether `initialize` succeeded and `close` has not been called since.

        A client whose connection broke stays initialized: its next call connects again.
        """
        return self._task_group is not None and self._tools is not None

    @property
    def tools(self) -> tuple[types.Tool, ...]:
        """The server's tools as last listed.

        Raises:
            McpError: The client is not initialized.
        """
        self._live()
        return self._tools or ()

    @property
    def rejected_tools(self) -> tuple[RejectedTool, ...]:
        """The tools of the last listing left out, each with why (none: all fit).

        Those the SDK refuses (a definition the protocol version does not allow), then those
        a toolkit could not make tools of: `register_mcp` sets it at registration and
        after each change of the listing, and a warning on the ``ferrotool.mcp`` logger names
        each of them too.
        """
        return self._rejected_tools

    def _rejected(self, rejected: tuple[RejectedTool, ...]) -> None:
        """Keep a toolkit's rejects, after those of the listing itself (the SDK's)."""
        self._rejected_tools = (*self._listed_rejects, *rejected)

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the current connection (``None`` while it is broken).

        Raises:
            McpError: The client is not initialized.
        """
        self._live()
        connection = self._connection
        return None if connection is None else connection.client.protocol_version

    def on_tools_changed(self, key: object, listener: ToolsListener | None) -> None:
        """Call ``listener`` with the new listing whenever the server's tools change.

        Args:
            key: Names the listener (a toolkit registers under a weak reference to itself).
            listener: The listener; ``None`` removes the one under ``key``.
        """
        if listener is None:
            self._listeners.pop(key, None)
        else:
            self._listeners[key] = listener

    def _live(self) -> None:
        if self._task_group is None or self._tools is None:
            raise McpError(f"MCP client '{self.name}' not initialized")

    # - life -

    async def initialize(self) -> None:
        """Connect, negotiate and list the tools; nothing when already connected.

        Raises:
            McpError: The server could not be reached, or did not answer in time.
        """
        if self._task_group is None:
            await self._start_host()
        await self._connect()

    async def close(self) -> None:
        """Disconnect (a stdio server is stopped); calls made after this raise.

        Safe to call twice, or on a client never initialized.
        """
        stop, done = self._stop, self._host_done
        self._connection = None
        self._tools = None
        if stop is None or done is None:
            return
        stop.set()
        with anyio.CancelScope(shield=True):
            await done.wait()

    async def __aenter__(self) -> Self:
        await self.initialize()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def _start_host(self) -> None:
        """Start the task that holds the connections.

        The connection's task group must be entered and left in one task; a task of the
        client's own lets `initialize` and `close` come from any task, under any cancel scope.
        """
        started, stop, done = anyio.Event(), anyio.Event(), anyio.Event()
        self._stop, self._host_done, self._connecting = stop, done, anyio.Lock()

        async def host() -> None:
            try:
                async with anyio.create_task_group() as group:
                    self._task_group = group
                    started.set()
                    await stop.wait()
                    group.cancel_scope.cancel()
            finally:
                self._task_group = None
                self._connection = None
                done.set()

        spawn(host)
        await started.wait()

    async def _connect(self) -> _Connection:
        """The live connection, connecting (after the backoff) when there is none."""
        group, lock = self._task_group, self._connecting
        if group is None or lock is None:
            raise McpError(f"MCP client '{self.name}' not initialized")
        async with lock:
            connection = self._connection
            if connection is not None and connection.broken is None:
                return connection
            self._connection = None
            if self._failures:
                await anyio.sleep(min(self.max_backoff, self.backoff * 2 ** (self._failures - 1)))
            started = time.perf_counter()
            try:
                with anyio.fail_after(self.startup_timeout):
                    connection = cast("_Connection", await group.start(self._hold))
            except TimeoutError:
                self._failures += 1
                raise McpError(
                    f"MCP server '{self.name}' ({self._target.describe()}) did not start within "
                    f"{self.startup_timeout:g} s"
                ) from None
            except Exception as exc:
                self._failures += 1
                raise McpError(
                    f"MCP server '{self.name}' ({self._target.describe()}) could not be "
                    f"reached: {describe(exc)}"
                ) from exc
            self._connection = connection
            self._tools = connection.tools
            self._listed_rejects = connection.rejected
            self._report_up(connection, time.perf_counter() - started)
            return connection

    def _report_up(self, connection: _Connection, seconds: float) -> None:
        """Log a connection that came up (see the module's docstring for the fields)."""
        if not _log.isEnabledFor(logging.INFO):
            return
        transport = _TRANSPORTS[type(self._target)]
        protocol = connection.client.protocol_version
        _log.info(
            "MCP server '%s' up (%s, protocol %s): %d tool(s) in %.0f ms",
            self.name,
            transport,
            protocol,
            len(connection.tools),
            seconds * 1000,
            extra={
                "ferrotool_server": self.name,
                "ferrotool_transport": transport,
                "ferrotool_tools": len(connection.tools),
                "ferrotool_protocol": protocol,
                "ferrotool_duration_ms": round(seconds * 1000, 3),
            },
        )

    async def _hold(self, *, task_status: anyio.abc.TaskStatus[_Connection]) -> None:
        """Open one connection, hand it over, and keep it open until it breaks or stops."""
        connection: _Connection | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await sdk_client(
                    self._target,
                    stack,
                    mode=self.mode,
                    read_timeout_seconds=self.request_timeout,
                    message_handler=self._on_message,
                    cache=None,
                )
                await stack.enter_async_context(client)
                session: dict[str, str] = {}
                rejected: list[RejectedTool] = []
                tools = await list_all(client, session, rejected)
                connection = _Connection(client, tools, session.get("id"), tuple(rejected))
                if listens(client):
                    stack.enter_context(_cancelling(self._task_group, self._listen, connection))
                task_status.started(connection)
                await connection.done.wait()
        except Exception as exc:
            if connection is None:
                raise  # before it was handed over: the starter sees why
            _log.warning("MCP server '%s' connection ended: %s", self.name, describe(exc))
        finally:
            if connection is not None:
                connection.broken = connection.broken or ConnectionError("closed")
                if self._connection is connection:
                    self._connection = None

    async def _on_message(self, message: IncomingMessage) -> None:
        """Notifications and transport faults from the server."""
        if isinstance(message, Exception):
            # Not JSON-RPC (a stray print on a stdio server's stdout): whatever the calls in
            # flight were waiting for may never come, so they fail now, with the reason.
            fault = f"the MCP server sent something that is not JSON-RPC: {snippet(message)}"
            _log.warning("MCP server '%s': %s", self.name, fault)
            for call in tuple(self._inflight):
                call.fault = fault
                call.scope.cancel()
            return
        if isinstance(message, types.ToolListChangedNotification):
            group = self._task_group
            connection = self._connection
            if group is not None and connection is not None:
                group.start_soon(self._refresh, connection)

    async def _listen(self, connection: _Connection) -> None:
        """Follow the tool list on a 2026-07-28 connection (a ``subscriptions/listen`` stream)."""
        try:
            async with connection.client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self._refresh(connection)
        except Exception as exc:
            _log.info("MCP server '%s': tool list not followed: %s", self.name, describe(exc))

    async def _refresh(self, connection: _Connection) -> None:
        rejected: list[RejectedTool] = []
        try:
            tools = await list_all(connection.client, _session_box(connection), rejected)
        except Exception as exc:
            _log.warning("MCP server '%s': listing after a change failed: %s", self.name, exc)
            return
        connection.tools = self._tools = tools
        connection.rejected = self._listed_rejects = tuple(rejected)
        for listener in tuple(self._listeners.values()):
            try:
                await listener(tools)
            except Exception:
                _log.exception("MCP server '%s': a tool-list listener failed", self.name)

    async def list_tools(self) -> tuple[types.Tool, ...]:
        """List the server's tools again (every page), and keep the listing.

        Raises:
            McpError: The client is not initialized, or the server failed to answer.
        """
        self._live()
        connection = await self._connect()
        rejected: list[RejectedTool] = []
        try:
            connection.tools = self._tools = await list_all(
                connection.client, _session_box(connection), rejected
            )
        except MCPError as exc:
            raise McpError(f"MCP server '{self.name}' failed to list its tools: {exc}") from exc
        connection.rejected = self._listed_rejects = tuple(rejected)
        return connection.tools

    # - prompts and resources -

    async def list_prompts(self) -> tuple[types.Prompt, ...]:
        """The server's prompts (every page); none when it declares no prompts.

        Raises:
            McpError: The client is not initialized, or the server failed to answer.
        """

        async def page(client: Client, cursor: str | None) -> Page[types.Prompt]:
            result = await client.list_prompts(cursor=cursor, cache_mode="bypass")
            return result.prompts, result.next_cursor

        return await self._listing("prompts", page)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> types.GetPromptResult:
        """One of the server's prompts, by its name, with its arguments.

        Raises:
            McpError: The client is not initialized, or the server failed to answer (an
                unknown prompt among other reasons).
        """
        client = await self._needed("prompts")
        return await self._asked(
            f"give its prompt {name!r}", client.get_prompt(name, dict(arguments or {}))
        )

    async def list_resources(self) -> tuple[types.Resource, ...]:
        """The server's resources (every page); none when it declares no resources.

        Raises:
            McpError: The client is not initialized, or the server failed to answer.
        """

        async def page(client: Client, cursor: str | None) -> Page[types.Resource]:
            result = await client.list_resources(cursor=cursor, cache_mode="bypass")
            return result.resources, result.next_cursor

        return await self._listing("resources", page)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """One of the server's resources, by its URI.

        Raises:
            McpError: The client is not initialized, or the server failed to answer (a
                resource it does not have or refuses among other reasons).
        """
        client = await self._needed("resources")
        return await self._asked(
            f"read its resource {uri!r}", client.read_resource(uri, cache_mode="bypass")
        )

    async def _listing(
        self, capability: str, page: Callable[[Client, str | None], Awaitable[Page[ItemT]]]
    ) -> tuple[ItemT, ...]:
        """Every page of a listing of ``capability`` (none when the server lacks it)."""
        client = await self._client(capability)
        if client is None:
            return ()
        return await self._asked(
            f"list its {capability}", all_pages(lambda cursor: page(client, cursor))
        )

    async def _client(self, capability: str) -> Client | None:
        """The live SDK client, or ``None`` when the server lacks ``capability``."""
        self._live()
        client = (await self._connect()).client
        if getattr(client.server_capabilities, capability, None) is None:
            return None
        return client

    async def _needed(self, capability: str) -> Client:
        client = await self._client(capability)
        if client is None:
            raise McpError(f"MCP server '{self.name}' declares no {capability}")
        return client

    async def _asked(self, what: str, request: Awaitable[AnswerT]) -> AnswerT:
        """A request's answer; its failure as an `McpError` saying what was asked."""
        try:
            with anyio.fail_after(self.request_timeout):
                return await request
        except TimeoutError:
            raise McpError(
                f"MCP server '{self.name}' did not {what} within {self.request_timeout:g} s"
            ) from None
        except (MCPError, httpx2.HTTPError, OSError, anyio.BrokenResourceError) as exc:
            raise McpError(f"MCP server '{self.name}' failed to {what}: {describe(exc)}") from exc

    # - calls -

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        meta: Mapping[str, JsonValue] | None = None,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> types.CallToolResult:
        """Call one of the server's tools by its own name.

        A connection found broken is opened again first (after the backoff). A cancelled
        call sends ``notifications/cancelled`` to the server.

        Args:
            name: The tool's name on the server.
            arguments: The arguments (already valid: see `McpTool`).
            meta: Sent as the request's ``_meta``.
            timeout: Seconds this call may take (default: the client's ``request_timeout``).
            on_progress: Receives the server's progress notifications for this call.
            headers: Extra HTTP headers for this call (streamable HTTP).

        Raises:
            McpError: The client is not initialized; the connection broke, or could not be
                opened again; the server answered with an error; the call timed out; or the
                server sent something that is not JSON-RPC.
        """
        self._live()
        connection = await self._connect()
        call = _InFlight(anyio.CancelScope())
        self._inflight.add(call)
        token = CALL_HEADERS.set(headers) if headers else None
        sent: dict[str, Any] = dict(meta or {})
        if connection.session is not None:
            sent[SESSION_META_KEY] = connection.session
        try:
            with call.scope:
                result = await connection.client.call_tool(
                    name,
                    dict(arguments or {}),
                    read_timeout_seconds=timeout or self.request_timeout,
                    progress_callback=on_progress,
                    meta=sent or None,  # type: ignore[arg-type]  # JSON values
                )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._broken(connection, exc)
                raise McpError(
                    f"the connection to MCP server '{self.name}' closed during the call "
                    f"(it is opened again for the next call): {exc.message}"
                ) from exc
            if exc.code == REQUEST_TIMEOUT:
                seconds = timeout or self.request_timeout
                raise McpError(
                    f"MCP server '{self.name}' did not answer within {seconds:g} s "
                    "(the call was cancelled on the server)"
                ) from exc
            raise McpError(describe(exc)) from exc
        except (
            httpx2.HTTPError,
            OSError,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
        ) as exc:
            self._broken(connection, exc)
            raise McpError(
                f"the connection to MCP server '{self.name}' failed during the call "
                f"(it is opened again for the next call): {describe(exc)}"
            ) from exc
        except (RuntimeError, ValueError) as exc:
            # The SDK's checks of the answer: a result that is not a CallToolResult of the
            # negotiated version, or structured content against the tool's output schema.
            raise McpError(f"MCP server '{self.name}' answered badly: {describe(exc)}") from exc
        finally:
            self._inflight.discard(call)
            if token is not None:
                CALL_HEADERS.reset(token)
        if call.fault is not None:
            raise McpError(call.fault)
        self._failures = 0
        given = (result.meta or {}).get(SESSION_META_KEY)
        if isinstance(given, str) and given:
            connection.session = given
        return result

    def _broken(self, connection: _Connection, why: BaseException) -> None:
        """Mark a connection broken: it is closed, and the next call opens another."""
        if connection.broken is None:
            connection.broken = why
            connection.done.set()
        if self._connection is connection:
            self._connection = None
        self._failures += 1

    def __repr__(self) -> str:
        state = "initialized" if self.is_initialized else "not initialized"
        return f"<McpClient {self.name!r} {self._target.describe()!r} {state}>"


@contextlib.contextmanager
def _cancelling(
    group: anyio.abc.TaskGroup | None,
    function: Callable[[_Connection], Awaitable[None]],
    connection: _Connection,
) -> Any:
    """Run ``function(connection)`` beside the connection, cancelled when it closes."""
    scope = anyio.CancelScope()

    async def run() -> None:
        with scope:
            await function(connection)

    if group is not None:
        group.start_soon(run)
    try:
        yield
    finally:
        scope.cancel()


def _session_box(connection: _Connection) -> dict[str, str]:
    return {} if connection.session is None else {"id": connection.session}


__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "HeaderProvider",
    "McpClient",
    "McpMeta",
    "Mode",
    "ProgressHandler",
    "ToolsListener",
]
