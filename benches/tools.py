"""Tool-call benchmark cases: ferrotool's `Toolkit.call_tool` against peer tool libraries.

Every implementation starts from the raw JSON arguments (a ``str``, as model APIs deliver them)
and ends with the tool's result, for the signatures S1 to S5 of `benches.cases`, in three modes:

- ``async``: ``async def`` tools, awaited on the event loop;
- ``inline``: sync tools run on the caller's thread;
- ``thread``: sync tools run on a worker thread.

Each builder takes the case's function and returns a `Built`: a runner taking the raw JSON
(returning an awaitable when ``awaitable``), how to read its result into an `Outcome`, and a note
when the peer had to be driven differently from its defaults. A peer whose import fails is
listed with the reason (`implementations`), never dropped silently; a peer that cannot express
a signature raises `Unsupported` from its builder.

No ``from __future__ import annotations`` here: the generated tools use annotation objects
taken from the cases' functions (their local dataclasses and enum).
"""

import functools
import importlib.util
import inspect
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import anyio
import anyio.to_thread
import orjson

import ferrotool
from benches import cases as c
from ferrotool._core import DirectCall

Mode = Literal["async", "inline", "thread"]
MODES: tuple[Mode, ...] = ("async", "inline", "thread")

# Names of the implementations, in table order. The floor and ferrotool keep the same names in
# every mode (the group says which mode).
FLOOR = "floor"
FT_TOOL = "ferrotool call_tool"
FT_TOOL_SYNC = "ferrotool call_tool_sync"
FT_DIRECT_RUN = "ferrotool DirectCall.run"
PYDANTIC_AI = "pydantic-ai function_schema"
AGENTS = "openai-agents on_invoke_tool"
MCP = "mcp Tool.run"
MCP_CONVERT = "mcp Tool.run + convert_result"
LANGCHAIN = "langchain StructuredTool"

HAS_PROVIDERS = importlib.util.find_spec("ferrotool.providers") is not None

# What each case's tool returns: the expression of its body, and the value expected on the
# case's payload (S5 is invalid: no value).
RETURNS = {"S1": "city", "S2": "len(items)", "S3": "name", "S4": "len(items)", "S5": "len(items)"}
EXPECTED: dict[str, object] = {"S1": "Paris", "S2": 3, "S3": "nightly-report", "S4": 200}

_CALL_ID = "call_1"


class Unsupported(Exception):
    """A peer cannot express this signature (or this mode)."""


class Outcome(NamedTuple):
    """What a call ended with: the tool's value, or an error the model would be shown."""

    ok: bool
    value: object


class Failed(NamedTuple):
    """A peer's validation failure, caught and kept as its error list or message."""

    errors: object


@dataclass(frozen=True)
class Built:
    """One implementation ready to time on one case."""

    call: Callable[[], Any]
    """The call, with the raw arguments bound: what the timing loop calls (and awaits)."""
    awaitable: bool
    read: Callable[[Any], Outcome]
    note: str | None = None
    context: Callable[[], AbstractContextManager[object]] | None = None
    """Entered once around the timed loop (inside the event loop); only this library reads it."""


Builder = Callable[[Callable[..., Any], str], Built]
"""Takes the case's function and the raw JSON arguments."""


# --- the tools ---------------------------------------------------------------------------------


