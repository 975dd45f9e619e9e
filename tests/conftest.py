"""Shared test configuration: hypothesis profiles, async tests.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=<name>``):

* ``fast`` (default): few examples, for the edit-run loop.
* ``ci``: more examples, no deadline, derandomized so that a CI run is reproducible.
"""

from __future__ import annotations

import inspect
import os

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
