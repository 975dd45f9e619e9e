"""``ferrotool serve`` stops a call its client gives up on: every transport, both eras.

The served tools (``servers/slow.py``) write how each call ended to a log file the test reads:
``TAG started``, then ``TAG cancelled`` or ``TAG finished``. Each test starts a call with the
SDK's own client, waits until the tool has started, gives the call up, and checks that the tool
saw the cancellation and that the server still answers.

Two ways to give a call up:

* the caller's scope is cancelled: the SDK's client then sends ``notifications/cancelled``
  (stdio, SSE, handshake-era HTTP) or, at 2026-07-28 over HTTP, closes the request's
  connection (that era's cancellation over HTTP: it has no client-to-server notifications);
* the client goes away without a word: the call is sent with a resumption hint, which keeps
  the client from sending ``notifications/cancelled``, then the client closes (stdio: the
  server's stdin; SSE: the event stream; handshake-era HTTP: the session, with ``DELETE``;
  2026-07-28 HTTP: the request's connection).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import anyio
import httpx2
import mcp_types as types
import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import ClientMessageMetadata
from mcp_support import PYTHON, SERVERS, free_port, start, stop
from servers.served import toolkit as served_toolkit
from servers.slow import LOG_ENV, released
from servers.slow import toolkit as slow_toolkit
from starlette.types import ASGIApp, Message, Scope

from ferrotool._session.memory import InMemorySessionStore
from ferrotool._session.state import SessionKey, ToolContextState
from ferrotool.mcp.serve import http_app
from ferrotool.mcp.server import McpToolServer

TARGET = "slow:toolkit"
MODERN = "2026-07-28"

Connect: TypeAlias = Callable[[], AbstractAsyncContextManager[Client]]
"""Opens a client of the route's server (the same server for every client of a test)."""


@dataclass(frozen=True)
class Route:
    """How a client reaches ``ferrotool serve``: transport, era, one process or two."""

    transport: str
    mode: str
    shared: bool = False
    progress: bool = False  # a 2026-07-28 call asking for progress is the SDK's, not the fast path

    @property
    def id(self) -> str:
        era = "2026" if self.mode == MODERN else "legacy"
        redis = "-redis" if self.shared else ""
        return f"{self.transport}{redis}-{era}{'-progress' if self.progress else ''}"


ROUTES = [
    Route("stdio", "legacy"),
    Route("stdio", MODERN),
    Route("sse", "legacy"),
    Route("streamable-http", "legacy"),
    Route("streamable-http", MODERN),
    Route("streamable-http", MODERN, progress=True),
    Route("streamable-http", "legacy", shared=True),
    Route("streamable-http", MODERN, shared=True),
    Route("streamable-http", MODERN, shared=True, progress=True),
]


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cancel") / "calls.log"
    path.touch()
    return path


def serve(log: Path, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")]),
        LOG_ENV: str(log),
    }
    command = ["-m", "ferrotool", "serve", TARGET, *args, "--port", str(port)]
    return start(command, port, env), port


@pytest.fixture(scope="module")
def sse_port(log: Path) -> Iterator[int]:
    process, port = serve(log, "--transport", "sse")
    yield port
    stop(process)


@pytest.fixture(scope="module")
def http_port(log: Path) -> Iterator[int]:
    process, port = serve(log, "--transport", "streamable-http")
    yield port
    stop(process)


@pytest.fixture(scope="module")
def worker_ports(log: Path, redis_url: str) -> Iterator[tuple[int, int]]:
    """Two worker processes sharing one Redis store."""
    first, port = serve(log, "--transport", "streamable-http", "--store", redis_url)
    try:
        second, other = serve(log, "--transport", "streamable-http", "--store", redis_url)
    except BaseException:
        stop(first)
        raise
    yield port, other
    stop(first)
    stop(second)


class CancelsElsewhere(httpx2.AsyncBaseTransport):
    """Sends each ``notifications/cancelled`` to one worker, every other request to another."""

    def __init__(self, calls: int, cancels: int) -> None:
        self._calls = calls
        self._cancels = cancels
        self._inner = httpx2.AsyncHTTPTransport()
        self.cancels_sent = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self._calls
        if b'"notifications/cancelled"' in request.content:
            port = self._cancels
            self.cancels_sent += 1
        request.url = request.url.copy_with(port=port)
        request.headers["host"] = f"127.0.0.1:{port}"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
        self._inner = httpx2.AsyncHTTPTransport()  # for the test's next client


@pytest.fixture(params=ROUTES, ids=[route.id for route in ROUTES])
def route(request: pytest.FixtureRequest) -> Route:
    chosen: Route = request.param
    return chosen


@pytest.fixture
def routing(route: Route, request: pytest.FixtureRequest) -> CancelsElsewhere | None:
    """For two workers: the cancellations go to the worker that does not run the call."""
    if not route.shared:
        return None
    calls, cancels = request.getfixturevalue("worker_ports")
    return CancelsElsewhere(calls, cancels)