def make_function(
    case: c.Case,
    *,
    is_async: bool,
    record: Callable[[dict[str, Any]], None] | None = None,
) -> Callable[..., Any]:
    """The case's function, with the same signature, as a plain ``def`` or an ``async def``.

    Generated with ``exec`` from the case factory's signature (parameter names, annotations,
    defaults, docstring), so both kinds have real parameters and the same one-expression body.
    With ``record``, the function hands its arguments to it before returning (tests only).
    """
    template = case.factory()
    signature = inspect.signature(template)
    namespace: dict[str, Any] = {"_record": record}
    params = []
    for i, param in enumerate(signature.parameters.values()):
        namespace[f"_a{i}"] = param.annotation
        text = f"{param.name}: _a{i}"
        if param.default is not param.empty:
            namespace[f"_d{i}"] = param.default
            text += f" = _d{i}"
        params.append(text)
    namespace["_ret"] = signature.return_annotation
    body = RETURNS[case.name]
    if record is not None:
        body = f"(_record(dict(locals())), {body})[1]"
    kind = "async def" if is_async else "def"
    name = template.__name__
    exec(f"{kind} {name}({', '.join(params)}) -> _ret:\n    return {body}\n", namespace)
    fn: Callable[..., Any] = namespace[name]
    fn.__doc__ = template.__doc__
    fn.__qualname__ = template.__qualname__
    fn.__module__ = template.__module__
    return fn


def _value_outcome(result: object) -> Outcome:
    if isinstance(result, Failed):
        return Outcome(False, result.errors)
    return Outcome(True, result)


# --- the floor ---------------------------------------------------------------------------------


def floor(mode: Mode) -> Builder:
    """Parse and call, nothing checked or built: ``fn(**orjson.loads(raw))``.

    ``async``: ``await afn(**orjson.loads(raw))``; ``thread``: the same call handed to
    ``anyio.to_thread.run_sync``.
    """
    loads = orjson.loads
    run_sync = anyio.to_thread.run_sync
    partial = functools.partial

    def build(fn: Callable[..., Any], raw: str) -> Built:
        if mode == "inline":
            return Built(lambda: fn(**loads(raw)), False, _value_outcome)
        if mode == "async":

            async def call() -> Any:
                return await fn(**loads(raw))

            return Built(call, True, _value_outcome)

        async def call_thread() -> Any:
            return await run_sync(partial(fn, **loads(raw)))

        return Built(call_thread, True, _value_outcome)

    return build


# --- ferrotool ---------------------------------------------------------------------------------


def ferrotool_tool(mode: Mode) -> Builder:
    """``await toolkit.call_tool(block)``, the tool made by ``@tool`` (async), by
    ``@tool(inline=True)``, or by ``@tool`` (sync: on the toolkit's worker threads), registered
    in a fresh `Toolkit`.

    The `ToolUseBlock` (call id, tool name, raw arguments) is the input, built once like the raw
    JSON; the result is the `ToolResultBlock`.
    """

    def build(fn: Callable[..., Any], raw: str) -> Built:
        item = ferrotool.tool(inline=True)(fn) if mode == "inline" else ferrotool.tool(fn)
        toolkit = ferrotool.Toolkit()
        toolkit.register(item)
        block = ferrotool.ToolUseBlock(_CALL_ID, item.name, raw)
        return Built(functools.partial(toolkit.call_tool, block), True, _ferrotool_outcome)

    return build


def ferrotool_tool_sync(fn: Callable[..., Any], raw: str) -> Built:
    """``toolkit.call_tool_sync(block)`` of the tool made by ``@tool(inline=True)``: no event
    loop, the call runs to its result on the caller's thread.
    """
    item = ferrotool.tool(inline=True)(fn)
    toolkit = ferrotool.Toolkit()
    toolkit.register(item)
    block = ferrotool.ToolUseBlock(_CALL_ID, item.name, raw)
    return Built(functools.partial(toolkit.call_tool_sync, block), False, _ferrotool_outcome)


def ferrotool_direct_run(fn: Callable[..., Any], raw: str) -> Built:
    """``direct.run(block)``: the Rust direct call `call_tool_sync` hands a plain sync tool's
    call to (the route of a sync caller in the default view), called by itself; the floor of
    `call_tool_sync`.
    """
    item = ferrotool.tool(inline=True)(fn)
    toolkit = ferrotool.Toolkit()
    toolkit.register(item)
    block = ferrotool.ToolUseBlock(_CALL_ID, item.name, raw)
    direct = toolkit.view().route(block, sync=True)
    if not isinstance(direct, DirectCall):
        raise TypeError(f"{item.name} has no direct call")
    return Built(functools.partial(direct.run, block), False, _ferrotool_outcome)


