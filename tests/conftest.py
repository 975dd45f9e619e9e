"""Shared test configuration: hypothesis profiles, async tests.

Tests that need a real Redis server take the `redis_url` fixture: ``FERROTOOL_REDIS_URL`` names
the server (default: database 15 on the local default port). When no server answers, they are
skipped, so that a developer without Redis can run the rest; with ``FERROTOOL_REQUIRE_REDIS=1``
(CI sets it) they fail instead. Each such test gets a key prefix of its own (`redis_prefix`)
whose keys are deleted after it.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=<name>``):

* ``fast`` (default): few examples, for the edit-run loop.
* ``ci``: more examples, no deadline, derandomized so that a CI run is reproducible.
"""

from __future__ import annotations

import inspect
import os
import uuid
from collections.abc import Iterator
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "fast",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on asyncio and on trio (through anyio's pytest plugin).

    A test that needs asyncio itself (``asyncio.create_task``...) says so with
    ``@pytest.mark.asyncio_only(reason)``.
    """
    backend: str = request.param
    marker = request.node.get_closest_marker("asyncio_only")
    if backend != "asyncio" and marker is not None:
        pytest.skip(f"asyncio only: {marker.args[0] if marker.args else 'no reason given'}")
    return backend


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "asyncio_only(reason): an async test that runs on asyncio only, and why"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Every ``async def`` test runs under anyio without a marker of its own.

    The mark goes on the function before pytest collects it, so anyio's backend parameter
    combines with the test's own parameters.
    """
    if inspect.iscoroutinefunction(obj) and collector.funcnamefilter(name):  # type: ignore[attr-defined]
        pytest.mark.anyio(obj)


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
