"""pydantic-ai both ways: ferrotool tools as a pydantic-ai toolset, pydantic-ai tools in a Toolkit.

Export: `toolset(source)` is a pydantic-ai ``AbstractToolset`` of every tool a view shows (`tool`
gives one tool as a ``pydantic_ai.Tool``). pydantic-ai hands over the parsed arguments; they go
back to JSON and through ferrotool's call pipeline (validation, permission gate, injection,
timeouts), and the result comes back the way pydantic-ai speaks:

- ``SUCCESS``: the structured value when the tool returned one (the value inside
  ``{"result": ...}`` when its output schema wraps it), else the text; with images, a list of
  the text and the images (``BinaryContent``, ``ImageUrl``);
- ``ERROR``, ``DENIED``, ``INTERRUPTED``: ``ToolFailed`` with the text (the model sees the
  failure; no retry budget is spent, as every ferrotool result is final);
- waiting for approval: ``ApprovalRequired`` (the run ends with ``DeferredToolRequests``;
  approved through ``DeferredToolResults``, the call runs again without asking);
- an external (client) tool: ``CallDeferred``, for the client to answer.

Each call's `RuntimeContext` comes from its run: by default the toolset's ``context`` with the
run's ``deps`` added under their type (`RuntimeContext.with_value`), so a tool parameter
``Injected[Deps]`` receives the ``deps=`` given to ``agent.run``; deps that are a
`RuntimeContext` are the run's context themselves. ``context_from`` builds the context from the
run instead (``RunContext`` in, `RuntimeContext` out). One toolset serves concurrent runs, each
with its own deps.

A toolset over a view with a session store reloads the view after each call, so a
``reset_tools`` call changes the tools pydantic-ai offers at its next step.

In a DBOS workflow (pydantic-ai's ``DBOSAgent``, its ``DBOSDurability`` capability, or any run
in a ``@DBOS.workflow``), each call of a toolset (or of a `tool`) is a DBOS step of that workflow,
named ``ferrotool.<tool>`` (``ferrotool.<id>.<tool>`` for a toolset with an id): its result is
recorded when it finishes, and a recovered or re-run workflow replays it without calling the tool
again. A call to a tool that is not idempotent (``@tool(idempotent=False)``) runs at most once, as
in `ferrotool.durable`: a step ``....begin`` records that it started, and a call that started but
has no result when the workflow recovers ends with the error result of
`ferrotool.durable.not_retried`. The toolset does this itself because pydantic-ai gives no hook
for it: ``DBOSAgent`` and ``DBOSDurability`` make steps of MCP (and dynamic) toolsets only, by a
private replacement of fixed kinds, and run every other toolset's calls in the workflow's own code,
where nothing is recorded. So a toolset needs no wrapper: the same one runs plainly outside a
workflow and durably inside one, and ``dbos`` is imported only when a workflow already runs.

Import: `from_pydantic_ai(tool)` is a ferrotool tool whose schema is the pydantic-ai tool's and
whose call runs it, its arguments validated by ferrotool (JSON Schema) and by pydantic-ai's own
validator (its types).
"""

from __future__ import annotations

import base64
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias, final

import orjson
from pydantic_core import SchemaValidator, core_schema
from typing_extensions import TypeVar

from ferrotool._definitions.wire import ERROR_STATES, json_text
from ferrotool._execution.outcomes import RESULT_KEY
from ferrotool._extras import requires_extra
from ferrotool._registry.view import ToolView
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import ImageBlock, JsonBlock, TextBlock
from ferrotool._values.context import EMPTY_CONTEXT, RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.interop._common import (
    ToolSource,
    call_id,
    content_of,
    run,
    schema_of,
    spec_of,
    view_of,
)

with requires_extra("ferrotool.interop.pydantic_ai", "pydantic-ai"):
    from pydantic_ai import (
        ApprovalRequired,
        BinaryContent,
        CallDeferred,
        ImageUrl,
        RunContext,
        Tool,
        ToolDefinition,
        ToolFailed,
    )
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_ai.usage import RunUsage

