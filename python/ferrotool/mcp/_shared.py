"""Streamable HTTP for many worker processes: every session's state in Redis.

The SDK's streamable HTTP transport keeps a handshake-era session (its ``Mcp-Session-Id``, the
negotiated version, the client's capabilities) in the memory of the process that answered the
``initialize``; a request of that session reaching another process is answered 404. This app
keeps that record in Redis instead, beside the session's tool state (the `SessionStore`), and
serves each request on its own, through the SDK's single-exchange kernel (``serve_one``), in
whichever process it reaches:

* ``initialize`` mints the session id and stores the negotiated record (with a time to live
  renewed by every request); ``DELETE`` forgets it; ``GET`` (a standalone stream) is 405.
* A request answers with JSON, or with an SSE stream when the tool sends progress or asks the
  client something (``elicitation/create``) first.
* The client's answer to such a question, and a ``notifications/cancelled``, may reach any
  process: they travel over one Redis pub/sub channel to the process that waits for them. A
  ``DELETE`` ends the session's calls still running, in every process, the same way.

A 2026-07-28 request has no session to keep: it goes to the SDK's stateless entry as is.
"""

from __future__ import annotations

import contextlib
import math
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import orjson
import redis.asyncio as aioredis
from anyio.streams.memory import MemoryObjectSendStream
from mcp import MCPError
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.dispatcher import CallOptions
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, RequestId
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ferrotool.mcp.server import McpToolServer

DEFAULT_SESSION_TTL: Final = 3600.0
"""Seconds a handshake-era session lives after its last request."""
_QUESTION_TIMEOUT: Final = 600.0
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_VERSION_HEADER: Final = b"mcp-protocol-version"


def _sse(message: Mapping[str, object]) -> bytes:
    return b"event: message\r\ndata: " + orjson.dumps(message) + b"\r\n\r\n"


def _json_error(request_id: object, code: int, message: str, status: int) -> Response:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


class _Bus:
    """Answers and cancellations for this process's waiting requests, from any process."""

    def __init__(self, client: aioredis.Redis, channel: str) -> None:
        self._client = client
        self._channel = channel
        self._waiting: dict[str, MemoryObjectSendStream[dict[str, Any]]] = {}
        self._cancels: dict[str, anyio.CancelScope] = {}

    async def run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        pubsub = self._client.pubsub()
        await pubsub.subscribe(self._channel)
        task_status.started()
        try:
            async for message in pubsub.listen():
                if message.get("type") == "message":
                    self._deliver(orjson.loads(message["data"]))
        finally:
            with anyio.CancelScope(shield=True):
                await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # older redis-py lacks it

    def _deliver(self, item: dict[str, Any]) -> bool:
        key = str(item.get("key"))
        if item.get("kind") == "end":  # a session's end: each of its calls, in every process
            prefix = f"{key}:"
            for running, call in self._cancels.items():
                if running.startswith(prefix):
                    call.cancel()
            return False
        if item.get("kind") == "cancel":
            scope = self._cancels.get(key)
            if scope is not None:
                scope.cancel()
            return scope is not None
        waiter = self._waiting.pop(key, None)
        if waiter is not None:
            waiter.send_nowait(item.get("message") or {})
        return waiter is not None

    async def publish(self, kind: str, key: str, message: object = None) -> None:
        item = {"kind": kind, "key": key, "message": message}
        if not self._deliver(item):
            await self._client.publish(self._channel, orjson.dumps(item))

    @contextlib.contextmanager
    def expect(self, key: str) -> Any:
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](1)
        self._waiting[key] = send
        try:
            yield receive
        finally:
            self._waiting.pop(key, None)
            send.close()
            receive.close()

    @contextlib.contextmanager
    def cancellable(self, key: str, scope: anyio.CancelScope) -> Any:
        self._cancels[key] = scope
        try:
            yield
        finally:
            self._cancels.pop(key, None)