def _ferrotool_outcome(result: ferrotool.ToolResultBlock) -> Outcome:
    if result.state is not ferrotool.ToolResultState.SUCCESS:
        return Outcome(False, result.content)
    if result.structured is None:
        return Outcome(True, result.content)
    return Outcome(True, unwrapped(result.structured))


def unwrapped(structured: object) -> object:
    """A structured value as the tool returned it: ``{"result": v}`` (an output schema that is
    not an object's wraps the value, as MCP asks) read as ``v``."""
    if isinstance(structured, dict) and structured.keys() == {"result"}:
        return structured["result"]
    return structured


# --- pydantic-ai -------------------------------------------------------------------------------


def pydantic_ai(mode: Mode) -> Builder:
    """pydantic-ai's bare function-schema path, the validate-and-call its tool manager runs::

        fs = function_schema(fn, GenerateToolJsonSchema)  # once
        args = fs.validator.validate_json(raw)
        result = await fs.call(args, ctx)  # ctx: a RunContext built once

    A sync tool runs through pydantic-ai's ``run_in_executor`` (``anyio.to_thread``), or inline
    under ``pydantic_ai._utils.disable_threads()`` in the ``inline`` mode. A validation error
    becomes ``errors(include_url=False, include_context=False)``, what its tool manager sends
    back in a retry prompt.
    """
    from pydantic import ValidationError
    from pydantic_ai import _utils
    from pydantic_ai._function_schema import function_schema
    from pydantic_ai._run_context import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tools import GenerateToolJsonSchema
    from pydantic_ai.usage import RunUsage

    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    context = _utils.disable_threads if mode == "inline" else None

    def build(fn: Callable[..., Any], raw: str) -> Built:
        fs = function_schema(fn, GenerateToolJsonSchema)
        validate_json = fs.validator.validate_json
        fs_call = fs.call

        async def call() -> Any:
            try:
                args = validate_json(raw)
            except ValidationError as exc:
                return Failed(exc.errors(include_url=False, include_context=False))
            return await fs_call(args, ctx)

        return Built(call, True, _value_outcome, context=context)

    return build


# --- the OpenAI Agents SDK ---------------------------------------------------------------------


def openai_agents(mode: Mode) -> Builder:
    """``tool = agents.function_tool(fn)``, then ``await tool.on_invoke_tool(ctx, raw)`` with a
    `ToolContext` built once.

    A sync tool always runs on ``asyncio.to_thread`` (no inline mode). With the default failure
    handler an invalid call returns a fixed error text instead of raising; its "No active span"
    warning (there is no trace outside ``Runner.run``) is silenced by raising the
    ``openai.agents`` logger's level to ERROR. When the SDK refuses a signature in strict mode
    (its default), the tool is built with ``strict_mode=False`` and the note says so.
    """
    if mode == "inline":
        raise Unsupported("sync function tools always run on a worker thread (asyncio.to_thread)")
    import agents
    from agents.exceptions import UserError
    from agents.tool_context import ToolContext

    logging.getLogger("openai.agents").setLevel(logging.ERROR)
    failure = agents.default_tool_error_function(None, Exception())  # type: ignore[arg-type]

    def read(result: object) -> Outcome:
        return Outcome(result != failure, result)

    def build(fn: Callable[..., Any], raw: str) -> Built:
        note = None
        try:
            item = agents.function_tool(fn)
        except UserError as exc:
            item = agents.function_tool(fn, strict_mode=False)
            reason = str(exc).split(". ")[0]
            note = f"strict mode refuses the signature ({reason}): built with strict_mode=False"
        ctx = ToolContext(None, tool_name=item.name, tool_call_id=_CALL_ID, tool_arguments=raw)
        return Built(functools.partial(item.on_invoke_tool, ctx, raw), True, read, note=note)

    return build


