"""The one check of ferrotool's optional dependencies (its extras).

A module that needs an extra imports its dependencies under `requires_extra`; when one of them
is missing, the import raises `MissingExtra`, whose message names the command that installs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Final

from ferrotool.errors import MissingExtra

EXTRAS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "mcp": ("mcp", "mcp_types", "httpx2", "pydantic", "starlette", "sse_starlette", "uvicorn"),
        "redis": ("redis",),
        "dbos": ("dbos",),
        "otel": ("opentelemetry",),
        "testing": ("hypothesis",),
        "skills": ("yaml",),
        "pydantic-ai": ("pydantic_ai", "pydantic"),
        "openai-agents": ("agents",),
        "langchain": ("langchain_core", "pydantic"),
    }
)
"""Each extra, and the top-level modules it installs (those whose absence it explains)."""


@contextlib.contextmanager
def requires_extra(feature: str, extra: str) -> Iterator[None]:
    """Imports in this block that fail for a module of ``extra`` raise `MissingExtra`.

    Used around a module's imports of its optional dependencies::

        with requires_extra("ferrotool.redis", "redis"):
            import redis.asyncio as aioredis

    An import error of another module (a bug elsewhere) passes through unchanged; a
    `MissingExtra` of a module imported here is said again for ``feature``.

    Args:
        feature: What needs the extra (``ferrotool.redis``, ``ferrotool serve``).
        extra: The extra, as ``pip install 'ferrotool[EXTRA]'`` spells it (a key of `EXTRAS`).

    Raises:
        MissingExtra: One of ``packages`` cannot be imported.
    """
    packages = EXTRAS[extra]
    try:
        yield
    except MissingExtra as error:
        if error.feature == feature:
            raise
        raise MissingExtra(feature, error.extra, error.name, error.reason) from error
    except ImportError as error:
        missing = error.name
        if missing is not None and missing.partition(".")[0] not in packages:
            raise
        raise MissingExtra(feature, extra, missing, str(error)) from error


__all__ = ["EXTRAS", "requires_extra"]
