"""The SDK side of `McpClient`: transports, the listing walk, the task that holds a connection."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Final, TextIO, TypeAlias, TypeVar

import httpx2
import mcp_types as types
import pydantic
from mcp import Client, MCPError
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp_types.methods import validate_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ferrotool._execution.loopback import running_trio
from ferrotool.mcp._convert import SESSION_META_KEY, RejectedTool

_PAGE_CAP: Final = 1000
_HTTP_TIMEOUT: Final = 30.0
_HTTP_READ_TIMEOUT: Final = 300.0


CALL_HEADERS: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "ferrotool_mcp_call_headers", default=None
)
"""The headers of the call being sent: the SDK sends each HTTP request in a context copied
from the caller's, so a request hook reads them here."""


@dataclass(frozen=True, slots=True)
class Stdio:
    """A server run as a subprocess."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] | None
    cwd: str | None

    def describe(self) -> str:
        return " ".join((self.command, *self.args))


@dataclass(frozen=True, slots=True)
class Sse:
    """A server behind the SSE transport."""

    url: str
    headers: Mapping[str, str]

    def describe(self) -> str:
        return self.url


@dataclass(frozen=True, slots=True)
class Http:
    """A server behind streamable HTTP (``auth`` signs its requests: a bearer token, OAuth)."""

    url: str
    headers: Mapping[str, str]
    auth: httpx2.Auth | None = None

    def describe(self) -> str:
        return self.url


@dataclass(frozen=True, slots=True)
class InProcess:
    """A server object of this process, spoken to through the SDK's in-memory streams.

    ``server`` is the SDK's low-level ``Server``; ``lifespan``, when not ``None``, is entered
    around the connection (a FastMCP server's own start-up and shutdown).
    """

    server: Server[Any]
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[object]] | None
    label: str

    def describe(self) -> str:
        return f"in-process {self.label}"


Target: TypeAlias = Stdio | Sse | Http | InProcess
"""Where a server is: a command to run, a URL, or a server object of this process."""


def in_process(server: object) -> InProcess:
    """The in-process target of a server object.

    Takes the SDK's low-level ``Server`` or its ``MCPServer``, a FastMCP server, or a
    `ferrotool.mcp.server.McpToolServer`.

    Raises:
        TypeError: ``server`` is none of these.
    """
    label = type(server).__name__
    if isinstance(server, MCPServer):
        return InProcess(server._lowlevel_server, None, label)
    if isinstance(server, Server):
        return InProcess(server, None, label)
    lowlevel = getattr(server, "server", None)  # an McpToolServer
    if isinstance(lowlevel, Server):
        return InProcess(lowlevel, None, label)
    lowlevel = getattr(server, "_mcp_server", None)  # FastMCP's
    lifespan = getattr(server, "_lifespan_manager", None)
    if isinstance(lowlevel, Server) and callable(lifespan):
        return InProcess(lowlevel, lifespan, label)
    raise TypeError(
        "an in-process MCP server is an mcp Server or MCPServer, a FastMCP server or an "
        f"McpToolServer, not {label}"
    )


async def _add_call_headers(request: httpx2.Request) -> None:
    headers = CALL_HEADERS.get()
    if headers:
        request.headers.update(headers)


@functools.cache
def _devnull() -> TextIO:
    return open(os.devnull, "w", encoding="utf-8")  # one, for the process


def server_stderr() -> TextIO:
    """Where a stdio server's stderr goes: this process's, through a real file descriptor.

    ``sys.stderr`` when it has one; the interpreter's own stderr when ``sys.stderr`` was replaced
    by an object without one (a notebook's stream, a capture); else the null device.
    """
    for stream in (sys.stderr, sys.__stderr__):
        if stream is None:
            continue
        try:
            stream.fileno()
        except (AttributeError, OSError, ValueError):
            continue
        return stream
    return _devnull()


async def sdk_client(target: Target, stack: contextlib.AsyncExitStack, **options: Any) -> Client:
    """The SDK client for ``target``; what it needs (HTTP client, lifespan) goes on ``stack``."""
    if isinstance(target, InProcess):
        if target.lifespan is not None:
            await stack.enter_async_context(target.lifespan())
        return Client(target.server, **options)
    if isinstance(target, Stdio):
        parameters = StdioServerParameters(
            command=target.command,
            args=list(target.args),
            env=None if target.env is None else dict(target.env),
            cwd=target.cwd,
        )
        return Client(stdio_client(parameters, errlog=server_stderr()), **options)
    if isinstance(target, Sse):
        transport = sse_client(
            target.url,
            headers=dict(target.headers),
            timeout=_HTTP_TIMEOUT,
            sse_read_timeout=_HTTP_READ_TIMEOUT,
        )
        return Client(transport, **options)
    http = httpx2.AsyncClient(
        headers=dict(target.headers),
        auth=target.auth,
        timeout=httpx2.Timeout(_HTTP_TIMEOUT, read=_HTTP_READ_TIMEOUT),
        event_hooks={"request": [_add_call_headers]},
    )
    await stack.enter_async_context(http)
    return Client(streamable_http_client(target.url, http_client=http), **options)


def spawn(function: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``function`` in a task of its own, outside the caller's cancel scopes.

    anyio has no task without a parent task group, so this is the event loop's own: an asyncio
    task, or a trio system task (cancelled when the run ends); the task keeps its own anyio
    task group inside. An error escaping it is logged: trio would end the whole run with one.
    """
    trio = running_trio()
    if trio is not None:

        async def guarded() -> None:
            try:
                await function()
            except Exception:
                _LOG.exception("an MCP connection's task ended with an error")

        trio.lowlevel.spawn_system_task(guarded)
        return
    task: asyncio.Task[None] = asyncio.get_running_loop().create_task(function())
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


_LOG: Final = logging.getLogger("ferrotool.mcp")
_TASKS: Final[set[asyncio.Task[None]]] = set()
"""Strong references to the host tasks (asyncio keeps only weak ones)."""


def listens(client: Client) -> bool:
    """Whether the connection can follow the tool list with ``subscriptions/listen``."""
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    tools = client.server_capabilities.tools
    return tools is not None and bool(tools.list_changed)


async def list_all(
    client: Client, session: dict[str, str], rejected: list[RejectedTool] | None = None
) -> tuple[types.Tool, ...]:
    """Every page of ``tools/list`` (bounded: a cursor seen twice ends the walk).

    On a stateless connection to a server that keeps sessions by ``_meta`` (`ferrotool serve`),
    ``session["id"]`` is sent, or set from the listing, so the listing is the session's. A page
    the SDK refuses because of some of its tools (a definition the negotiated version does not
    allow) is asked for again and read tool by tool: the tools the SDK accepts are kept, the
    others go to ``rejected`` with why.
    """
    tools: list[types.Tool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(_PAGE_CAP):
        meta: Any = {SESSION_META_KEY: session["id"]} if "id" in session else None
        try:
            page = await client.list_tools(cursor=cursor, meta=meta, cache_mode="bypass")
        except pydantic.ValidationError as refused:
            page = await _page_tool_by_tool(client, cursor, meta, refused, rejected)
        given = (page.meta or {}).get(SESSION_META_KEY)
        if "id" not in session and isinstance(given, str) and given:
            session["id"] = given
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return tuple(tools)


PageT = TypeVar("PageT")


async def all_pages(
    fetch: Callable[[str | None], Awaitable[tuple[list[PageT], str | None]]],
) -> tuple[PageT, ...]:
    """Every page of a listing: ``fetch(cursor)`` gives a page's items and the next cursor.

    Bounded as `list_all` is: at most 1,000 pages, and a cursor seen twice ends the walk.
    """
    items: list[PageT] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(_PAGE_CAP):
        page, cursor = await fetch(cursor)
        items.extend(page)
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return tuple(items)


async def _page_tool_by_tool(
    client: Client,
    cursor: str | None,
    meta: Any,
    refused: pydantic.ValidationError,
    rejected: list[RejectedTool] | None,
) -> types.ListToolsResult:
    """One ``tools/list`` page asked for again, its tools checked one by one.

    The SDK checks a page as a whole; this sends the same request through the session's own
    stamping and dispatcher, and checks each tool as the SDK would a page of that one tool.
    Where that cannot be done (another SDK's internals), the SDK's refusal stands.
    """
    connection = client.session
    request = types.ListToolsRequest(params=types.PaginatedRequestParams(cursor=cursor, _meta=meta))
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: Any = {}
    try:
        connection._stamp(data, options)
        timeout = connection._session_read_timeout_seconds
        if timeout is not None:
            options["timeout"] = timeout
        raw = await connection._dispatcher.send_raw_request(
            "tools/list", data.get("params"), options
        )
        version = connection._negotiated_version or "2025-11-25"
    except AttributeError:
        raise refused from None
    listed = raw.get("tools")
    if not isinstance(listed, list):
        raise refused
    kept: list[object] = []
    for index, tool in enumerate(listed):
        try:
            validate_server_result("tools/list", version, {"tools": [tool]})
        except pydantic.ValidationError as error:
            name = tool.get("name") if isinstance(tool, dict) else None
            label = (
                name
                if isinstance(name, str)
                else f"#{index} of its page"
                if name is None
                else repr(name)
            )
            problem = error.errors()[0]
            where = ".".join(str(part) for part in problem["loc"][2:]) or "the definition"
            reason = f"the MCP SDK refuses its definition ({version}): {where}: {problem['msg']}"
            if rejected is not None:
                rejected.append(RejectedTool(label, reason))
            continue
        kept.append(tool)
    page: dict[str, Any] = {"tools": kept}
    for key in ("nextCursor", "_meta"):
        if key in raw:
            page[key] = raw[key]
    result = types.ListToolsResult.model_validate(page, by_name=False)
    complete = cursor is None and result.next_cursor is None
    return connection._absorb_tool_listing(result, complete=complete)


def snippet(exc: Exception) -> str:
    """What a server sent that did not parse, shortly."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            found = errors()[0].get("input")
            if isinstance(found, str | bytes):
                return repr(found[:200])
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def describe(exc: BaseException) -> str:
    if isinstance(exc, MCPError):
        return exc.message or type(exc).__name__
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    return str(exc) or type(exc).__name__


__all__ = [
    "CALL_HEADERS",
    "Http",
    "InProcess",
    "Sse",
    "Stdio",
    "Target",
    "all_pages",
    "describe",
    "in_process",
    "list_all",
    "listens",
    "sdk_client",
    "snippet",
    "spawn",
]
