"""``ferrotool serve``: driven by the SDK's own client and by ferrotool's, on every transport."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_support import PYTHON, SERVERS, free_port, stop, wait_port
from mcp_types import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from servers.served import toolkit

from ferrotool import Toolkit, ToolResultState, ToolUseBlock
from ferrotool.cli.serve import balanced
from ferrotool.mcp import McpClient, register_mcp
from ferrotool.mcp.server import McpToolServer

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")]),
    "SERVED_TOKENS": "worker-token",
}


def serve(*args: str, stderr: int = subprocess.DEVNULL) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    command = [PYTHON, "-m", "ferrotool", "serve", *args, "--port", str(port)]
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_port(port, process, seconds=60)  # imports take long on a busy machine
    except BaseException:
        ended(process)
        raise
    return process, port


def ended(process: subprocess.Popen[bytes]) -> None:
    stop(process)
    if process.stderr is not None:
        process.stderr.close()


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=PYTHON, args=["-m", "ferrotool", "serve", *args], env={"PYTHONPATH": str(SERVERS)}
    )


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def approve(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    if "approve" in params.requested_schema["properties"]:
        return types.ElicitResult(action="accept", content={"approve": True})
    return types.ElicitResult(action="accept", content={"result": "blue"})


async def refuse(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


# - in process: the server itself -


@pytest.fixture
def served() -> McpToolServer:
    return McpToolServer(toolkit())


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_list_is_the_cached_mcp_definitions_byte_stable(
    served: McpToolServer, mode: str
) -> None:
    expected = orjson.loads(served.registry.view().schemas_json("mcp"))
    async with Client(served.server, mode=mode) as client:
        first = await client.list_tools(cache_mode="bypass")
        second = await client.list_tools(cache_mode="bypass")
    dumped = [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in first.tools
    ]
    assert dumped == expected
    assert first.tools == second.tools
    add = next(tool for tool in first.tools if tool.name == "add")
    assert add.annotations is not None
    assert add.annotations.read_only_hint is True


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_calls_run_through_the_pipeline(served: McpToolServer, mode: str) -> None:
    async with Client(served.server, mode=mode) as client:
        good = await client.call_tool("add", {"a": 2, "b": 3})
        assert (text(good), good.is_error) == ('{"total":5}', False)
        bad = await client.call_tool("add", {"a": "two"})
        assert bad.is_error
        assert "a: expected integer" in text(bad)
        assert "Correct the arguments" in text(bad)
        unknown = await client.call_tool("ad", {})
        assert unknown.is_error
        assert "Did you mean: add" in text(unknown)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_reset_tools_is_per_session(served: McpToolServer, mode: str) -> None:
    async with (
        Client(served.server, mode="legacy") as one,
        Client(served.server, mode="legacy") as two,
    ):
        before = {tool.name for tool in (await one.list_tools()).tools}
        assert "secret" not in before
        assert "reset_tools" in before
        await one.call_tool("reset_tools", {"admin": True})
        assert "secret" in {tool.name for tool in (await one.list_tools()).tools}
        assert "secret" not in {tool.name for tool in (await two.list_tools()).tools}
        assert text(await one.call_tool("secret", {})) == "the secret"
        assert (await two.call_tool("secret", {})).is_error


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_approvals_and_client_tools_become_elicitations(
    served: McpToolServer, mode: str
) -> None:
    async with Client(served.server, mode=mode, elicitation_callback=approve) as client:
        deleted = await client.call_tool("delete_file", {"path": "/tmp/x"})
        assert (text(deleted), deleted.is_error) == ("deleted /tmp/x", False)
        asked = await client.call_tool("ask_user", {"question": "colour?"})
        assert (text(asked), asked.is_error) == ("blue", False)
    async with Client(served.server, mode=mode, elicitation_callback=refuse) as client:
        denied = await client.call_tool("delete_file", {"path": "/tmp/x"})
        assert denied.is_error
        assert "Permission denied by user" in text(denied)


async def test_a_client_without_elicitation_gets_a_clear_error(served: McpToolServer) -> None:
    async with Client(served.server, mode="legacy") as client:
        result = await client.call_tool("delete_file", {"path": "/tmp/x"})
    assert result.is_error
    assert "needs a person's approval, and this MCP client does not support elicitation" in text(
        result
    )
    assert len(served.store) == 0  # type: ignore[arg-type]  # nothing was left waiting


async def test_progress_notifications(served: McpToolServer) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with Client(served.server, mode="legacy") as client:
        result = await client.call_tool("steps", {"count": 3}, progress_callback=progress)
    assert text(result) == "3 steps"
    assert seen == [(1.0, "step 1"), (2.0, "step 2"), (3.0, "step 3")]


# - real processes, every transport, both clients -


def sdk_target(transport: str, port: int) -> Any:
    if transport == "sse":
        return sse_client(f"http://127.0.0.1:{port}/sse")
    return f"http://127.0.0.1:{port}/mcp"


def ferrotool_client(transport: str, port: int, mode: str) -> McpClient:
    if transport == "sse":
        return McpClient.sse("served", f"http://127.0.0.1:{port}/sse", mode=mode)
    return McpClient.streamable_http("served", f"http://127.0.0.1:{port}/mcp", mode=mode)


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def http_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    transport: str = request.param
    process, port = serve("served:toolkit", "--transport", transport)
    yield transport, port
    stop(process)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_served_over_http_to_the_sdk_client(http_server: tuple[str, int], mode: str) -> None:
    transport, port = http_server
    with anyio.fail_after(30):
        async with Client(
            sdk_target(transport, port), mode=mode, elicitation_callback=approve
        ) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"add", "steps", "delete_file", "ask_user", "reset_tools"} <= names
            assert text(await client.call_tool("add", {"a": 1, "b": 1})) == '{"total":2}'
            assert text(await client.call_tool("delete_file", {"path": "p"})) == "deleted p"
            seen: list[str | None] = []

            async def progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(message)

            await client.call_tool("steps", {"count": 2}, progress_callback=progress)
            assert seen == ["step 1", "step 2"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_round_trip_ferrotool_client_to_ferrotool_serve(
    http_server: tuple[str, int], mode: str
) -> None:
    transport, port = http_server
    client = ferrotool_client(transport, port, mode)
    kit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(kit, client, trust=("reset_tools",))  # it changes the session
        try:
            result = await kit.call_tool(ToolUseBlock("1", "mcp__served__add", '{"a": 2, "b": 2}'))
            assert result.content == '{"total":4}'
            invalid = await kit.call_tool(ToolUseBlock("2", "mcp__served__add", '{"a": 2}'))
            assert invalid.state is ToolResultState.ERROR  # stopped before it left the process
            spec = kit.get_spec("mcp__served__add")
            assert spec is not None
            assert spec.read_only
            # The session is kept on both eras (by _meta on the stateless one).
            await kit.call_tool(ToolUseBlock("3", "mcp__served__reset_tools", '{"admin": true}'))
            assert [tool.name for tool in await client.list_tools() if tool.name == "secret"]
        finally:
            await client.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_served_over_stdio_both_clients(mode: str) -> None:
    with anyio.fail_after(30):
        async with Client(
            stdio("served:toolkit"), mode=mode, elicitation_callback=approve
        ) as client:
            assert text(await client.call_tool("ask_user", {"question": "q"})) == "blue"
        ferro = McpClient.stdio(
            "served",
            PYTHON,
            ["-m", "ferrotool", "serve", "served:toolkit"],
            env={"PYTHONPATH": str(SERVERS)},
            mode=mode,
        )
        kit = Toolkit()
        await register_mcp(kit, ferro)
        try:
            result = await kit.call_tool(ToolUseBlock("1", "mcp__served__add", '{"a": 1, "b": 2}'))
            assert result.content == '{"total":3}'
        finally:
            await ferro.close()


async def test_serve_without_a_target_serves_the_demo_toolkit() -> None:
    with anyio.fail_after(30):
        async with Client(stdio()) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"get_weather", "place_order", "convert", "pick"} <= names
            order = await client.call_tool(
                "place_order", {"items": [{"sku": "A1", "qty": 2, "price": 9.5}]}
            )
            assert not order.is_error
            assert json.loads(text(order))["shop"] == "Corner Shop"


# - many workers, one session -


class RoundRobin(httpx2.AsyncBaseTransport):
    """Sends each request to the next of several ports: one session, every worker."""

    def __init__(self, ports: list[int]) -> None:
        self._ports = ports
        self._next = 0
        self._inner = httpx2.AsyncHTTPTransport()
        self.sent: list[int] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self._ports[self._next % len(self._ports)]
        self._next += 1
        self.sent.append(port)
        request.url = request.url.copy_with(port=port)
        request.headers["host"] = f"127.0.0.1:{port}"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_one_session_across_two_worker_processes(redis_url: str) -> None:
    first, port_a = serve(
        "served:toolkit_with_pid", "--transport", "streamable-http", "--store", redis_url
    )
    second, port_b = serve(
        "served:toolkit_with_pid", "--transport", "streamable-http", "--store", redis_url
    )
    transport = RoundRobin([port_a, port_b])
    try:
        with anyio.fail_after(60):
            async with httpx2.AsyncClient(transport=transport) as http:
                target = streamable_http_client(f"http://127.0.0.1:{port_a}/mcp", http_client=http)
                async with Client(target, mode="legacy", elicitation_callback=approve) as client:
                    pids = {text(await client.call_tool("pid", {})) for _ in range(4)}
                    assert len(pids) == 2  # both workers served this session
                    await client.call_tool("reset_tools", {"admin": True})
                    for _ in range(2):  # the groups live in Redis: every worker sees them
                        names = {tool.name for tool in (await client.list_tools()).tools}
                        assert "secret" in names
                        assert text(await client.call_tool("secret", {})) == "the secret"
                    # The question goes out on one worker and the answer comes in on another.
                    deleted = await client.call_tool("delete_file", {"path": "/x"})
                    assert (text(deleted), deleted.is_error) == ("deleted /x", False)
    finally:
        stop(first)
        stop(second)
    assert set(transport.sent) == {port_a, port_b}


# - many workers, a socket each -

reuse_port = pytest.mark.skipif(
    not balanced(), reason="workers get a socket each where SO_REUSEPORT spreads connections"
)
MODERN = max(MODERN_PROTOCOL_VERSIONS)
TRIES = 64  # separate connections before both workers must have answered (the hash spreads them)


def workers(redis_url: str, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    """``ferrotool serve --workers 2`` of ``served:toolkit_with_pid``, stderr kept."""
    return serve(
        "served:toolkit_with_pid",
        "--transport",
        "streamable-http",
        "--workers",
        "2",
        "--store",
        redis_url,
        *args,
        stderr=subprocess.PIPE,
    )


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
        return int(stat.read().rpartition(")")[2].split()[1])


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def connections(port: int, **headers: str) -> list[tuple[int, tuple[int, int]]]:
    """Raw ``pid`` calls, a connection each, until both workers answered.

    Each connection's answer: the worker's pid, and the statuses of a call without the
    ``headers`` and of one with a wrong bearer token, sent on the same connection after it.
    """
    answers: list[tuple[int, tuple[int, int]]] = []
    for _ in range(TRIES):
        with httpx2.Client(limits=httpx2.Limits(max_connections=1), timeout=60) as http:
            answer = _post_on(http, port, _call("pid", {}), **headers).json()
            pid = int(answer["result"]["content"][0]["text"])
            bare = _post_on(http, port, _call("pid", {})).status_code
            wrong = _post_on(http, port, _call("pid", {}), authorization="Bearer other").status_code
        answers.append((pid, (bare, wrong)))
        if len({pid for pid, _ in answers}) == 2:
            break
    return answers


async def answering_pids(port: int) -> set[int]:
    """The workers that answer ``pid``: the official client, a new connection each time."""
    pids: set[int] = set()
    for _ in range(TRIES):
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=MODERN) as client:
            pids.add(int(text(await client.call_tool("pid", {}))))
        if len(pids) == 2:
            break
    return pids


@reuse_port
async def test_two_workers_share_the_connections_and_stop_with_the_parent(redis_url: str) -> None:
    process, port = workers(redis_url)
    try:
        with anyio.fail_after(120):
            pids = await answering_pids(port)
        assert len(pids) == 2  # both workers accepted connections
        assert {parent_of(pid) for pid in pids} == {process.pid}
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        ended(process)
    assert all(gone(pid) for pid in pids)  # reaped before the parent exited: no orphans


@reuse_port
def test_a_worker_that_dies_stops_the_server(redis_url: str) -> None:
    process, port = workers(redis_url)
    try:
        pids = {pid for pid, _ in connections(port)}
        assert len(pids) == 2
        dead, other = sorted(pids)
        os.kill(dead, signal.SIGKILL)
        assert process.wait(60) == 1
        assert process.stderr is not None
        said = process.stderr.read().decode()
    finally:
        ended(process)
    assert f"worker {dead} exited with status -9; stopping the others" in said
    assert gone(other)


@reuse_port
def test_every_worker_requires_the_token(redis_url: str) -> None:
    process, port = workers(redis_url, "--auth-token-env", "SERVED_TOKENS")
    try:
        answers = connections(port, authorization="Bearer worker-token")
    finally:
        ended(process)
    assert len({pid for pid, _ in answers}) == 2
    assert {refused for _, refused in answers} == {(401, 401)}


def test_workers_need_a_shared_store() -> None:
    done = subprocess.run(
        [PYTHON, "-m", "ferrotool", "serve", "--transport", "streamable-http", "--workers", "2"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--workers needs" in done.stderr


def _post(port: int, body: dict[str, Any], **headers: str) -> httpx2.Response:
    with httpx2.Client() as http:
        return _post_on(http, port, body, **headers)


def _post_on(
    http: httpx2.Client, port: int, body: dict[str, Any], **headers: str
) -> httpx2.Response:
    base = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": str(body["params"]["name"]),
    }
    url = f"http://127.0.0.1:{port}/mcp"
    return http.post(url, content=orjson.dumps(body), headers={**base, **headers})


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


def test_a_plain_stateless_call_answers_like_the_sdk_would(http_server: tuple[str, int]) -> None:
    transport, port = http_server
    if transport != "streamable-http":
        pytest.skip("the fast path is streamable HTTP's")
    answer = _post(port, _call("add", {"a": 1, "b": 2})).json()
    result = answer["result"]
    assert answer["id"] == 7
    assert result["content"] == [{"type": "text", "text": '{"total":3}'}]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "ferrotool"
    assert result["_meta"]["io.ferrotool/session"]
    invalid = _post(port, _call("add", {"a": "x"})).json()["result"]
    assert invalid["isError"] is True
    assert "a: expected integer" in invalid["content"][0]["text"]
    # The SDK's own answers where the envelope is wrong: the fast path stands aside.
    mismatch = _post(port, _call("add", {"a": 1, "b": 2}), **{"mcp-name": "other"})
    assert mismatch.status_code == 400
    assert mismatch.json()["error"]["code"] == HEADER_MISMATCH
