"""uvicorn's HTTP/1.1 protocol with a header timeout: slow clients are cut off.

uvicorn closes a keep-alive connection idle between requests (``timeout_keep_alive``), but
waits forever for the head of a request: a client that opens a connection and sends half a
request line, or trickles its headers a byte at a time, holds its connection for as long as it
likes. `HeaderTimeoutProtocol` closes a connection whose request head (request line and
headers) is not complete within ``FERROTOOL_SERVE_HEADER_TIMEOUT`` seconds (default
`DEFAULT_HEADER_TIMEOUT`) of the connection opening or of the previous response ending.

It is named by class to uvicorn (``http=HeaderTimeoutProtocol``), which builds one per
connection in every worker process: the timeout is read from the environment.
"""

from __future__ import annotations

import asyncio
import os
from typing import Final

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle
from uvicorn.server import ServerState

ENV_HEADER_TIMEOUT: Final = "FERROTOOL_SERVE_HEADER_TIMEOUT"
DEFAULT_HEADER_TIMEOUT: Final = 10.0
"""Seconds a client has to send a request's head."""


def header_timeout() -> float:
    """The header timeout the environment sets, else the default."""
    try:
        value = float(os.environ.get(ENV_HEADER_TIMEOUT, DEFAULT_HEADER_TIMEOUT))
    except ValueError:
        return DEFAULT_HEADER_TIMEOUT
    return value if value > 0 else DEFAULT_HEADER_TIMEOUT


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head is late (see the module)."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, object],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._header_timeout = header_timeout()
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self._header_timeout, self._late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _late(self) -> None:
        """Close the connection if no request head has come in whole since the timer started."""
        self._header_timer = None
        if self.transport.is_closing():
            return
        cycle: RequestResponseCycle | None = self.cycle  # None before the first request
        waiting_head = self.conn.their_state is h11.IDLE and (
            cycle is None or cycle.response_complete
        )
        if waiting_head:
            self.transport.close()


__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "ENV_HEADER_TIMEOUT",
    "HeaderTimeoutProtocol",
    "header_timeout",
]
