"""MCP benchmarks: the client's cost per call, and servers' throughput over loopback HTTP.

* **Client.** The same stdio server (the SDK's `MCPServer` with one ``add`` tool) called by a
  bare SDK ``ClientSession`` and through ferrotool (`Toolkit.call_tool` on an `McpClient`
  tool: validation, the call, the conversion), one call after another: the median time per
  call of each, and their ratio.
* **Server.** ``ferrotool serve``, the SDK's `MCPServer` and FastMCP serving the same ``add``
  over streamable HTTP on loopback, each driven by the same load: 2,000 ``tools/call`` at
  concurrency 50, as self-contained 2026-07-28 requests (raw JSON-RPC over one httpx2 client,
  so the load generator costs the same for every server). Throughput and the latencies'
  p50/p99; ``ferrotool serve`` also with 2 worker processes (a shared Redis store).

Run a server alone with ``python -m benches.mcp_bench ferrotool|sdk|fastmcp PORT``.
"""

from __future__ import annotations

import functools
import itertools
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson

from ferrotool import Toolkit, ToolUseBlock, tool
from ferrotool.mcp import register_mcp
from ferrotool.mcp._convert import SESSION_META_KEY

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ("ferrotool", "sdk", "fastmcp")
MODERN = "2026-07-28"
_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "add",
}


# --- the served tool, three ways ------------------------------------------------------------


def ferrotool_toolkit() -> Toolkit:
    """``add`` as a ferrotool toolkit (`ferrotool serve benches.mcp_bench:ferrotool_toolkit`)."""

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    kit = Toolkit()
    kit.register(add)
    return kit


def _sdk_server() -> Any:
    from mcp.server import MCPServer

    server = MCPServer("bench")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


def _fastmcp_server() -> Any:
    from fastmcp import FastMCP

    server = FastMCP("bench")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


def serve_peer(kind: str, port: int) -> None:
    """Serve ``add`` with a peer over streamable HTTP (blocks)."""
    import uvicorn

    if kind == "sdk":
        app = _sdk_server().streamable_http_app()
    else:
        app = _fastmcp_server().http_app(transport="streamable-http")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# --- processes ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