DepsT = TypeVar("DepsT", default=object, contravariant=True)
"""The type of a run's ``deps`` (pydantic-ai's ``AgentDepsT``)."""

ContextFrom: TypeAlias = Callable[[RunContext[DepsT]], RuntimeContext]
"""Builds a call's `RuntimeContext` from the pydantic-ai run it belongs to."""

_ANY_ARGUMENTS = SchemaValidator(core_schema.any_schema())
"""pydantic-ai's side of validation: none (ferrotool validates every call)."""


def _with_deps(context: RuntimeContext | None, deps: object) -> RuntimeContext | None:
    """``context`` with a run's ``deps`` under their type (deps that are a context replace it)."""
    if deps is None:
        return context
    if isinstance(deps, RuntimeContext):
        return deps
    return (context or EMPTY_CONTEXT).with_value(deps)


def _context_of(
    context: RuntimeContext | None, context_from: ContextFrom[DepsT] | None
) -> Callable[[RunContext[DepsT]], RuntimeContext | None]:
    """How a call's context comes from its run (see the module).

    Raises:
        TypeError: Both ``context`` and ``context_from`` are given.
    """
    if context_from is None:
        return lambda ctx: _with_deps(context, ctx.deps)
    if context is not None:
        raise TypeError("give a context or context_from, not both: context_from builds it all")
    return context_from


def _wraps(view: ToolView, name: str) -> bool:
    """Whether the structured value of ``name`` in ``view`` is wrapped in ``{"result": ...}``."""
    compiled = view.resolve(name)
    return compiled is not None and compiled.wraps_output


def _answer(result: ToolResultBlock, wrapped: bool = False) -> object:
    """A ferrotool result the way a pydantic-ai tool answers (see the module).

    ``wrapped``: the tool's structured value is ``{"result": <value>}`` (its output schema is
    not an object's), and the value inside is the answer.
    """
    if result.state in ERROR_STATES:
        raise ToolFailed(result.content)
    if result.needs_approval:
        permission = result.metadata.get("permission")
        raise ApprovalRequired(metadata={"permission": permission, "message": result.content})
    if result.is_suspended:
        raise CallDeferred(metadata={"message": result.content})
    images = [block for block in result.output if isinstance(block, ImageBlock)]
    if not images:
        value = result.structured
        if wrapped and isinstance(value, dict):
            value = value.get(RESULT_KEY)
        return result.content if value is None else value
    parts: list[object] = []
    for block in result.output:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, JsonBlock):
            parts.append(json_text(block.value))
        elif block.url is not None:
            parts.append(ImageUrl(url=block.url))
        else:
            data = base64.b64decode(block.data or "")
            parts.append(BinaryContent(data=data, media_type=block.media_type))
    return parts


_STEP_PREFIX: Final = "ferrotool"
"""The first part of the name of every DBOS step a call makes (see the module)."""


def _in_workflow_code() -> bool:
    """Whether this runs in a DBOS workflow's own code (not in a step, not outside a workflow).

    A workflow runs only where ``dbos`` was imported, so nothing is imported to find out.
    """
    if sys.modules.get("dbos") is None:
        return False
    from dbos import DBOS

    return DBOS.workflow_id is not None and DBOS.step_id is None


async def _call(
    view: ToolView,
    call: ToolUseBlock,
    context: RuntimeContext | None,
    *,
    approved: bool,
    step: str,
) -> ToolResultBlock:
    """Run one call: a DBOS step named ``step`` in a workflow's code, else directly."""
    if _in_workflow_code():
        return await _step_call(view, call, context, approved=approved, step=step)
    return await run(view, call, context, approved=approved)