# --- mcp ---------------------------------------------------------------------------------------


def mcp_server(mode: Mode, *, convert: bool = False) -> Builder:
    """The mcp SDK's server-side run: the tool built by an `MCPServer`'s tool manager
    (``server.add_tool(fn)``), then ``await tool.run(orjson.loads(raw), ctx)`` with a `Context`
    built once.

    The arguments reach ``run`` parsed, so ``orjson.loads`` is timed too. ``convert``: with
    ``convert_result=True``, as ``MCPServer.call_tool`` runs it, giving a `CallToolResult`; an
    invalid call then ends in the ``is_error`` result the server sends. Sync tools always run
    on ``anyio.to_thread`` (no inline mode).
    """
    if mode == "inline":
        raise Unsupported("sync tools always run on a worker thread (anyio.to_thread)")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.context import Context
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent

    loads = orjson.loads

    def build(fn: Callable[..., Any], raw: str) -> Built:
        with root_logging_kept():
            server = MCPServer("ferrotool-bench")
        server.add_tool(fn)
        tool = server._tool_manager.get_tool(fn.__name__)
        if tool is None:  # pragma: no cover
            raise Unsupported("the tool manager did not register the tool")
        ctx = Context(mcp_server=server)
        run = tool.run

        if convert:

            async def call() -> Any:
                try:
                    return await run(loads(raw), ctx, convert_result=True)
                except ToolError as exc:
                    return CallToolResult(
                        content=[TextContent(type="text", text=str(exc))], is_error=True
                    )

            return Built(call, True, _mcp_outcome)

        async def call_plain() -> Any:
            try:
                return await run(loads(raw), ctx)
            except ToolError as exc:
                return Failed(str(exc))

        return Built(call_plain, True, _value_outcome)

    return build


@contextmanager
def root_logging_kept() -> Iterator[None]:
    """Puts the root logger's level and handlers back as they were.

    Creating an `MCPServer` configures the process's logging (the root logger at INFO, with a
    Rich handler): from then on every library's INFO records would be printed, ferrotool's
    record of each call with invalid arguments among them, timing a terminal write in the S5
    rows of every implementation measured after it. Every implementation runs under the
    logging the process had.
    """
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers


def _mcp_outcome(result: Any) -> Outcome:
    if result.is_error:
        return Outcome(False, result.content[0].text)
    if result.structured_content is not None:
        return Outcome(True, unwrapped(result.structured_content))
    return Outcome(True, result.content[0].text)


# --- LangChain ---------------------------------------------------------------------------------


def langchain(mode: Mode) -> Builder:
    """``StructuredTool.from_function(fn)`` (``coroutine=afn`` for an async tool), then
    ``tool.invoke(orjson.loads(raw))`` (inline) or ``await tool.ainvoke(orjson.loads(raw))``
    (async; a sync function then runs in an executor thread). The arguments reach the tool
    parsed, so ``orjson.loads`` is timed too; a validation error raises, its ``errors()`` kept.
    """
    from langchain_core.tools import StructuredTool
    from pydantic import ValidationError

    loads = orjson.loads

    def build(fn: Callable[..., Any], raw: str) -> Built:
        if mode == "async":
            item = StructuredTool.from_function(coroutine=fn)
        else:
            item = StructuredTool.from_function(fn)
        if mode == "inline":
            invoke = item.invoke

            def call() -> Any:
                try:
                    return invoke(loads(raw))
                except ValidationError as exc:
                    return Failed(exc.errors())

            return Built(call, False, _value_outcome)
        ainvoke = item.ainvoke

        async def call_async() -> Any:
            try:
                return await ainvoke(loads(raw))
            except ValidationError as exc:
                return Failed(exc.errors())

        return Built(call_async, True, _value_outcome)

    return build


# --- the table ---------------------------------------------------------------------------------