@contextmanager
def process(
    kind: str, *, workers: int = 1, store: str | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A server process of ``kind`` on a free port, listening; yields it and its port.

    ``ferrotool`` keeps its sessions in ``store`` when given (``redis://...``), and runs
    ``workers`` worker processes (children of the one yielded) when more than one.
    """
    port = free_port()
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    if kind == "ferrotool":
        target = "benches.mcp_bench:ferrotool_toolkit"
        command = [sys.executable, "-m", "ferrotool", "serve", target]
        command += ["--transport", "streamable-http", "--port", str(port)]
        # The load is one client (one address) with many connections: not limited as one.
        command += ["--max-concurrent-calls", "1000"]
        if store:
            command += ["--store", store]
        if workers > 1:
            command += ["--workers", str(workers)]
    else:
        command = [sys.executable, "-m", "benches.mcp_bench", kind, str(port)]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait(port, server)
        yield server, port
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def server(kind: str, *, workers: int = 1, store: str | None = None) -> Iterator[int]:
    """A server process of ``kind`` on a free port (`process`); yields the port."""
    with process(kind, workers=workers, store=store) as (_, port):
        yield port


# --- the load -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """One run of the load against one server."""

    seconds: float
    latencies_s: list[float]

    @property
    def throughput(self) -> float:
        return len(self.latencies_s) / self.seconds

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _answer(body: bytes) -> Any:
    """The JSON-RPC message of a response body: JSON, or the last SSE ``data:`` line."""
    if body.lstrip().startswith(b"{"):
        return orjson.loads(body)
    data = [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
    return orjson.loads(data[-1])


class _Connection:
    """One keep-alive HTTP/1.1 connection, spoken by hand.

    A general HTTP client costs more CPU per request than some of the servers measured (and
    the load runs on the servers' cores): this one only writes a POST and reads back a
    response with a length or in chunks.
    """

    def __init__(self, stream: Any, port: int) -> None:
        self._stream = stream
        self._buffer = b""
        self._head = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
            + "".join(f"{key}: {value}\r\n" for key, value in _HEADERS.items())
        ).encode()

    async def _fill(self) -> None:
        chunk = await self._stream.receive()
        if not chunk:
            raise ConnectionError("closed")
        self._buffer += chunk

    async def _line(self) -> bytes:
        while b"\r\n" not in self._buffer:
            await self._fill()
        line, self._buffer = self._buffer.split(b"\r\n", 1)
        return line

    async def _exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            await self._fill()
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    async def post(self, body: bytes) -> bytes:
        await self._stream.send(self._head + b"content-length: %d\r\n\r\n" % len(body) + body)
        status = await self._line()
        if b" 200 " not in status:
            raise AssertionError(f"HTTP {status!r}")
        length, chunked = None, False
        while line := await self._line():
            key, _, value = line.partition(b":")
            key = key.strip().lower()
            if key == b"content-length":
                length = int(value)
            elif key == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked:
            return await self._exactly(length or 0)
        parts = []
        while size := int((await self._line()).split(b";")[0], 16):
            parts.append(await self._exactly(size))
            await self._line()
        await self._line()
        return b"".join(parts)


async def load(
    port: int | Sequence[int],
    calls: int = 2000,
    concurrency: int = 50,
    *,
    sessions: Sequence[str] = (),
) -> Load:
    """``calls`` tools/call of ``add`` at ``concurrency``; every answer is checked.

    Each of the ``concurrency`` connections makes calls one after another, taking the next of
    the ``calls`` from one count until all are made (a connection served faster makes more of
    them: the figure is the servers' throughput, not the slowest connection's). With several
    ports, the connections are split between them (connection ``i`` on port ``i mod n``). With
    ``sessions`` (one a connection, cycled), each call names its connection's session in
    ``_meta`` (``io.ferrotool/session``), which the server loads from its store.
    """
    ports = [port] if isinstance(port, int) else list(port)
    latencies: list[float] = []

    async def one(connection: _Connection, index: int, session: str | None) -> None:
        meta = _META if session is None else {**_META, SESSION_META_KEY: session}
        body = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": index, "b": 1}, "_meta": meta},
            }
        )
        start = time.perf_counter()
        answer = await connection.post(body)
        latencies.append(time.perf_counter() - start)
        result = _answer(answer)["result"]
        text = result["content"][0]["text"]
        if text != str(index + 1):
            raise AssertionError(f"call {index}: expected {index + 1}, got {text!r}")
        if session is not None and result["_meta"][SESSION_META_KEY] != session:
            raise AssertionError(f"call {index}: not in session {session}")

    async def worker(first: int) -> None:
        target = ports[first % len(ports)]
        session = sessions[first % len(sessions)] if sessions else None
        async with await anyio.connect_tcp("127.0.0.1", target) as stream:
            connection = _Connection(stream, target)
            while (index := next(numbers)) < calls:
                await one(connection, index, session)

    for target in ports:
        async with await anyio.connect_tcp("127.0.0.1", target) as stream:
            await one(_Connection(stream, target), -1, None)  # the first call pays for imports
    latencies.clear()
    numbers = itertools.count()
    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for first in range(concurrency):
            group.start_soon(worker, first)
    return Load(time.perf_counter() - start, latencies)


def run_load(
    port: int | Sequence[int], calls: int, concurrency: int, sessions: Sequence[str] = ()
) -> Load:
    return anyio.run(functools.partial(load, port, calls, concurrency, sessions=sessions))


# --- the client ---------------------------------------------------------------------------


def stdio_command() -> list[str]:
    """The stdio server both clients call: the SDK's `MCPServer` with ``add``."""
    return [sys.executable, "-m", "benches.mcp_bench", "stdio"]


def median(values: list[float]) -> float:
    return statistics.median(values)


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "stdio":
        _sdk_server().run()
    else:
        serve_peer(kind, int(sys.argv[2]))


class ClientPair:
    """The two clients the client benchmark compares, each on its own copy of the server.

    `opened` connects both (inside the timing's event loop); `bare` and `ferrotool` then make
    one call each and return the result's text.
    """

    def __init__(self) -> None:
        self._session: Any = None
        self._toolkit: Any = None

    @staticmethod
    def bare_client() -> Any:
        from mcp import Client, StdioServerParameters

        command = stdio_command()
        parameters = StdioServerParameters(
            command=command[0], args=command[1:], env={"PYTHONPATH": str(ROOT)}
        )
        return Client(parameters, cache=None)

    @staticmethod
    def ferrotool_client() -> Any:
        from ferrotool.mcp import McpClient

        command = stdio_command()
        return McpClient.stdio("bench", command[0], command[1:], env={"PYTHONPATH": str(ROOT)})

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[ClientPair]:
        bare, ferro = self.bare_client(), self.ferrotool_client()
        toolkit = Toolkit()
        async with bare, ferro:
            await register_mcp(toolkit, ferro, trust=True)
            await bare.list_tools()
            self._session, self._toolkit = bare.session, toolkit
            try:
                yield self
            finally:
                self._session = self._toolkit = None

    async def bare(self) -> str:
        result = await self._session.call_tool("add", {"a": 1, "b": 2})
        return str(result.content[0].text)

    async def ferrotool(self) -> str:
        result = await self._toolkit.call_tool(_FERRO_CALL)
        return str(result.content)


_FERRO_CALL = ToolUseBlock("bench", "mcp__bench__add", '{"a": 1, "b": 2}')
