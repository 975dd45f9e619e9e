"""``ferrotool serve`` over HTTP: bearer tokens, OAuth resource server, Host/Origin, limits.

Real ``ferrotool serve`` processes on loopback ports, driven by raw HTTP (to attack each rule),
by the official ``mcp`` client and by ferrotool's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_support import PYTHON, SERVERS, free_port, stop, wait_port
from mcp_types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from ferrotool import Toolkit, ToolUseBlock
from ferrotool._session.state import EMPTY_STATE, SessionKey
from ferrotool.mcp import McpClient, register_mcp
from ferrotool.mcp._auth import StaticTokens
from ferrotool.mcp._expiring import ExpiringSessionStore

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")]),
    "GUARD_TOKENS": "env-token",
}
FIRST, SECOND = "first-token", "second-token"
MODERN = max(MODERN_PROTOCOL_VERSIONS)
MODES = ["legacy", MODERN]
ACCEPT = "application/json, text/event-stream"


def command(*args: str, port: int) -> list[str]:
    return [PYTHON, "-m", "ferrotool", "serve", "guarded:toolkit", *args, "--port", str(port)]


def serve(*args: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    process = subprocess.Popen(
        command(*args, port=port), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port, process)
    except BaseException:
        stop(process)
        raise
    return process, port


def refused_start(*args: str) -> str:
    """Run ``ferrotool serve`` expecting it to refuse to start; its stderr."""
    port = free_port()
    done = subprocess.run(
        command(*args, port=port), env=ENV, capture_output=True, timeout=60, check=False
    )
    assert done.returncode != 0
    return done.stderr.decode()


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    # Trailing whitespace, a blank line, a CRLF: each line is one token, stripped.
    path.write_text(f"{FIRST}  \t\n\n{SECOND}\r\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def guarded(request: pytest.FixtureRequest, token_file: Path) -> Iterator[tuple[str, int]]:
    transport: str = request.param
    process, port = serve(
        "--transport",
        transport,
        "--auth-token-file",
        str(token_file),
        "--max-concurrent-calls",
        "2",
    )
    yield transport, port
    stop(process)


def endpoint(transport: str, port: int) -> tuple[str, str]:
    """The method and URL a client reaches first on ``transport``."""
    if transport == "sse":
        return "GET", f"http://127.0.0.1:{port}/sse"
    return "POST", f"http://127.0.0.1:{port}/mcp"


def initialize(version: str = LATEST_HANDSHAKE_VERSION) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


def status(transport: str, port: int, headers: dict[str, str] | list[tuple[str, str]]) -> int:
    """The status of the transport's first request with ``headers`` (an SSE stream not read)."""
    method, url = endpoint(transport, port)
    with httpx2.Client(timeout=10) as http:
        body = initialize() if method == "POST" else None
        request = http.build_request(
            method, url, json=body, headers=[("accept", ACCEPT), *_pairs(headers)]
        )
        response = http.send(request, stream=True)
        response.close()
        return response.status_code


def _pairs(headers: dict[str, str] | list[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(headers.items()) if isinstance(headers, dict) else headers


@asynccontextmanager
async def sdk_client(
    transport: str, port: int, mode: str, token: str | None
) -> AsyncIterator[Client]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    if transport == "sse":
        target = sse_client(f"http://127.0.0.1:{port}/sse", headers=headers)
        async with Client(target, mode=mode) as client:
            yield client
        return
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        target2 = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
        async with Client(target2, mode=mode) as client:
            yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


# - static tokens -


def test_no_token_is_refused_with_a_bearer_challenge(guarded: tuple[str, int]) -> None:
    transport, port = guarded
    method, url = endpoint(transport, port)
    with httpx2.Client(timeout=10) as http:
        response = http.request(method, url, json=initialize(), headers={"accept": ACCEPT})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer wrong-token"},
        {"Authorization": f"Bearer {FIRST.upper()}"},  # the token itself is case-sensitive
        {"Authorization": f"Bearer {FIRST}x"},
        {"Authorization": f"Bearer {FIRST[:-1]}"},
        {"Authorization": "Bearer"},
        {"Authorization": 'Bearer ""'},
        {"Authorization": f"Basic {FIRST}"},
        {"Authorization": f"Token {FIRST}"},
        {"Authorization": FIRST},
        {"Authorization": f"Bearer {FIRST} {FIRST}"},
        {"Authorization": f"Bearer {FIRST},{SECOND}"},
        {"Authorization": f"Bearer\t{FIRST}x"},
        {"X-Authorization": f"Bearer {FIRST}"},
        {"Cookie": f"access_token={FIRST}"},
        [("Authorization", "Bearer wrong-token"), ("Authorization", f"Bearer {FIRST}")],
        [("Authorization", f"Bearer {FIRST}"), ("Authorization", "Bearer wrong-token")],
    ],
)
def test_a_wrong_or_misplaced_token_is_refused(
    guarded: tuple[str, int], headers: dict[str, str] | list[tuple[str, str]]
) -> None:
    transport, port = guarded
    assert status(transport, port, headers) == 401