async def _step_call(
    view: ToolView,
    call: ToolUseBlock,
    context: RuntimeContext | None,
    *,
    approved: bool,
    step: str,
) -> ToolResultBlock:
    """One call as a DBOS step of the running workflow, recorded as JSON text (see the module).

    DBOS numbers a step when it starts, and pydantic-ai runs a turn's calls as concurrent tasks:
    the step ids (the ``begin`` step's too) are drawn before anything is awaited, so they follow
    the order in which pydantic-ai starts the calls, on every run of the workflow.
    """
    from dbos import DBOS

    spec = view.get_spec(call.name)
    begin = None if spec is None or spec.idempotent else DBOS.reserve_step()
    reserved = DBOS.reserve_step()
    fresh = True
    if begin is not None:
        # This run of the call: a `begin` step that gives another was recorded by an earlier
        # run of the workflow, which ended before the call's result was recorded.
        this_run = uuid.uuid4().hex
        fresh = await begin.run_async({"name": f"{step}.begin"}, _started, this_run) == this_run

    async def body() -> str:
        if not fresh:
            from ferrotool.durable import not_retried

            return not_retried(call).to_json().decode()
        return (await run(view, call, context, approved=approved)).to_json().decode()

    return ToolResultBlock.from_json(await reserved.run_async({"name": step}, body))


async def _started(run_id: str) -> str:
    """The ``begin`` step of a call that must not run twice: it records which run started it."""
    return run_id


def _definition(spec: ToolSpec, strict: bool | None) -> ToolDefinition:
    return ToolDefinition(
        name=spec.name,
        parameters_json_schema=schema_of(spec),
        description=spec.description,
        strict=spec.strict if spec.strict is not None else strict,
        sequential=not spec.concurrency_safe,
    )


@final
class FerrotoolToolset(AbstractToolset[DepsT]):
    """The tools of a ferrotool view, as a pydantic-ai toolset (see the module).

    Build one per request over the request's view (``registry.open_view(...)``): over a view
    with a session it keeps that session's view, reloaded after each call. Over a toolkit or a
    registry (their default view, no session) one toolset serves every run, each call in its
    own run's context. In a DBOS workflow each call is a step of it (see the module).

    Args:
        source: A `ToolView` (a request's), or a `Toolkit` or `Registry` (their default view).
        context: The runtime context of every call, to which each run's ``deps`` are added.
        context_from: Builds each call's context from its run instead (not with ``context``).
        strict: Ask for strict schemas where a tool does not say.
        names: Only these tools (default: every tool the view shows).
        id: The toolset's id, for pydantic-ai (and in its calls' DBOS step names).

    Raises:
        TypeError: Both ``context`` and ``context_from`` are given.
    """

    def __init__(
        self,
        source: ToolSource,
        context: RuntimeContext | None = None,
        *,
        context_from: ContextFrom[DepsT] | None = None,
        strict: bool | None = None,
        names: Sequence[str] | None = None,
        id: str | None = None,
    ) -> None:
        self.view: ToolView = view_of(source)
        self.context = context
        self._context_of = _context_of(context, context_from)
        self.strict = strict
        self.names: Final[tuple[str, ...] | None] = None if names is None else tuple(names)
        self._id = id
        self._step_prefix = _STEP_PREFIX if id is None else f"{_STEP_PREFIX}.{id}"

    @property
    def id(self) -> str | None:
        """The toolset's id, if given."""
        return self._id

    async def get_tools(self, ctx: RunContext[DepsT]) -> dict[str, ToolsetTool[DepsT]]:
        """The view's tools, as pydantic-ai definitions."""
        names = self.view.names() if self.names is None else self.names
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=_definition(spec_of(self.view, name), self.strict),
                max_retries=1,
                args_validator=_ANY_ARGUMENTS,
            )
            for name in names
        }

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[DepsT],
        tool: ToolsetTool[DepsT],
    ) -> object:
        """Run one call through ferrotool in its run's context, answering as pydantic-ai does."""
        call = ToolUseBlock(call_id(ctx.tool_call_id), name, orjson.dumps(tool_args).decode())
        approved = bool(ctx.tool_call_approved)
        view = self.view
        step = f"{self._step_prefix}.{name}"
        result = await _call(view, call, self._context_of(ctx), approved=approved, step=step)
        if view.session is not None:
            self.view = await view.reload()
        return _answer(result, _wraps(view, name))


