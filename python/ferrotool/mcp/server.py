"""`ferrotool serve`: a toolkit as an MCP server, on the SDK's own low-level ``Server``.

``tools/list`` sends the tools' cached ``mcp`` definitions (byte-stable: the same bytes for the
same session state), and ``tools/call`` runs each call through ferrotool's one call pipeline:
the arguments are validated in Rust, and every mistake comes back as an ``isError`` result the
model can act on.

Each MCP session has its own tool state in a `SessionStore`, so ``reset_tools`` switches groups
for one client only. The session is the transport's: the ``Mcp-Session-Id`` of a handshake-era
HTTP session, the SSE connection's id, the stdio process; a stateless (2026-07-28) client keeps
one by echoing the ``io.ferrotool/session`` entry of the results' ``_meta`` (ferrotool's
client does), else each call is a session of its own.

A call that waits for a person's approval, or for the client to run the tool, becomes an
elicitation: a live ``elicitation/create`` request on a handshake-era session, an
``InputRequiredResult`` on a 2026-07-28 one (the waiting call stays in the session store, so
any worker can take the answer). A client that cannot answer elicitations gets an ``isError``
result saying why, and the call does not run.

The toolkit's skills are prompts and resources (`ferrotool.mcp._skills`). A served `Toolkit` is
followed: each change of it is served from then on, and announced to the connected clients
(``notifications/tools/list_changed``, and the prompts' and resources' when its skills changed:
on the connection of a handshake-era session, on ``subscriptions/listen`` streams for a
2026-07-28 client).
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import uuid
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
import orjson
from mcp.server import NotificationOptions, Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ferrotool import __version__
from ferrotool._execution.batch import Confirmation, waiting
from ferrotool._execution.loopback import poster, spawn
from ferrotool._registry.registry import Registry
from ferrotool._registry.toolkit import Toolkit
from ferrotool._registry.view import ToolView
from ferrotool._session.memory import InMemorySessionStore
from ferrotool._session.pending import PendingToolCall, SuspensionKind
from ferrotool._session.state import (
    EMPTY_STATE,
    SessionKey,
    SessionStore,
    session_key,
    store_waiting,
    update_session,
)
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import JsonBlock, TextBlock
from ferrotool._values.context import RuntimeContext, ToolProgress
from ferrotool._values.json import JsonValue
from ferrotool.errors import ResumeError
from ferrotool.mcp import _skills
from ferrotool.mcp._auth import McpPrincipal, principal_of
from ferrotool.mcp._convert import SESSION_META_KEY, wire_result
from ferrotool.skills.registration import skills_of

_log: Final = logging.getLogger("ferrotool.mcp")

_ASK: Final = "ferrotool"
"""The key of ferrotool's question in an ``InputRequiredResult``."""

APPROVAL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Let the call run."}
    },
    "required": ["approve"],
}
"""The form a client's person fills in to approve a call that asks (an elicitation's schema)."""

RESULT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "result": {"type": "string", "title": "Result", "description": "What the tool gave."}
    },
    "required": ["result"],
}
"""The form a client fills in with an external tool's result (an elicitation's schema)."""

_PARSED_CAP: Final = 256
_FOLLOWED: Final = NotificationOptions(
    prompts_changed=True, resources_changed=True, tools_changed=True
)
_CHANGED: Final[dict[type[ServerEvent], str]] = {
    ToolsListChanged: "notifications/tools/list_changed",
    PromptsListChanged: "notifications/prompts/list_changed",
    ResourcesListChanged: "notifications/resources/list_changed",
}


class _Server(Server[Any]):
    """The SDK's low-level server, declaring the list changes its `McpToolServer` announces.

    Every transport asks the server for its initialization options; these carry the
    ``listChanged`` capabilities of the handshake era (``changes``).
    """

    changes: NotificationOptions = NotificationOptions()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self.changes, experimental_capabilities, extensions
        )