def test_a_token_in_the_query_string_counts_for_nothing(guarded: tuple[str, int]) -> None:
    transport, port = guarded
    method, url = endpoint(transport, port)
    with httpx2.Client(timeout=10) as http:
        for name in ("access_token", "token", "auth", "authorization"):
            response = http.request(
                method, f"{url}?{name}={FIRST}", json=initialize(), headers={"accept": ACCEPT}
            )
            assert response.status_code == 401


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_scheme_is_case_insensitive(guarded: tuple[str, int], scheme: str) -> None:
    transport, port = guarded
    assert status(transport, port, {"Authorization": f"{scheme} {SECOND}"}) == 200


def test_sse_messages_need_the_token_too(guarded: tuple[str, int]) -> None:
    transport, port = guarded
    if transport != "sse":
        pytest.skip("the SSE transport's message endpoint")
    with httpx2.Client(timeout=10) as http:
        response = http.post(
            f"http://127.0.0.1:{port}/messages/?session_id=0123456789abcdef0123456789abcdef",
            json=initialize(),
        )
    assert response.status_code == 401


@pytest.mark.parametrize("mode", MODES)
async def test_the_right_token_works_and_the_principal_reaches_the_tool(
    guarded: tuple[str, int], mode: str
) -> None:
    transport, port = guarded
    if transport == "sse" and mode != "legacy":
        pytest.skip("SSE is handshake-era only")
    with anyio.fail_after(30):
        async with sdk_client(transport, port, mode, FIRST) as client:
            assert text(await client.call_tool("whoami", {})) == "static:token-1:token-1:"
        async with sdk_client(transport, port, mode, SECOND) as client:
            assert text(await client.call_tool("whoami", {})) == "static:token-2:token-2:"


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_without_a_token_cannot_connect(
    guarded: tuple[str, int], mode: str
) -> None:
    transport, port = guarded
    if transport == "sse" and mode != "legacy":
        pytest.skip("SSE is handshake-era only")
    with anyio.fail_after(30), pytest.raises(Exception):  # noqa: B017, PT011  # the SDK's own
        async with sdk_client(transport, port, mode, "wrong-token") as client:
            await client.call_tool("whoami", {})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_ferrotool_client_signs_with_an_httpx_auth(
    guarded: tuple[str, int], mode: str
) -> None:
    transport, port = guarded
    if transport == "sse":
        pytest.skip("the auth argument is streamable HTTP's")

    class BearerAuth(httpx2.Auth):
        def auth_flow(
            self, request: httpx2.Request
        ) -> Generator[httpx2.Request, httpx2.Response, None]:
            request.headers["Authorization"] = f"Bearer {FIRST}"
            yield request

    client = McpClient.streamable_http(
        "guarded", f"http://127.0.0.1:{port}/mcp", auth=BearerAuth(), mode=mode
    )
    kit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(kit, client)
        try:
            result = await kit.call_tool(ToolUseBlock("1", "mcp__guarded__whoami", "{}"))
            assert result.content == "static:token-1:token-1:"
        finally:
            await client.close()


# - the token sources -


def test_token_sources_strip_whitespace_and_refuse_nothing(tmp_path: Path) -> None:
    tokens = StaticTokens([" a-token\t", "", "  "])
    assert len(tokens) == 1
    with pytest.raises(ValueError, match="no authentication token"):
        StaticTokens(["", " \t"])
    with pytest.raises(ValueError, match="may hold only"):
        StaticTokens(["two words"])
    with pytest.raises(ValueError, match="cannot read"):
        StaticTokens.from_file(tmp_path / "missing")


async def test_static_tokens_match_exactly() -> None:
    tokens = StaticTokens([FIRST, SECOND])
    assert (await tokens.verify_token(FIRST)) is not None
    for wrong in ("", FIRST[:-1], FIRST + "x", FIRST.upper(), f" {FIRST}"):
        assert await tokens.verify_token(wrong) is None


