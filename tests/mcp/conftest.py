"""Fixtures of the MCP tests: the SDK's own server over HTTP, on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_support import FASTMCP, SDK, free_port, start, stop

# On trio, the SDK's streamable HTTP and SSE clients leave httpx2's and httpcore2's response
# streams to the garbage collector, which trio reports as a ResourceWarning from its async
# generator finalizer. Those generators are the SDK's, not ferrotool's; nothing else is ignored
# (httpcore2 2.17 leaves its connection's byte stream too).
_SDK_STREAMS = (
    r"ignore:Exception ignored in. <async_generator object "
    r"(Response\.aiter_\w+|PoolByteStream\.__aiter__|EventSource\.__aiter__"
    r"|HTTP11ConnectionByteStream\.__aiter__) at"
    r":pytest.PytestUnraisableExceptionWarning"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.filterwarnings(_SDK_STREAMS))


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


@pytest.fixture(scope="module")
def fastmcp_http() -> Iterator[int]:
    """The FastMCP server (`servers.fastmcp_server`) over streamable HTTP; yields its port."""
    port = free_port()
    process = start([FASTMCP, str(port)], port)
    yield port
    stop(process)
