"""Fixtures of the MCP tests: the SDK's own server over HTTP, on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_support import SDK, free_port, start, stop


@pytest.fixture
def sdk_http() -> Iterator[int]:
    """The SDK's own server over streamable HTTP; yields its port."""
    port = free_port()
    process = start([SDK, "streamable-http", str(port)], port)
    yield port
    stop(process)


@pytest.fixture
def sdk_sse() -> Iterator[int]:
    """The SDK's own server over SSE; yields its port."""
    port = free_port()
    process = start([SDK, "sse", str(port)], port)
    yield port
    stop(process)