def test_a_missing_or_empty_token_source_refuses_to_start(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text(" \n\t\n", encoding="utf-8")
    http = ("--transport", "streamable-http")
    assert "cannot read the token file" in refused_start(
        *http, "--auth-token-file", str(tmp_path / "missing")
    )
    assert "no authentication token" in refused_start(*http, "--auth-token-file", str(empty))
    assert "NOT_SET_ANYWHERE is not set" in refused_start(
        *http, "--auth-token-env", "NOT_SET_ANYWHERE"
    )


def test_an_environment_token_works() -> None:
    process, port = serve("--transport", "streamable-http", "--auth-token-env", "GUARD_TOKENS")
    try:
        assert status("streamable-http", port, {"Authorization": "Bearer env-token"}) == 200
        assert status("streamable-http", port, {"Authorization": "Bearer GUARD_TOKENS"}) == 401
    finally:
        stop(process)


# - binding, Host and Origin -


def test_a_public_bind_without_auth_refuses_to_start() -> None:
    stderr = refused_start("--transport", "streamable-http", "--host", "0.0.0.0")
    assert "--insecure-no-auth" in stderr
    stderr = refused_start("--transport", "sse", "--host", "0.0.0.0")
    assert "--insecure-no-auth" in stderr


def test_a_public_bind_serves_with_insecure_no_auth() -> None:
    process, port = serve(
        "--transport",
        "streamable-http",
        "--host",
        "0.0.0.0",
        "--insecure-no-auth",
    )
    try:
        assert status("streamable-http", port, {}) == 200
    finally:
        stop(process)


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def public(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    transport: str = request.param
    process, port = serve(
        "--transport",
        transport,
        "--host",
        "0.0.0.0",
        "--auth-token-env",
        "GUARD_TOKENS",
        "--allowed-host",
        "mcp.example.com",
        "--allowed-origin",
        "https://app.example.com",
    )
    yield transport, port
    stop(process)


AUTH = ("Authorization", "Bearer env-token")


@pytest.mark.parametrize(
    "host",
    [
        "evil.example.com",
        "evil.example.com:{port}",
        "127.0.0.1.evil.example.com:{port}",
        "localhost.evil.example.com",
        "mcp.example.com.evil.example.com",
        "evil.example.com#@127.0.0.1:{port}",
        "",
    ],
)
def test_a_foreign_host_is_refused_on_a_public_bind(public: tuple[str, int], host: str) -> None:
    transport, port = public
    assert status(transport, port, [AUTH, ("Host", host.format(port=port))]) == 421


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "LOCALHOST:{port}",
        "0.0.0.0:{port}",
        "mcp.example.com",
    ],
)
def test_the_allowed_hosts_pass(public: tuple[str, int], host: str) -> None:
    transport, port = public
    assert status(transport, port, [AUTH, ("Host", host.format(port=port))]) == 200


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example.com",
        "http://evil.example.com:{port}",
        "https://app.example.com.evil.example.com",
        "https://app.example.com:8443",
        "null",
        "http://127.0.0.1.evil.example.com:{port}",
    ],
)
def test_a_foreign_origin_is_refused(public: tuple[str, int], origin: str) -> None:
    transport, port = public
    assert status(transport, port, [AUTH, ("Origin", origin.format(port=port))]) == 403


@pytest.mark.parametrize(
    "origin", ["https://app.example.com", "http://127.0.0.1:{port}", "http://localhost:{port}"]
)
def test_the_allowed_origins_pass(public: tuple[str, int], origin: str) -> None:
    transport, port = public
    assert status(transport, port, [AUTH, ("Origin", origin.format(port=port))]) == 200


def test_host_checks_come_before_authentication(public: tuple[str, int]) -> None:
    transport, port = public
    assert status(transport, port, [("Host", "evil.example.com")]) == 421


# - OAuth resource server -


@pytest.fixture(scope="module")
def oauth() -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, str(SERVERS / "guarded.py"), str(port)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, process)
    except BaseException:
        stop(process)
        raise
    yield port
    stop(process)


def test_the_protected_resource_metadata_is_served(oauth: int) -> None:
    with httpx2.Client(timeout=10) as http:
        metadata = http.get(f"http://127.0.0.1:{oauth}/.well-known/oauth-protected-resource/mcp")
        refused = http.post(f"http://127.0.0.1:{oauth}/mcp", json=initialize())
    assert metadata.status_code == 200
    body = metadata.json()
    assert body["resource"] == f"http://127.0.0.1:{oauth}/mcp"
    assert body["authorization_servers"] == ["https://issuer.example.com"]
    assert body["scopes_supported"] == ["tools"]
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert (
        f'resource_metadata="http://127.0.0.1:{oauth}/.well-known/oauth-protected-resource/mcp"'
        in challenge
    )


def test_a_token_without_the_required_scope_is_forbidden(oauth: int) -> None:
    assert status("streamable-http", oauth, {"Authorization": "Bearer reader-token"}) == 403
    assert status("streamable-http", oauth, {"Authorization": "Bearer nobody"}) == 401


@pytest.mark.parametrize("mode", MODES)
async def test_the_verified_principal_reaches_the_tool(oauth: int, mode: str) -> None:
    with anyio.fail_after(30):
        async with sdk_client("streamable-http", oauth, mode, "alice-token") as client:
            assert text(await client.call_tool("whoami", {})) == "oauth:alice:client-a:tools"


