"""Two OS processes update one Redis-backed session at once, and no update is lost."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

from ferrotool._session.state import SessionKey

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.asyncio_only("RedisSessionStore is built on redis.asyncio: asyncio only"),
]

UPDATES = 200
KEY = SessionKey("user:two", "processes")

# One writer: waits at a barrier (a Redis counter both writers bump) so that the two really
# overlap, then sets groups <letter>0 .. <letter>199 one update_session at a time, counting
# the compare-and-sets it lost. Prints {"writes": n, "conflicts": n}.
WORKER = """
import json, sys, time

import anyio
import redis

from ferrotool.redis import RedisSessionStore
from ferrotool._session.state import SessionKey, update_session

url, prefix, letter, updates, delay = sys.argv[1:6]
updates, delay = int(updates), float(delay)
key = SessionKey("user:two", "processes")


class Counting:
    def __init__(self, inner):
        self.inner, self.writes, self.conflicts = inner, 0, 0

    async def load(self, key):
        return await self.inner.load(key)

    async def compare_and_set(self, key, expected, state):
        stored = await self.inner.compare_and_set(key, expected, state)
        if stored is None:
            self.conflicts += 1
        else:
            self.writes += 1
        return stored


def slowly(flag):
    def change(state):
        if delay:
            time.sleep(delay)
        return state.with_groups({flag: True})
    return change


def barrier():
    client = redis.Redis.from_url(url)
    client.incr(prefix + "barrier")
    deadline = time.monotonic() + 60
    while int(client.get(prefix + "barrier")) < 2:
        if time.monotonic() > deadline:
            sys.exit("the other writer never came")
        time.sleep(0.0005)
    client.close()


async def main():
    async with RedisSessionStore.from_url(url, prefix=prefix) as store:
        counting = Counting(store)
        await store.load(key)  # connect before the barrier
        barrier()
        for i in range(updates):
            await update_session(counting, key, slowly(f"{letter}{i}"), attempts=1000)
    print(json.dumps({"writes": counting.writes, "conflicts": counting.conflicts}))


anyio.run(main)
"""


async def run_writers(url: str, prefix: str, delay: float) -> list[dict[str, int]]:
    results: dict[str, subprocess.CompletedProcess[bytes]] = {}

    async def writer(letter: str) -> None:
        argv = [sys.executable, "-c", WORKER, url, prefix, letter, str(UPDATES), str(delay)]
        results[letter] = await anyio.run_process(argv, check=False)

    with anyio.fail_after(240):
        async with anyio.create_task_group() as group:
            for letter in "ab":
                group.start_soon(writer, letter)
    reports = []
    for letter, done in sorted(results.items()):
        assert done.returncode == 0, f"writer {letter} failed:\n{done.stderr.decode()}"
        reports.append(json.loads(done.stdout))
    return reports


async def test_two_processes_lose_no_update(redis_url: str, redis_prefix: str) -> None:
    from ferrotool.redis import RedisSessionStore

    # Without a delay the two writers usually collide on their own; if they did not, run again
    # with a change that takes a millisecond between load and compare-and-set.
    for delay in (0.0, 0.001):
        prefix = f"{redis_prefix}{delay}:"
        reports = await run_writers(redis_url, prefix, delay)
        async with RedisSessionStore.from_url(redis_url, prefix=prefix) as store:
            final = await store.load(KEY)

        expected = {f"{letter}{i}": True for letter in "ab" for i in range(UPDATES)}
        assert dict(final.groups) == expected
        assert [r["writes"] for r in reports] == [UPDATES, UPDATES]
        assert final.revision == sum(r["writes"] for r in reports) == 2 * UPDATES
        conflicts = sum(r["conflicts"] for r in reports)
        print(f"two writers, delay {delay}s: {conflicts} conflicts ({reports})")
        if conflicts > 0:
            return
    pytest.fail("the two writers never collided: the test tested no contention")