@pytest.fixture
def connect(
    route: Route, log: Path, routing: CancelsElsewhere | None, request: pytest.FixtureRequest
) -> Connect:
    if route.transport == "stdio":
        params = StdioServerParameters(
            command=PYTHON,
            args=["-m", "ferrotool", "serve", TARGET],
            env={"PYTHONPATH": str(SERVERS), LOG_ENV: str(log)},
        )
        return lambda: Client(params, mode=route.mode)
    if route.transport == "sse":
        port: int = request.getfixturevalue("sse_port")
        return lambda: Client(sse_client(f"http://127.0.0.1:{port}/sse"), mode=route.mode)
    if routing is None:
        port = request.getfixturevalue("http_port")
        return lambda: Client(f"http://127.0.0.1:{port}/mcp", mode=route.mode)

    @asynccontextmanager
    async def across(transport: CancelsElsewhere = routing) -> AsyncIterator[Client]:
        async with httpx2.AsyncClient(transport=transport) as http:
            url = "http://127.0.0.1/mcp"  # the port is the transport's
            async with Client(
                streamable_http_client(url, http_client=http), mode=route.mode
            ) as client:
                yield client

    return across


def events(log: Path, tag: str) -> list[str]:
    prefix = f"{tag} "
    lines = log.read_text(encoding="utf-8").splitlines()
    return [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]


async def until(log: Path, tag: str, count: int) -> list[str]:
    """The tag's first ``count`` events, once there (a generous bound as a safety net)."""
    with anyio.fail_after(30):
        while len(seen := events(log, tag)) < count:
            await anyio.sleep(0.02)
    return seen


async def report(progress: float, total: float | None, message: str | None) -> None:
    del progress, total, message


async def ignore(token: str) -> None:
    del token


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def still_serves(client: Client) -> None:
    assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"


async def test_a_cancelled_call_stops_its_tool(
    connect: Connect, log: Path, route: Route, routing: CancelsElsewhere | None
) -> None:
    tag = uuid.uuid4().hex
    arguments: dict[str, object] = {"tag": tag, "seconds": 60}
    with anyio.fail_after(60):
        async with connect() as client:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: client.call_tool(
                        "slow", arguments, progress_callback=report if route.progress else None
                    )
                )
                await until(log, tag, 1)
                group.cancel_scope.cancel()
            assert await until(log, tag, 2) == ["started", "cancelled"]
            await still_serves(client)
    if routing is not None:  # the cancellation reached the other worker, as a notification or not
        assert routing.cancels_sent == (1 if route.mode == "legacy" else 0)


async def test_a_client_that_goes_away_stops_its_tool(
    connect: Connect, log: Path, route: Route
) -> None:
    tag = uuid.uuid4().hex
    call = types.CallToolRequest(
        params=types.CallToolRequestParams(name="slow", arguments={"tag": tag, "seconds": 60})
    )
    silent = ClientMessageMetadata(on_resumption_token_update=ignore)  # no notifications/cancelled
    with anyio.fail_after(60):
        async with connect() as client, anyio.create_task_group() as group:
            group.start_soon(
                lambda: client.session.send_request(
                    call,
                    types.CallToolResult,
                    metadata=silent,
                    progress_callback=report if route.progress else None,
                )
            )
            await until(log, tag, 1)
            group.cancel_scope.cancel()
        assert await until(log, tag, 2) == ["started", "cancelled"]
        if route.transport != "stdio":  # a stdio server ends with its client
            async with connect() as client:
                await still_serves(client)


async def test_a_cancelled_call_finishes_the_section_its_tool_shields(
    connect: Connect, log: Path, route: Route
) -> None:
    """The part of a tool under ``anyio.CancelScope(shield=True)`` runs to its end, then it stops.

    The call is given up while its shielded section runs (the section lasts until the test
    releases it); the section is released only after the cancellation has had time to reach
    the server, whose 2026-07-28 fast path watches the call's connection by then.
    """
    tag = uuid.uuid4().hex
    with anyio.fail_after(60):
        async with connect() as client:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: client.call_tool(
                        "shielded",
                        {"tag": tag},
                        progress_callback=report if route.progress else None,
                    )
                )
                assert await until(log, tag, 2) == ["started", "shielded"]
                group.cancel_scope.cancel()
            await anyio.sleep(0.5)
            assert events(log, tag) == ["started", "shielded"]  # not interrupted in the shield
            released(log, tag).touch()
            done = ["started", "shielded", "shielded-done", "cancelled"]
            assert await until(log, tag, 4) == done
            await still_serves(client)


# - in process: what a cancellation leaves behind -


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_sync_tool_is_left_to_finish_and_nothing_waits_for_it(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.log"
    log.touch()
    monkeypatch.setenv(LOG_ENV, str(log))
    tag = uuid.uuid4().hex
    server = McpToolServer(slow_toolkit())
    with anyio.fail_after(60):
        async with Client(server.server, mode=mode) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "blocked", {"tag": tag})
                await until(log, tag, 1)
                group.cancel_scope.cancel()
            await still_serves(client)  # while the thread still blocks
            assert events(log, tag) == ["started"]
            released(log, tag).touch()
            assert await until(log, tag, 2) == ["started", "finished"]
            await still_serves(client)