# - slow clients, idle sessions, limits -


@pytest.mark.parametrize("trickle", [False, True])
def test_a_slow_request_head_is_cut_off(trickle: bool) -> None:
    process, port = serve("--transport", "streamable-http", "--header-timeout", "1")
    try:
        with socket.create_connection(("127.0.0.1", port), 5) as sock:
            sock.sendall(b"POST /mcp HT")
            started = time.monotonic()
            closed = False
            while time.monotonic() - started < 8:
                if trickle:
                    try:
                        sock.sendall(b"X")
                    except OSError:
                        closed = True
                        break
                sock.settimeout(0.3)
                try:
                    if sock.recv(1024) == b"":
                        closed = True
                        break
                except TimeoutError:
                    continue
                except OSError:
                    closed = True
                    break
            assert closed
            assert time.monotonic() - started < 5
    finally:
        stop(process)


def test_a_prompt_request_is_not_cut_off() -> None:
    process, port = serve("--transport", "streamable-http", "--header-timeout", "1")
    try:
        with httpx2.Client(timeout=10) as http:
            for _ in range(2):  # the same connection, each head prompt, the wait between idle
                response = http.post(
                    f"http://127.0.0.1:{port}/mcp", json=initialize(), headers={"accept": ACCEPT}
                )
                assert response.status_code == 200
                time.sleep(0.5)
    finally:
        stop(process)


def test_idle_sessions_expire() -> None:
    process, port = serve(
        "--transport", "streamable-http", "--auth-token-env", "GUARD_TOKENS",
        "--session-idle-timeout", "1",
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"accept": ACCEPT, "authorization": "Bearer env-token"}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    try:
        with httpx2.Client(timeout=10, headers=headers) as http:
            opened = http.post(url, json=initialize())
            sid = opened.headers["mcp-session-id"]
            session = {"mcp-session-id": sid, "mcp-protocol-version": LATEST_HANDSHAKE_VERSION}
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert http.post(url, json=done, headers=session).status_code == 202
            assert http.post(url, json=listing, headers=session).status_code == 200
            time.sleep(3)
            assert http.post(url, json=listing, headers=session).status_code == 404
    finally:
        stop(process)


async def test_a_client_has_a_limit_of_calls_in_flight(guarded: tuple[str, int]) -> None:
    transport, port = guarded
    if transport == "sse":
        pytest.skip("an SSE post answers at once: its calls are the session's")
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {
        "accept": ACCEPT,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "wait",
    }
    statuses: list[tuple[str, int]] = []

    async def call(token: str, number: int) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {
                "name": "wait",
                "arguments": {"seconds": 1.5},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(
                url, json=body, headers={**headers, "authorization": f"Bearer {token}"}
            )
        statuses.append((token, response.status_code))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            for number in range(3):
                group.start_soon(call, FIRST, number)
            await anyio.sleep(0.3)
            group.start_soon(call, SECOND, 9)
    mine = sorted(code for token, code in statuses if token == FIRST)
    assert mine == [200, 200, 429]
    assert (SECOND, 200) in statuses


def test_a_session_answers_only_the_principal_that_opened_it(token_file: Path) -> None:
    process, port = serve("--transport", "streamable-http", "--auth-token-file", str(token_file))
    url = f"http://127.0.0.1:{port}/mcp"
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    try:
        with httpx2.Client(timeout=10, headers={"accept": ACCEPT}) as http:
            opened = http.post(url, json=initialize(), headers={"authorization": f"Bearer {FIRST}"})
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": LATEST_HANDSHAKE_VERSION,
            }
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            owner = {**session, "authorization": f"Bearer {FIRST}"}
            assert http.post(url, json=done, headers=owner).status_code == 202
            other = {**session, "authorization": f"Bearer {SECOND}"}
            assert http.post(url, json=listing, headers=other).status_code == 404
            assert http.post(url, json=listing, headers=owner).status_code == 200
    finally:
        stop(process)


async def test_the_in_memory_tool_state_of_an_idle_session_is_forgotten() -> None:
    now = [0.0]
    store = ExpiringSessionStore(10, clock=lambda: now[0])
    kept, idle = SessionKey("", "kept"), SessionKey("", "idle")
    assert await store.compare_and_set(kept, 0, EMPTY_STATE) is not None
    assert await store.compare_and_set(idle, 0, EMPTY_STATE) is not None
    for _ in range(3):  # used every 6 seconds: kept
        now[0] += 6
        assert (await store.load(kept)).revision == 1
    assert (await store.load(idle)) is EMPTY_STATE  # 18 seconds idle: forgotten
    assert len(store) == 1
    now[0] += 11
    await store.load(SessionKey("", "other"))  # a sweep forgets without being asked for it
    assert len(store) == 0