_PEERS: dict[str, tuple[str, Callable[[Mode], Builder]]] = {
    PYDANTIC_AI: ("pydantic_ai", pydantic_ai),
    AGENTS: ("agents", openai_agents),
    MCP: ("mcp", mcp_server),
    MCP_CONVERT: ("mcp", functools.partial(mcp_server, convert=True)),
    LANGCHAIN: ("langchain_core", langchain),
}
_PEERS_BY_MODE: dict[Mode, tuple[str, ...]] = {
    "async": (PYDANTIC_AI, AGENTS, MCP, MCP_CONVERT, LANGCHAIN),
    "inline": (PYDANTIC_AI, AGENTS, MCP, LANGCHAIN),
    "thread": (PYDANTIC_AI, AGENTS, MCP, LANGCHAIN),
}


def implementations(mode: Mode) -> dict[str, Builder | str]:
    """Every implementation of a mode, in table order: its builder, or why it is left out.

    The reason reads ``unavailable: ...`` (the peer's import failed) or ``not applicable: ...``
    (the peer has no such mode).
    """
    out: dict[str, Builder | str] = {FLOOR: floor(mode), FT_TOOL: ferrotool_tool(mode)}
    if mode == "inline":
        out[FT_TOOL_SYNC] = ferrotool_tool_sync
        out[FT_DIRECT_RUN] = ferrotool_direct_run
    for name in _PEERS_BY_MODE[mode]:
        module, make = _PEERS[name]
        try:
            out[name] = make(mode)
        except Unsupported as exc:
            out[name] = f"not applicable: {exc}"
        except Exception as exc:  # an import failing, or a peer API that moved
            out[name] = f"unavailable: {type(exc).__name__}: {exc} (import {module})"
    return out


async def outcome(built: Built) -> Outcome:
    """Run one call and read its result."""
    result = built.call()
    if built.awaitable:
        result = await result
    return built.read(result)


# --- registration and schemas ------------------------------------------------------------------


def distinct_functions(count: int, *, tag: str = "") -> list[Callable[..., Any]]:
    """``count`` new functions, each with its own name and first parameter's name.

    S1's shape (a string, a ``Literal`` with a default, an int with a default), so every
    function derives its own schema. Built with one ``exec`` per batch, before any clock starts.
    """
    source = "\n".join(
        f"def tool_{tag}{i:04d}(city_{i}: str, unit: Literal['c', 'f'] = 'c', days: int = 1)"
        f" -> str:\n    '''Get the weather forecast for city {i}.'''\n    return city_{i}\n"
        for i in range(count)
    )
    namespace: dict[str, Any] = {"Literal": Literal}
    exec(source, namespace)
    return [namespace[f"tool_{tag}{i:04d}"] for i in range(count)]


def register_all(functions: list[Callable[..., Any]]) -> ferrotool.Toolkit:
    """A fresh `Toolkit` with every function made a tool (``tool(fn)``) and registered."""
    toolkit = ferrotool.Toolkit()
    register, make = toolkit.register, ferrotool.tool
    for fn in functions:
        register(make(fn))
    return toolkit


def schema_toolkit(count: int) -> ferrotool.Toolkit:
    """A toolkit of ``count`` distinct tools, its ``openai_chat`` tool list built once."""
    toolkit = register_all(distinct_functions(count, tag="s"))
    toolkit.schemas("openai_chat")  # warm-up: built here, served from the cache afterwards
    return toolkit


def records_built(kwargs: Mapping[str, Any], case: c.Case) -> bool:
    """Whether the arguments a tool received are typed values (records, datetime, enum)."""
    if case.name in ("S2", "S4"):
        return c.is_dataclass_instance(kwargs["customer"]) and all(
            c.is_dataclass_instance(item) for item in kwargs["items"]
        )
    if case.name == "S3":
        import datetime as dt
        import enum

        return isinstance(kwargs["start_at"], dt.datetime) and isinstance(
            kwargs["priority"], enum.Enum
        )
    return True
