"""The Redis session store under a backend's load, contention on one session, and faults.

* 2,000 concurrent `update_session` calls in one process complete (the store's blocking pool
  makes them wait for a connection instead of failing; redis-py's default pool refused the
  101st);
* 60 concurrent ``reset_tools`` calls on one session all succeed (lost compare-and-sets retry
  with jittered backoff), and when the attempts run out the call ends with a clear error result;
* the server killed and restarted in the middle of updates: every update that was acknowledged
  is in the final state, and operations meanwhile fail with a clear error, never hang.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import redis.exceptions

from ferrotool import (
    RuntimeContext,
    SessionKey,
    Toolkit,
    ToolkitConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
    update_session,
)
from ferrotool.redis import RedisSessionStore

pytestmark = pytest.mark.asyncio_only("the Redis store is built on redis.asyncio")


async def test_two_thousand_concurrent_updates_in_one_process(
    redis_url: str, redis_prefix: str
) -> None:
    async with RedisSessionStore.from_url(redis_url, prefix=redis_prefix) as store:

        async def one(index: int) -> None:
            key = SessionKey("user", f"s{index % 400}")
            await update_session(store, key, lambda s: s.with_skills([f"k{index}"]))

        async with anyio.create_task_group() as group:
            for index in range(2000):
                group.start_soon(one, index)
        total = 0
        for session in range(400):
            total += len((await store.load(SessionKey("user", f"s{session}"))).skills)
        assert total == 2000


def _grouped_toolkit(attempts: int) -> Toolkit:
    @tool
    async def lookup(q: str) -> str:
        """Look something up."""
        return q

    kit = Toolkit(ToolkitConfig(meta_tool=True, session_attempts=attempts))
    for index in range(4):
        kit.create_group(f"g{index}", f"group {index}")
    kit.register(lookup, group="g0")
    return kit


async def _contend(store: RedisSessionStore, kit: Toolkit, calls: int) -> list[str]:
    registry = kit.snapshot()
    context = RuntimeContext(user_id="ann", session_id="busy")
    outcomes: list[str] = []

    async def one(index: int) -> None:
        view = await registry.open_view(context, store)
        arguments = f'{{"g{index % 4}": true}}'
        result = await view.call_tool(ToolUseBlock(f"c{index}", "reset_tools", arguments))
        outcomes.append(
            result.state.value if result.state is ToolResultState.SUCCESS else result.content
        )

    async with anyio.create_task_group() as group:
        for index in range(calls):
            group.start_soon(one, index)
    return outcomes


async def test_sixty_concurrent_reset_tools_on_one_session(
    redis_url: str, redis_prefix: str
) -> None:
    async with RedisSessionStore.from_url(redis_url, prefix=redis_prefix) as store:
        outcomes = await _contend(store, _grouped_toolkit(attempts=16), 60)
        assert outcomes == ["success"] * 60
        state = await store.load(SessionKey("ann", "busy"))
        assert state.revision == 60


async def test_attempts_running_out_give_a_clear_error_result(
    redis_url: str, redis_prefix: str
) -> None:
    async with RedisSessionStore.from_url(redis_url, prefix=redis_prefix) as store:
        outcomes = await _contend(store, _grouped_toolkit(attempts=1), 60)
        refused = [text for text in outcomes if text != "success"]
        assert refused, "with one attempt each, some of 60 contending updates must lose"
        assert all("call reset_tools again" in text for text in refused)
        state = await store.load(SessionKey("ann", "busy"))
        assert state.revision == 60 - len(refused)


# --- faults: a server of the test's own, killed and restarted --------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Server:
    """A redis-server with an append-only file synced on every write (no acknowledged write
    is lost when it is killed)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def own_server() -> Iterator[_Server]:
    if shutil.which("redis-server") is None:
        if os.environ.get("FERROTOOL_REQUIRE_REDIS") == "1":
            pytest.fail("FERROTOOL_REQUIRE_REDIS=1 but redis-server is not installed")
        pytest.skip("redis-server is not installed")
    with tempfile.TemporaryDirectory() as directory:
        server = _Server(Path(directory))
        server.start()
        try:
            yield server
        finally:
            if server.process is not None and server.process.poll() is None:
                server.kill()


async def test_a_killed_and_restarted_server_loses_no_acknowledged_write(
    own_server: _Server,
) -> None:
    url = f"redis://127.0.0.1:{own_server.port}/0"
    key = SessionKey("ann", "faulty")
    acknowledged: list[str] = []
    failures: list[BaseException] = []
    store = RedisSessionStore.from_url(
        url, socket_timeout=2, socket_connect_timeout=2, pool_timeout=5
    )
    try:

        async def writer(index: int) -> None:
            try:
                await update_session(store, key, lambda s: s.with_skills([f"w{index}"]))
            except (
                redis.exceptions.ConnectionError,
                redis.exceptions.TimeoutError,
                OSError,
            ) as error:
                failures.append(error)
            else:
                acknowledged.append(f"w{index}")

        for index in range(40):
            await writer(index)
        own_server.kill()
        started = time.monotonic()
        for index in range(40, 50):
            await writer(index)  # the server is down: each fails, quickly and clearly
        assert time.monotonic() - started < 30
        assert len(failures) == 10
        await anyio.to_thread.run_sync(own_server.start)
        for index in range(50, 80):
            await writer(index)
        state = await store.load(key)
    finally:
        await store.aclose()
    assert set(acknowledged) <= state.skills
    assert {f"w{index}" for index in range(40)} <= state.skills
    assert len(acknowledged) >= 70


async def test_restart_during_concurrent_writes_keeps_every_acknowledged_one(
    own_server: _Server,
) -> None:
    url = f"redis://127.0.0.1:{own_server.port}/0"
    key = SessionKey("ann", "racy")
    acknowledged: set[str] = set()
    store = RedisSessionStore.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:

        async def writer(index: int) -> None:
            deadline = time.monotonic() + 30  # a loaded machine restarts the server slowly
            while time.monotonic() < deadline:
                try:
                    await update_session(store, key, lambda s: s.with_skills([f"w{index}"]))
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
                    await anyio.sleep(0.05)
                    continue
                acknowledged.add(f"w{index}")
                return

        async with anyio.create_task_group() as group:
            for index in range(100):
                group.start_soon(writer, index)
            await anyio.sleep(0.05)
            own_server.kill()
            await anyio.sleep(0.3)
            await anyio.to_thread.run_sync(own_server.start)
        state = await store.load(key)
    finally:
        await store.aclose()
    assert acknowledged == {f"w{index}" for index in range(100)}
    assert acknowledged <= state.skills
