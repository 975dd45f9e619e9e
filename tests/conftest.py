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


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (through anyio's pytest plugin)."""
    return "asyncio"


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Every ``async def`` test runs under anyio without a marker of its own.

    The mark goes on the function before pytest collects it, so anyio's backend parameter
    combines with the test's own parameters.
    """
    if inspect.iscoroutinefunction(obj) and collector.funcnamefilter(name):  # type: ignore[attr-defined]
        pytest.mark.anyio(obj)