def toolset(
    source: ToolSource,
    context: RuntimeContext | None = None,
    *,
    context_from: ContextFrom[DepsT] | None = None,
    strict: bool | None = None,
    names: Sequence[str] | None = None,
    id: str | None = None,
) -> FerrotoolToolset[DepsT]:
    """Every tool of ``source`` (or only ``names``) as a pydantic-ai toolset.

    See `FerrotoolToolset` for the arguments.

    Raises:
        TypeError: Both ``context`` and ``context_from`` are given.
    """
    return FerrotoolToolset(
        source, context, context_from=context_from, strict=strict, names=names, id=id
    )


def tool(
    source: ToolSource,
    name: str,
    context: RuntimeContext | None = None,
    *,
    context_from: ContextFrom[DepsT] | None = None,
) -> Tool[DepsT]:
    """One ferrotool tool as a ``pydantic_ai.Tool`` (its calls run through ``source``).

    Each call's context comes from its run, as a toolset's does (see the module).

    Args:
        source: A `ToolView`, or a `Toolkit` or `Registry` (their default view).
        name: The tool.
        context: The runtime context of every call, to which each run's ``deps`` are added.
        context_from: Builds each call's context from its run instead (not with ``context``).

    Raises:
        InteropError: ``source`` shows no tool ``name``.
        TypeError: Both ``context`` and ``context_from`` are given.
    """
    view = view_of(source)
    spec = spec_of(view, name)
    context_of = _context_of(context, context_from)
    step = f"{_STEP_PREFIX}.{name}"

    async def call(ctx: RunContext[DepsT], **arguments: object) -> object:
        block = ToolUseBlock(call_id(ctx.tool_call_id), name, orjson.dumps(arguments).decode())
        approved = bool(ctx.tool_call_approved)
        result = await _call(view, block, context_of(ctx), approved=approved, step=step)
        return _answer(result, _wraps(view, name))

    return Tool.from_schema(
        call,
        name=spec.name,
        description=spec.description,
        json_schema=schema_of(spec),
        takes_ctx=True,
        sequential=not spec.concurrency_safe,
    )


class _PydanticAITool(ToolBase[dict[str, JsonValue]]):
    """A pydantic-ai tool, run by ferrotool."""

    def __init__(self, imported: Tool[object], deps_type: type | None) -> None:
        self._tool = imported
        self._deps_type = deps_type
        definition = imported.tool_def
        super().__init__(
            name=definition.name,
            description=definition.description or None,
            input_schema=definition.parameters_json_schema,
            concurrency_safe=not definition.sequential,
            strict=definition.strict,
            timeout=definition.timeout,
        )

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> object:
        schema = self._tool.function_schema
        arguments = schema.validator.validate_python(param.input)
        deps = None if self._deps_type is None else param.context.get(self._deps_type)
        ctx: RunContext[object] = RunContext(
            deps=deps,
            model=None,  # type: ignore[arg-type]  # no model runs: the call comes from ferrotool
            usage=RunUsage(),
            tool_call_id=param.call.id,
            tool_name=self.name,
        )
        return content_of(await schema.call(arguments, ctx))


def from_pydantic_ai(
    imported: Tool[object], *, deps_type: type | None = None
) -> ToolBase[dict[str, JsonValue]]:
    """A pydantic-ai tool as a ferrotool tool, to register in a `Toolkit`.

    Its JSON Schema is the pydantic-ai tool's; a call is validated by ferrotool, then by the
    tool's own pydantic validator (which builds its typed arguments), and runs the tool's
    function. A function that takes a ``RunContext`` gets one with the call's id and name, and
    ``deps`` read from the call's `RuntimeContext` by ``deps_type`` (its ``model`` is ``None``:
    no pydantic-ai model runs).

    Args:
        imported: The pydantic-ai tool.
        deps_type: The type of the dependencies a ``RunContext`` tool reads, looked up in the
            call's `RuntimeContext`.
    """
    return _PydanticAITool(imported, deps_type)


__all__ = ["ContextFrom", "FerrotoolToolset", "from_pydantic_ai", "tool", "toolset"]
