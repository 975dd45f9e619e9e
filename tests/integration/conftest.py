"""Fixtures for the tests that need a real Redis server.

``FERROTOOL_REDIS_URL`` names the server (default: database 15 on the local default port). When
no server answers, the tests that need one are skipped, so that a developer without Redis can
run the rest; with ``FERROTOOL_REQUIRE_REDIS=1`` (CI sets it) they fail instead.

Each test gets a key prefix of its own (`redis_prefix`) and its keys are deleted after it, so
tests never see each other's sessions and a shared database is left as it was found.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import NoReturn

import pytest

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("FERROTOOL_REQUIRE_REDIS") == "1":
        pytest.fail(f"FERROTOOL_REQUIRE_REDIS=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The URL of a Redis server that answers, or skip (fail under FERROTOOL_REQUIRE_REDIS=1)."""
    url = os.environ.get("FERROTOOL_REDIS_URL") or DEFAULT_REDIS_URL
    try:
        import redis
    except ImportError:
        _unavailable("the redis package is not installed (pip install 'redis>=5')")
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    problem = None
    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError, OSError) as error:
        problem = f"no Redis server answers at {url}: {error}"
    finally:
        client.close()
    if problem is not None:
        _unavailable(problem)
    return url


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix for this test alone; its keys are deleted afterwards."""
    import redis

    prefix = f"ferrotool-test:{uuid.uuid4().hex}:"
    yield prefix
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
