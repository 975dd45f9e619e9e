"""The fast path of ``ferrotool serve``: a plain 2026-07-28 ``tools/call`` over HTTP.

A 2026-07-28 request is self-contained, and most are the same: one ``tools/call`` whose answer
is the tool's result. For those, this ASGI layer in front of the SDK's app reads the body once
(orjson), checks the envelope with the SDK's own ladder (``classify_inbound_request``: the
protocol version in the header and in ``_meta``, ``Mcp-Method`` and ``Mcp-Name``), runs the call
through ferrotool's pipeline and writes the JSON answer, without the SDK's per-request
dispatch, task groups and result models. Everything else goes to the SDK unchanged, the body
replayed: other methods, the handshake era, a call that asks for progress or answers a
question, one the ladder rejects (the SDK then answers the error), and a call that waits for
approval or for the client (the SDK's way asks the client).

A 2026-07-28 client cancels a call over HTTP by closing the request's connection (that era has
no client-to-server notifications over HTTP; the SDK's client aborts the POST): while a call
runs, the layer watches ``receive()`` for ``http.disconnect`` and cancels the call when it
comes, answering nothing (a call is watched once it has run a few milliseconds: the many short
ones cost no watching task). The cancellation goes through an anyio cancel scope, as on the
SDK's paths: a section the tool shields (``anyio.CancelScope(shield=True)``) runs to its end
first. The worker that holds the connection sees it, so nothing has to travel between workers.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, final

import anyio
import orjson
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ferrotool.mcp._auth import principal_of
from ferrotool.mcp.server import McpToolServer

_VERSIONS: Final = frozenset(version.encode() for version in MODERN_PROTOCOL_VERSIONS)
_JSON: Final = [(b"content-type", b"application/json")]
_WATCH_AFTER: Final = 0.02
"""Seconds a call runs before its connection is watched for a disconnect (see `_watched`)."""


class FastCalls:
    """ASGI: plain 2026-07-28 calls answered here, the rest by ``app`` (see the module).

    Args:
        app: The SDK's streamable HTTP app.
        server: The tools.
        security: The DNS-rebinding protection the SDK's app applies too.
        path: The MCP endpoint.
    """

    def __init__(
        self,
        app: ASGIApp,
        server: McpToolServer,
        security: TransportSecuritySettings | None,
        path: str = "/mcp",
    ) -> None:
        self._app = app
        self._server = server
        self._security = TransportSecurityMiddleware(security) if security is not None else None
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        version = method = None
        for key, value in scope["headers"]:
            if key == b"mcp-protocol-version":
                version = value
            elif key == b"mcp-method":
                method = value
        if method != b"tools/call" or version not in _VERSIONS:
            await self._app(scope, receive, send)
            return
        request = Request(scope, receive)
        body = await request.body()
        answer, gone = await self._watched(request, body, receive)
        if gone:  # the client went away: the call was cancelled, no one reads an answer
            return
        if answer is None:
            await self._app(scope, _replay(body, receive), send)
            return
        await send({"type": "http.response.start", "status": 200, "headers": _JSON})
        await send({"type": "http.response.body", "body": answer})

    async def _watched(
        self, request: Request, body: bytes, receive: Receive
    ) -> tuple[bytes | None, bool]:
        """`_answer`, cancelled if the client disconnects: the answer, and whether it did.

        The call runs in an anyio cancel scope that the disconnect cancels, so that a section
        the tool shields runs to its end before the cancellation lands, and a cancellation from
        outside (the server shutting down) goes on. On asyncio (uvicorn) a call is watched only
        once it has run `_WATCH_AFTER` seconds: a shorter one costs a timer, no task. Elsewhere
        a task watches from the start.
        """
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not asyncio
            task = None
        if task is None:
            gone: list[bool] = []
            answer = None
            async with anyio.create_task_group() as group:
                group.start_soon(_hang_up, receive, group.cancel_scope, gone)
                answer = await self._answer(request, body)
                group.cancel_scope.cancel()
            return (None, True) if gone else (answer, False)
        scope = anyio.CancelScope()
        watch = _Watch(receive, scope)
        timer = task.get_loop().call_later(_WATCH_AFTER, watch.start)
        answer = None
        try:
            with scope:  # swallows only its own cancellation (anyio keeps the uncancel count)
                answer = await self._answer(request, body)
        finally:
            timer.cancel()
            watch.stop()
        return (None, True) if watch.cancelled else (answer, False)

    async def _answer(self, request: Request, body: bytes) -> bytes | None:
        """The response body, or ``None`` to let the SDK answer."""
        if self._security is not None:
            refused = await self._security.validate_request(request, is_post=True)
            if refused is not None:
                return None
        accept = request.headers.get("accept", "")
        if "application/json" not in accept and "*/*" not in accept:
            return None
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(message, dict) or "id" not in message:
            return None
        params = message.get("params")
        if not isinstance(params, dict):
            return None
        meta = params.get("_meta")
        name, arguments = params.get("name"), params.get("arguments")
        if (
            not isinstance(name, str)
            or not (arguments is None or isinstance(arguments, dict))
            or "requestState" in params
            or "inputResponses" in params
            or (isinstance(meta, dict) and "progressToken" in meta)
        ):
            return None
        verdict: Any = classify_inbound_request(message, headers=dict(request.headers))
        if isinstance(verdict, InboundLadderRejection):
            return None
        principal = principal_of(request.scope)
        result = await self._server.answer(message["id"], name, arguments, meta, principal)
        if result is None:
            return None
        return orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})


@final
class _Watch:
    """Cancels a call's cancel scope when its client disconnects, while the call runs."""

    __slots__ = ("_receive", "_scope", "_watcher", "cancelled", "running")

    def __init__(self, receive: Receive, scope: anyio.CancelScope) -> None:
        self._receive = receive
        self._scope = scope
        self._watcher: asyncio.Task[None] | None = None
        self.running = True
        self.cancelled = False

    def start(self) -> None:
        """Start watching (a timer calls this once the call has run `_WATCH_AFTER` seconds)."""
        if self.running:
            self._watcher = asyncio.get_running_loop().create_task(self._wait())

    async def _wait(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        if self.running:  # the call still runs in the scope: the cancellation lands there
            self.cancelled = True
            self._scope.cancel()

    def stop(self) -> None:
        """Stop watching: the call has ended."""
        self.running = False
        if self._watcher is not None:
            self._watcher.cancel()


async def _hang_up(receive: Receive, scope: anyio.CancelScope, gone: list[bool]) -> None:
    """Cancel ``scope`` when the client disconnects (the request's body is read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.append(True)
    scope.cancel()


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read, then what the connection gives."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


__all__ = ["FastCalls"]