@final
class McpToolServer:
    """A toolkit's tools served over MCP (see the module's docstring).

    Args:
        tools: The toolkit to serve and follow (each change is served from then on, and
            announced to the connected clients), or a registry (served as it is).
        name: The server's name in ``serverInfo``.
        store: Where each session's tool state lives (default: this process's memory; a
            `ferrotool.redis.RedisSessionStore` shares it between worker processes).
        instructions: Instructions for the client's model.
        context: The runtime context every call runs with (its typed values reach the tools
            that ask for them); the session id is each call's own.

    Attributes:
        server: The SDK's low-level server, to run on any of its transports.
        registry: The tools served (the followed toolkit's latest snapshot).
        store: The session store.
    """

    __slots__ = (
        "__weakref__",
        "_bus",
        "_connections",
        "_context",
        "_following",
        "_listen",
        "_listening",
        "_parsed",
        "_process_session",
        "_stamp_info",
        "registry",
        "server",
        "store",
    )

    def __init__(
        self,
        tools: Toolkit | Registry,
        *,
        name: str = "ferrotool",
        store: SessionStore | None = None,
        instructions: str | None = None,
        context: RuntimeContext | None = None,
    ) -> None:
        self._context = context or RuntimeContext()
        self.registry: Registry = tools.snapshot() if isinstance(tools, Toolkit) else tools
        self.store: Final[SessionStore] = store if store is not None else InMemorySessionStore()
        self._process_session = uuid.uuid4().hex
        self._parsed: dict[bytes, list[JsonValue]] = {}
        self.server: Final = _Server(
            name,
            version=__version__,
            instructions=instructions,
            # The schemas hold no x-mcp-header: nothing for the transport to check, and
            # without this it would list the tools on every call to find out.
            get_tool_input_schema=_no_schema,
        )
        self._stamp_info = self.server.server_info_stamp
        # Registered as plain handlers: they answer wire dicts (the cached definitions),
        # which the runner checks against the negotiated version like any result.
        self.server.add_request_handler(
            "tools/list", types.PaginatedRequestParams, self._list_tools
        )
        self.server.add_request_handler("tools/call", types.CallToolRequestParams, self._call_tool)
        self._add_skill_handlers()
        # The connections of handshake-era sessions (announced to there), and the loops on
        # which `subscriptions/listen` streams run, by their "run this soon".
        self._connections: weakref.WeakKeyDictionary[object, Callable[..., object]] = (
            weakref.WeakKeyDictionary()
        )
        self._listening: dict[Callable[..., object], int] = {}
        self._following = threading.Lock()
        """Guards the registry's replacement and the connections (the loop and changers)."""
        self._bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        if isinstance(tools, Toolkit):
            self.server.changes = _FOLLOWED
            self.server.add_request_handler(
                "subscriptions/listen", types.SubscriptionsListenRequestParams, self._listened
            )
            self.server.middleware.append(self._track)
            key = object()
            tools.on_change(key, functools.partial(_follow, weakref.ref(self), tools))
            weakref.finalize(self, tools.on_change, key, None)

    # - skills: prompts and resources -

    def _add_skill_handlers(self) -> None:
        server = self.server

        async def list_prompts(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListPromptsResult:
            return _skills.prompts(skills_of(self.registry))

        async def get_prompt(
            ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
        ) -> types.GetPromptResult:
            return _skills.prompt(skills_of(self.registry), params.name)

        async def list_resources(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourcesResult:
            return await anyio.to_thread.run_sync(_skills.resources, skills_of(self.registry))

        async def list_templates(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourceTemplatesResult:
            return _skills.templates()

        async def read_resource(
            ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            return await anyio.to_thread.run_sync(_skills.read, self.registry, str(params.uri))

        paginated = types.PaginatedRequestParams
        server.add_request_handler("prompts/list", paginated, list_prompts)
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)
        server.add_request_handler("resources/list", paginated, list_resources)
        server.add_request_handler("resources/templates/list", paginated, list_templates)
        server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)

    # - following the toolkit -

    async def _track(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: remember the connection of a handshake-era session, to announce to."""
        result = await call_next(ctx)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            connection = getattr(ctx.session, "_connection", None)
            if connection is not None and connection not in self._connections:
                with self._following:
                    self._connections[connection] = poster()
        return result

    async def _listened(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """A ``subscriptions/listen`` stream, its loop counted while it runs."""
        post = poster()
        with self._following:
            self._listening[post] = self._listening.get(post, 0) + 1
        try:
            return await self._listen(ctx, params)
        finally:
            with self._following:
                left = self._listening.pop(post, 1) - 1
                if left:
                    self._listening[post] = left

    def _followed(self, toolkit: Toolkit) -> None:
        """The toolkit changed (on the changing thread): serve it, and announce the change."""
        with self._following:  # changes on several threads: the latest snapshot is kept
            old, new = self.registry, toolkit.snapshot()
            self.registry = new
            tracked = list(self._connections.items())
            listening = list(self._listening)
        events: list[ServerEvent] = []
        if skills_of(old).signature != skills_of(new).signature:
            events += [PromptsListChanged(), ResourcesListChanged()]
        events.append(ToolsListChanged())  # last: once it is in, the others are
        loops: dict[Callable[..., object], list[object]] = {post: [] for post in listening}
        for connection, post in tracked:
            loops.setdefault(post, []).append(connection)
        for post, connections in loops.items():
            announce = functools.partial(self._announce, connections, tuple(events))
            try:
                post(spawn, announce)
            except RuntimeError:  # that loop has ended
                with self._following:
                    self._listening.pop(post, None)

    async def _announce(self, connections: list[object], events: tuple[ServerEvent, ...]) -> None:
        """Send the change to each connection, and on the listen streams (on their loop)."""
        for event in events:
            try:
                if self._listening:
                    await self._bus.publish(event)
                for connection in connections:
                    notify = getattr(connection, "notify", None)
                    if notify is not None:
                        await notify(_CHANGED[type(event)], None)
            except Exception:
                _log.exception("announcing a change of the served toolkit failed")

    # - sessions -

    async def _view(self, sid: str, fresh: bool) -> ToolView:
        """The session's view (a session just minted has nothing stored: no load)."""
        key = SessionKey("", sid)
        state = EMPTY_STATE if fresh else await self.store.load(key)
        return self.registry.view(state, store=self.store, key=key)

    async def answer(
        self,
        request_id: object,
        name: str,
        arguments: object,
        meta: object,
        principal: McpPrincipal | None = None,
    ) -> dict[str, Any] | None:
        """A 2026-07-28 ``tools/call`` answered without the SDK's per-request machinery.

        The fast path of `ferrotool.mcp._fast`: the request was checked by the SDK's own
        envelope ladder already. ``None`` when the call waits (an approval, a client-run tool):
        the request then goes the SDK's way, which asks the client. ``principal`` (the
        authenticated client) joins the call's context.
        """
        given = meta.get(SESSION_META_KEY) if isinstance(meta, dict) else None
        fresh = not (isinstance(given, str) and given)
        sid = uuid.uuid4().hex if fresh else str(given)
        view = await self._view(sid, fresh)
        call = ToolUseBlock(str(request_id), name, orjson.dumps(arguments or {}).decode())
        context = self._context.with_ids(session_id=sid)
        if principal is not None:
            context = context.with_value(principal)
        result = await view.call_tool(call, context)
        if result.needs_approval or result.is_suspended:
            return None
        body = self._wire(result)
        body["resultType"] = "complete"
        body["_meta"] = {SESSION_META_KEY: sid, SERVER_INFO_META_KEY: self._stamp_info}
        return body

    def _session(self, ctx: ServerRequestContext[Any, Any]) -> tuple[str, bool]:
        """The call's session id, and whether the client must be told it (stateless)."""
        request = ctx.request
        if request is None:
            # stdio or in-process: the connection is the session. Its scratch state is the
            # SDK's `Connection.state`, which the request context reaches only privately.
            scratch = getattr(getattr(ctx.session, "_connection", None), "state", None)
            if not isinstance(scratch, dict):
                return self._process_session, False
            sid = scratch.setdefault(SESSION_META_KEY, uuid.uuid4().hex)
            return str(sid), False
        headers = request.headers
        sid = headers.get("mcp-session-id") or request.query_params.get("session_id")
        if sid:
            return sid, False
        meta = (ctx.params or {}).get("_meta")
        given = meta.get(SESSION_META_KEY) if isinstance(meta, dict) else None
        if isinstance(given, str) and given:
            return given, True
        return uuid.uuid4().hex, True  # a session of one call: nothing is stored for it yet

    def _stamp(
        self, ctx: ServerRequestContext[Any, Any], body: dict[str, Any], sid: str, tell: bool
    ) -> dict[str, Any]:
        """The result as the client's era wants it, with the session id for a stateless one."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            body["resultType"] = "complete"
        if tell:
            body["_meta"] = {SESSION_META_KEY: sid}
        return body

    # - tools/list -

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> dict[str, Any]:
        sid, tell = self._session(ctx)
        state = await self.store.load(session_key(RuntimeContext(session_id=sid)))
        data = self.registry.view(state).schemas_json("mcp")
        tools = self._parsed.get(data)
        if tools is None:
            tools = orjson.loads(data)
            if len(self._parsed) >= _PARSED_CAP:
                self._parsed.clear()
            self._parsed[data] = tools
        body: dict[str, Any] = {"tools": tools}
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # The listing depends on the session's groups, which `reset_tools` changes.
            body.update(ttlMs=0, cacheScope="private")
        return self._stamp(ctx, body, sid, tell)

    # - tools/call -

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any] | types.InputRequiredResult:
        sid, tell = self._session(ctx)
        context = _with_principal(self._context.with_ids(session_id=sid), ctx)
        if params.request_state is not None:
            return self._stamp(ctx, await self._answered(ctx, params, context), sid, tell)
        call = ToolUseBlock(
            str(ctx.request_id) if ctx.request_id is not None else uuid.uuid4().hex,
            params.name,
            orjson.dumps(params.arguments or {}).decode(),
        )
        view = await self._view(sid, tell and not _has_session_meta(ctx))
        if not _wants_progress(ctx):
            result = await view.call_tool(call, context)
        else:
            result = await with_progress(
                ctx.session.report_progress,
                lambda sink: view.call_tool(call, context, on_progress=sink),
            )
        if result.needs_approval or result.is_suspended:
            asked = await self._ask(ctx, context, call, result)
            if isinstance(asked, types.InputRequiredResult):
                return asked
            result = asked
        return self._stamp(ctx, self._wire(result), sid, tell)

    def _wire(self, result: ToolResultBlock) -> dict[str, Any]:
        spec = self.registry.get_spec(result.name or "")
        return wire_result(
            result, structured=spec is not None and spec.output_schema_json is not None
        )

    async def _ask(
        self,
        ctx: ServerRequestContext[Any, Any],
        context: RuntimeContext,
        call: ToolUseBlock,
        result: ToolResultBlock,
    ) -> ToolResultBlock | types.InputRequiredResult:
        """Put a waiting call to the client as an elicitation; its answer settles the call."""
        key = session_key(context)
        reply_id = uuid.uuid4().hex
        pending = waiting(result, call, reply_id)
        if pending is None:  # pragma: no cover - the caller checked
            return result
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return _refused(call, pending, "this MCP client does not support elicitation")
        # Another connection of the session may wait with the same request id: ids kept apart.
        (pending,) = await store_waiting(self.store, key, [pending], [result], [call])
        message, schema = _question(pending)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            state = orjson.dumps({"session": key.session_id, "call": pending.id}).decode()
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            return types.InputRequiredResult(input_requests={_ASK: request}, request_state=state)
        if not ctx.session.can_send_request:
            await update_session(self.store, key, lambda state: state.without_pending([pending.id]))
            return _refused(call, pending, "this MCP session has no channel for questions")
        try:
            answer = await ctx.session.elicit_form(
                message, schema, related_request_id=ctx.request_id
            )
        except BaseException:
            # Cancelled, or the client gone: no answer will settle the call, so it waits no more.
            with anyio.CancelScope(shield=True):
                await update_session(
                    self.store, key, lambda state: state.without_pending([pending.id])
                )
            raise
        return await self._settle(context, pending, answer)

    async def _answered(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        context: RuntimeContext,
    ) -> dict[str, Any]:
        """The retry of a 2026-07-28 call that asked: settle it with the client's answer."""
        try:
            state = orjson.loads(params.request_state or "")
            call_id = state["call"]
            sid = state["session"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return _error("the requestState of this call is not one ferrotool made")
        context = _with_principal(self._context.with_ids(session_id=str(sid)), ctx)
        stored = await self.store.load(session_key(context))
        pending = stored.pending(str(call_id))
        if pending is None or pending.call.name != params.name:
            return _error(f"call {call_id} does not wait in this session (answered already?)")
        answer = (params.input_responses or {}).get(_ASK)
        if not isinstance(answer, types.ElicitResult):
            answer = types.ElicitResult(action="cancel")
        return self._wire(await self._settle(context, pending, answer))

    async def _settle(
        self, context: RuntimeContext, pending: PendingToolCall, answer: types.ElicitResult
    ) -> ToolResultBlock:
        content = answer.content or {}
        call = pending.call
        reply: Confirmation | ToolResultBlock
        if pending.kind is SuspensionKind.CONFIRM:
            approved = answer.action == "accept" and content.get("approve") is True
            reply = Confirmation(call.id, approved)
        elif answer.action == "accept" and isinstance(content.get("result"), str):
            reply = ToolResultBlock.success(str(content["result"]), id=call.id, name=call.name)
        else:
            reply = ToolResultBlock.error(
                f"the client did not run {call.name} ({answer.action})", id=call.id, name=call.name
            )
        view = await self.registry.open_view(context, self.store)
        try:
            batch = await view.resume([reply], context)
        except ResumeError as exc:
            return ToolResultBlock.error(str(exc), id=call.id, name=call.name)
        return batch.results[0]


def _follow(server: weakref.ref[McpToolServer], toolkit: Toolkit) -> None:
    """A toolkit's change watcher: the server, while it lives, follows the change."""
    found = server()
    if found is not None:
        found._followed(toolkit)


def _with_principal(context: RuntimeContext, ctx: ServerRequestContext[Any, Any]) -> RuntimeContext:
    """The context with the HTTP request's authenticated `McpPrincipal`, if it has one."""
    principal = None if ctx.request is None else principal_of(ctx.request.scope)
    return context if principal is None else context.with_value(principal)


def _has_session_meta(ctx: ServerRequestContext[Any, Any]) -> bool:
    meta = (ctx.params or {}).get("_meta")
    return isinstance(meta, dict) and bool(meta.get(SESSION_META_KEY))


def _wants_progress(ctx: ServerRequestContext[Any, Any]) -> bool:
    meta = (ctx.params or {}).get("_meta")
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def _no_schema(name: str) -> None:
    del name


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Error: {text}"}], "isError": True}


def _question(pending: PendingToolCall) -> tuple[str, dict[str, Any]]:
    call = pending.call
    if pending.kind is SuspensionKind.CONFIRM:
        why = pending.message or f"Permission required for {call.name}"
        return f"{why}. Run {call.name} with {call.arguments}?", APPROVAL_SCHEMA
    return f"Run {call.name} with {call.arguments} and give its result.", RESULT_SCHEMA


def _refused(call: ToolUseBlock, pending: PendingToolCall, why: str) -> ToolResultBlock:
    need = (
        "a person's approval" if pending.kind is SuspensionKind.CONFIRM else "the client to run it"
    )
    return ToolResultBlock.error(
        f"{call.name} needs {need}, and {why}; the call did not run", id=call.id, name=call.name
    )


ProgressReport = Callable[[float, float | None, str | None], Awaitable[None]]
"""Sends one MCP progress notification: ``(progress, total, message)``."""


async def with_progress(
    report: ProgressReport,
    run: Callable[[Callable[[ToolProgress], None]], Awaitable[ToolResultBlock]],
) -> ToolResultBlock:
    """Run a call whose progress chunks go to ``report``, in order, as MCP progress.

    A chunk may come from a worker thread; it is handed to the event loop's thread.
    """
    send, receive = anyio.create_memory_object_stream[ToolProgress](math.inf)
    loop_thread = threading.get_ident()

    def sink(progress: ToolProgress) -> None:
        if threading.get_ident() == loop_thread:
            send.send_nowait(progress)
        else:
            anyio.from_thread.run_sync(send.send_nowait, progress)

    async def forward() -> None:
        count = 0
        async with receive:
            async for progress in receive:
                count += 1
                done, total, message = _progress(progress, count)
                await report(done, total, message)

    async with anyio.create_task_group() as group:
        group.start_soon(forward)
        with send:
            result = await run(sink)
    return result


def _progress(progress: ToolProgress, count: int) -> tuple[float, float | None, str | None]:
    """A chunk as MCP's (progress, total, message).

    Progress with numbers (`Emitter.progress`) passes them on, its text as the message (none
    when empty). A plain chunk counts: the n-th chunk of the call is progress n, with its text
    (a JSON chunk as JSON text) as the message.
    """
    chunk = progress.chunk
    if progress.progress is not None:
        text = chunk.text if isinstance(chunk, TextBlock) else None
        return progress.progress, progress.total, text or None
    if isinstance(chunk, TextBlock):
        return count, None, chunk.text
    if isinstance(chunk, JsonBlock):
        return count, None, orjson.dumps(chunk.value).decode()
    return count, None, None


__all__ = [
    "APPROVAL_SCHEMA",
    "RESULT_SCHEMA",
    "SESSION_META_KEY",
    "McpToolServer",
    "wire_result",
    "with_progress",
]