class Watched:
    """A memory store that remembers every session it was asked about."""

    def __init__(self) -> None:
        self._inner = InMemorySessionStore()
        self._keys: set[SessionKey] = set()

    async def load(self, key: SessionKey) -> ToolContextState:
        self._keys.add(key)
        return await self._inner.load(key)

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        self._keys.add(key)
        return await self._inner.compare_and_set(key, expected_revision, state)

    async def waiting(self) -> int:
        """How many calls wait in all sessions."""
        return sum([len((await self._inner.load(key)).pending_calls) for key in self._keys])


async def test_a_call_cancelled_while_it_asks_leaves_nothing_waiting() -> None:
    asked = anyio.Event()

    async def never(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    store = Watched()
    server = McpToolServer(served_toolkit(), store=store)
    with anyio.fail_after(60):
        async with Client(server.server, mode="legacy", elicitation_callback=never) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "delete_file", {"path": "/x"})
                await asked.wait()
                assert await store.waiting() == 1
                group.cancel_scope.cancel()
            while await store.waiting():  # the server's side of the cancellation ends
                await anyio.sleep(0.02)
            result = await client.call_tool("add", {"a": 1, "b": 1})
            assert text(result) == '{"total":2}'


# - in process, the 2026-07-28 fast path: whose cancellation ends a call -

_FAST_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Post:
    """One 2026-07-28 ``tools/call`` POST spoken to an ASGI app by hand.

    ``receive`` gives the body, then waits until `hang_up` is set and gives
    ``http.disconnect``; what the app sends is kept in ``sent``.
    """

    def __init__(self, name: str, arguments: dict[str, object]) -> None:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": _FAST_META},
        }
        self._body: bytes | None = orjson.dumps(message)
        self.scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "root_path": "",
            "query_string": b"",
            "client": ("127.0.0.1", 40000),
            "server": ("127.0.0.1", 8000),
            "headers": [
                (b"host", b"127.0.0.1:8000"),
                (b"accept", b"application/json, text/event-stream"),
                (b"content-type", b"application/json"),
                (b"mcp-protocol-version", MODERN.encode()),
                (b"mcp-method", b"tools/call"),
                (b"mcp-name", name.encode()),
            ],
        }
        self.hang_up = anyio.Event()
        self.sent: list[Message] = []

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.hang_up.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    async def run(self, app: ASGIApp) -> int:
        """Let ``app`` answer; how many cancellations its task still has pending then."""
        await app(self.scope, self.receive, self.send)
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    def answer(self) -> str:
        """The text of the tool's result the app sent."""
        assert [message["type"] for message in self.sent] == [
            "http.response.start",
            "http.response.body",
        ]
        assert self.sent[0]["status"] == 200
        result = orjson.loads(self.sent[1]["body"])["result"]
        return "\n".join(block["text"] for block in result["content"])


@pytest.fixture
def fast_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ASGIApp, Path]:
    """``ferrotool serve``'s streamable HTTP app of the slow tools in process, and their log."""
    log = tmp_path / "calls.log"
    log.touch()
    monkeypatch.setenv(LOG_ENV, str(log))
    return http_app(McpToolServer(slow_toolkit())), log


@pytest.mark.asyncio_only("cancels the call's asyncio task as the server's shutdown would")
async def test_the_fast_path_drops_the_answer_of_a_client_gone_and_answers_the_next(
    fast_app: tuple[ASGIApp, Path],
) -> None:
    app, log = fast_app
    tag = uuid.uuid4().hex
    post = Post("shielded", {"tag": tag})
    with anyio.fail_after(60):
        task = asyncio.create_task(post.run(app))
        await until(log, tag, 2)
        post.hang_up.set()
        await anyio.sleep(0.2)  # the watch has seen the disconnect: the shield holds
        assert events(log, tag) == ["started", "shielded"]
        released(log, tag).touch()
        assert await task == 0  # the cancellation was the call's own, and is taken back
        assert events(log, tag) == ["started", "shielded", "shielded-done", "cancelled"]
        assert post.sent == []  # no one reads an answer
        after = Post("add", {"a": 2, "b": 3})
        assert await asyncio.create_task(after.run(app)) == 0
        assert after.answer() == "5"


@pytest.mark.parametrize("gone", [False, True], ids=["connected", "client-gone"])
@pytest.mark.asyncio_only("cancels the call's asyncio task as the server's shutdown would")
async def test_the_fast_path_lets_a_cancellation_from_outside_through(
    fast_app: tuple[ASGIApp, Path], gone: bool
) -> None:
    """The server's own cancellation of a call's task goes on, whether the client went or not.

    With the client gone, the call's own cancellation waits at the tool's shield when the
    outside one comes: both land, and the outside one is not taken for the call's own.
    """
    app, log = fast_app
    tag = uuid.uuid4().hex
    post = Post("shielded", {"tag": tag})
    with anyio.fail_after(60):
        task = asyncio.create_task(post.run(app))
        await until(log, tag, 2)
        if gone:
            post.hang_up.set()
            await anyio.sleep(0.2)
            assert events(log, tag) == ["started", "shielded"]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert events(log, tag) == ["started", "shielded", "cancelled"]
        assert post.sent == []