@dataclass(eq=False)
class _Exchange:
    """One request's dispatch context: its SSE stream, and questions answered over the bus."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: MessageMetadata
    session: str
    bus: _Bus
    sink: MemoryObjectSendStream[bytes]
    progress_token: object = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = True

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        question = f"{self.session}:q:{uuid.uuid4().hex}"
        timeout = (opts or {}).get("timeout") or _QUESTION_TIMEOUT
        message: dict[str, object] = {"jsonrpc": "2.0", "id": question, "method": method}
        if params is not None:
            message["params"] = dict(params)
        with self.bus.expect(question) as answers:
            await self.sink.send(_sse(message))
            with anyio.fail_after(timeout):
                answer = await answers.receive()
        error = answer.get("error")
        if isinstance(error, dict):
            raise MCPError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")))
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self.sink.send(_sse(message))

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)


class SharedHttpApp:
    """The ASGI app at ``/mcp`` (see the module's docstring).

    Args:
        server: What to serve; its store holds the tool state.
        redis_url: The Redis server that holds the sessions and carries the answers.
        security: DNS-rebinding protection settings.
        prefix: What the session records' keys and the channel's name start with.
        ttl: Seconds a session lives after its last request.
    """

    def __init__(
        self,
        server: McpToolServer,
        redis_url: str,
        *,
        security: TransportSecuritySettings | None = None,
        prefix: str = "ferrotool:mcp-http:",
        ttl: float = DEFAULT_SESSION_TTL,
    ) -> None:
        self.server = server
        self._client = aioredis.Redis.from_url(redis_url)
        self._prefix = prefix
        self._ttl = max(1, math.ceil(ttl))
        self._security = TransportSecurityMiddleware(security)
        self._bus = _Bus(self._client, f"{prefix}bus")
        self._modern = StreamableHTTPSessionManager(
            server.server, stateless=True, security_settings=security
        )
        self._lifespan: Any = None

    def starlette(self) -> Starlette:
        """The app, with the lifespan that starts the bus and the SDK's manager."""

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            lowlevel = self.server.server
            async with (
                lowlevel.lifespan(lowlevel) as state,
                self._modern.run(),
                anyio.create_task_group() as group,
            ):
                self._lifespan = state
                await group.start(self._bus.run)
                yield
                group.cancel_scope.cancel()
            await self._client.aclose()

        return Starlette(routes=[Route("/mcp", endpoint=_Endpoint(self))], lifespan=lifespan)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = next((v.decode() for k, v in scope["headers"] if k == _VERSION_HEADER), None)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._modern.handle_request(scope, receive, send)
            return
        request = Request(scope, receive)
        refused = await self._security.validate_request(request, is_post=request.method == "POST")
        if refused is not None:
            await refused(scope, receive, send)
            return
        sid = request.headers.get(MCP_SESSION_ID_HEADER)
        if request.method == "DELETE":
            deleted = sid is not None and await self._client.delete(self._key(sid)) > 0
            if deleted:
                await self._bus.publish("end", str(sid))
            await Response(status_code=200 if deleted else 404)(scope, receive, send)
            return
        if request.method != "POST":
            await Response(status_code=405, headers={"Allow": "POST, DELETE"})(scope, receive, send)
            return
        try:
            message = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            await _json_error(None, PARSE_ERROR, "Parse error", 400)(scope, receive, send)
            return
        if not isinstance(message, dict):
            await _json_error(None, INVALID_REQUEST, "Invalid request", 400)(scope, receive, send)
            return
        await self._post(request, sid, message, scope, receive, send)

    def _key(self, sid: str) -> str:
        return f"{self._prefix}session:{sid}"

    async def _post(
        self,
        request: Request,
        sid: str | None,
        message: dict[str, Any],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        method = message.get("method")
        request_id = message.get("id")
        if method is None:  # the client answers one of our questions
            if sid is not None and request_id is not None:
                await self._bus.publish("answer", str(request_id), message)
            await Response(status_code=202)(scope, receive, send)
            return
        if request_id is None:  # a notification
            params = message.get("params") or {}
            if sid is not None and method == "notifications/cancelled":
                await self._bus.publish("cancel", f"{sid}:{params.get('requestId')}")
            await Response(status_code=202)(scope, receive, send)
            return
        params = message.get("params")
        if method == "initialize":
            await self._initialize(request, request_id, params, scope, receive, send)
            return
        if sid is None:
            await _json_error(request_id, INVALID_REQUEST, "Missing session ID", 400)(
                scope, receive, send
            )
            return
        record = await self._client.getex(self._key(sid), ex=self._ttl)
        if record is None:
            await _json_error(request_id, INVALID_REQUEST, "Session not found", 404)(
                scope, receive, send
            )
            return
        saved = orjson.loads(record)
        connection = Connection.from_envelope(
            saved["version"], saved["info"], saved["capabilities"]
        )
        connection.session_id = sid
        await self._serve(
            request, sid, connection, request_id, method, params, scope, receive, send
        )

    async def _initialize(
        self,
        request: Request,
        request_id: object,
        params: Any,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        connection = Connection.from_envelope(LATEST_HANDSHAKE_VERSION, None, None)
        sid = uuid.uuid4().hex
        dctx = self._exchange(request, sid, request_id, None)
        try:
            result = await serve_one(
                self.server.server,
                dctx,
                "initialize",
                params,
                connection=connection,
                lifespan_state=self._lifespan,
            )
        except MCPError as exc:
            await _json_error(request_id, exc.code, exc.message, 400)(scope, receive, send)
            return
        client = connection.client_params
        record = {
            "version": connection.protocol_version,
            "info": None if client is None else client.client_info.model_dump(mode="json"),
            "capabilities": (
                None
                if client is None
                else client.capabilities.model_dump(mode="json", by_alias=True)
            ),
        }
        await self._client.set(self._key(sid), orjson.dumps(record), ex=self._ttl)
        body = orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
        headers = {MCP_SESSION_ID_HEADER: sid}
        await Response(body, media_type="application/json", headers=headers)(scope, receive, send)

    def _exchange(
        self,
        request: Request,
        sid: str,
        request_id: Any,
        sink: MemoryObjectSendStream[bytes] | None,
        progress_token: object = None,
    ) -> _Exchange:
        if sink is None:
            sink, receive = anyio.create_memory_object_stream[bytes](math.inf)
            receive.close()
        return _Exchange(
            transport=TransportContext(
                kind="streamable-http", can_send_request=True, headers=request.headers
            ),
            request_id=request_id,
            message_metadata=ServerMessageMetadata(request_context=request),
            session=sid,
            bus=self._bus,
            sink=sink,
            progress_token=progress_token,
        )

    async def _serve(
        self,
        request: Request,
        sid: str,
        connection: Connection,
        request_id: Any,
        method: str,
        params: Any,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """Run one request: JSON when it says nothing before its answer, else an SSE stream."""
        events, stream = anyio.create_memory_object_stream[bytes](math.inf)
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        dctx = self._exchange(request, sid, request_id, events, token)
        answer: list[dict[str, Any]] = []

        async def run() -> None:
            with events:
                try:
                    result = await serve_one(
                        self.server.server,
                        dctx,
                        method,
                        params,
                        connection=connection,
                        lifespan_state=self._lifespan,
                    )
                    answer.append({"jsonrpc": "2.0", "id": request_id, "result": result})
                except Exception as exc:
                    data = handler_exception_to_error_data(exc)
                    code = INTERNAL_ERROR if data is None else data.code
                    error = {
                        "code": code,
                        "message": "Internal error" if data is None else data.message,
                    }
                    answer.append({"jsonrpc": "2.0", "id": request_id, "error": error})

        streaming = False
        async with anyio.create_task_group() as group:
            with self._bus.cancellable(f"{sid}:{request_id}", group.cancel_scope):
                group.start_soon(run)
                first: bytes | None = None
                with stream:
                    with contextlib.suppress(anyio.EndOfStream):
                        first = await stream.receive()
                    if first is None:
                        body = orjson.dumps(answer[0]) if answer else b""
                        await Response(body, media_type="application/json")(scope, receive, send)
                        return
                    streaming = True
                    await send(
                        {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
                    )
                    await send({"type": "http.response.body", "body": first, "more_body": True})
                    async for event in stream:
                        await send({"type": "http.response.body", "body": event, "more_body": True})
                final = _sse(answer[0]) if answer else b""
                await send({"type": "http.response.body", "body": final, "more_body": False})
        if group.cancel_scope.cancelled_caught:
            # Cancelled (``notifications/cancelled``, the session's end): no answer, as the
            # SDK's own transport, an event stream that ends without one.
            if not streaming:
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class _Endpoint:
    """Starlette calls a class instance route as a plain ASGI app."""

    def __init__(self, app: SharedHttpApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


__all__ = ["DEFAULT_SESSION_TTL", "SharedHttpApp"]
