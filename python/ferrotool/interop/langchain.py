"""LangChain both ways: ferrotool tools as LangChain ``BaseTool`` objects, LangChain tools back.

Export: `langchain_tools(source)` gives one ``BaseTool`` per tool a view shows
(`langchain_tool` one of them), whose ``args_schema`` is ferrotool's JSON Schema (so
``bind_tools`` and ``convert_to_openai_tool`` send exactly it). LangChain's arguments go back
to JSON and through ferrotool's call pipeline; invoked with a tool call, the tool answers with a
``ToolMessage`` whose content is the result's text (text and ``image_url`` blocks when it has
images), whose ``artifact`` is the `ToolResultBlock` itself, failed or not (with
``response_format="content"``, a failed one's only), and whose ``status`` is ``error`` for
``ERROR``, ``DENIED`` and ``INTERRUPTED`` results. Invoked with bare arguments,
it answers with the content alone; a failed call then raises ``ToolException`` (which LangChain
turns into the text, as ``handle_tool_error`` is on). A call waiting for approval or for the
client answers with its text: LangChain core has no suspension of its own (LangGraph's
``interrupt`` is where an application would wire one, from the artifact).

A sync ``invoke`` runs the call on the calling thread; inside a running event loop (asyncio or
trio), where a call that needs a loop of its own cannot start one, it runs on a worker thread
of its own while the caller waits, as LangChain runs async callbacks from sync code.

Import: `from_langchain(tool)` is a ferrotool tool whose schema is the LangChain tool's
``tool_call_schema`` and whose call awaits ``ainvoke`` with the validated arguments.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Literal, cast, final

import orjson

from ferrotool._definitions.wire import ERROR_STATES, image_url, json_text
from ferrotool._execution.loopback import running_trio
from ferrotool._extras import requires_extra
from ferrotool._registry.view import ToolView
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import ImageBlock, JsonBlock, TextBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.errors import InteropError
from ferrotool.interop._common import (
    ToolSource,
    call_id,
    content_of,
    run,
    schema_of,
    spec_of,
    view_of,
)

with requires_extra("ferrotool.interop.langchain", "langchain"):
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, ToolException
    from pydantic import BaseModel, ConfigDict

_ARGUMENTS = "ferrotool_arguments"
_CALL_ID = "ferrotool_call_id"


def _content(result: ToolResultBlock) -> str | list[str | dict[str, Any]]:
    """A result as a ``ToolMessage``'s content: text, or text and image blocks."""
    if not any(isinstance(block, ImageBlock) for block in result.output):
        return result.content
    parts: list[str | dict[str, Any]] = []
    for block in result.output:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, JsonBlock):
            parts.append({"type": "text", "text": json_text(block.value)})
        else:
            parts.append({"type": "image_url", "image_url": {"url": image_url(block)}})
    return parts


def _in_event_loop() -> bool:
    """Whether this thread runs an event loop (asyncio or trio) now."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return running_trio() is not None
    return True


def _outside_loop(
    view: ToolView, call: ToolUseBlock, context: RuntimeContext | None
) -> ToolResultBlock:
    """`ToolView.call_tool_sync` in a copy of a loop's context, on a thread without a loop.

    The copy keeps the caller's context variables but one: sniffio's, which says which async
    library runs (a thread without a loop runs none, and anyio starts a loop only there).
    """
    sniffio = sys.modules.get("sniffio")
    if sniffio is not None:
        sniffio.current_async_library_cvar.set(None)
    return view.call_tool_sync(call, context)


def _call_sync(
    view: ToolView, call: ToolUseBlock, context: RuntimeContext | None
) -> ToolResultBlock:
    """`ToolView.call_tool_sync`, on a worker thread when this one runs an event loop."""
    if not _in_event_loop():
        return view.call_tool_sync(call, context)
    with ThreadPoolExecutor(1, thread_name_prefix="ferrotool-langchain") as worker:
        copied = contextvars.copy_context()
        return worker.submit(copied.run, _outside_loop, view, call, context).result()


@final
class FerrotoolTool(BaseTool):
    """A ferrotool tool as a LangChain tool (see the module). Build it with `langchain_tool`."""

    model_config: ClassVar[ConfigDict] = ConfigDict(arbitrary_types_allowed=True)

    view: ToolView
    context: RuntimeContext | None = None
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        # The arguments stay one JSON object, and the call's id comes along.
        args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
        arguments = kwargs if not args else {"input": args[0]}
        return (), {_ARGUMENTS: arguments, _CALL_ID: tool_call_id}

    def _call(self, kwargs: dict[str, Any]) -> ToolUseBlock:
        arguments = orjson.dumps(kwargs[_ARGUMENTS]).decode()
        return ToolUseBlock(call_id(kwargs.get(_CALL_ID)), self.name, arguments)

    def _answer(self, result: ToolResultBlock, answered: str | None) -> object:
        """What LangChain makes the answer from: the content, and the artifact if it keeps one.

        A failure answering a tool call is an error ``ToolMessage`` with the artifact, whatever
        the response format; without a call it raises ``ToolException`` (see the module).
        """
        if result.state in ERROR_STATES:
            if answered is None or not self.handle_tool_error:
                raise ToolException(result.content)
            content: object = ToolMessage(
                _content(result),
                artifact=result,
                tool_call_id=answered,
                name=self.name,
                status="error",
            )
        else:
            content = _content(result)
        return (content, result) if self.response_format == "content_and_artifact" else content

    def _run(self, **kwargs: Any) -> object:
        call = self._call(kwargs)
        return self._answer(_call_sync(self.view, call, self.context), kwargs.get(_CALL_ID))

    async def _arun(self, **kwargs: Any) -> object:
        call = self._call(kwargs)
        return self._answer(await run(self.view, call, self.context), kwargs.get(_CALL_ID))


def langchain_tool(
    source: ToolSource, name: str, context: RuntimeContext | None = None
) -> FerrotoolTool:
    """One ferrotool tool as a LangChain ``BaseTool`` (its calls run through ``source``).

    Raises:
        InteropError: ``source`` shows no tool ``name``.
    """
    view = view_of(source)
    spec = spec_of(view, name)
    return FerrotoolTool(
        name=spec.name,
        description=spec.description,
        args_schema=schema_of(spec),
        view=view,
        context=context,
    )


def langchain_tools(
    source: ToolSource,
    context: RuntimeContext | None = None,
    *,
    names: Sequence[str] | None = None,
) -> list[FerrotoolTool]:
    """Every tool of ``source`` (or only ``names``) as LangChain tools."""
    view = view_of(source)
    return [langchain_tool(view, name, context) for name in (names or view.names())]


def _schema(imported: BaseTool) -> dict[str, JsonValue]:
    schema = imported.tool_call_schema
    if isinstance(schema, dict):
        return cast("dict[str, JsonValue]", dict(schema))
    if issubclass(schema, BaseModel):
        derived: dict[str, JsonValue] = schema.model_json_schema()
        derived.pop("title", None)
        return derived
    raise InteropError(
        f"tool {imported.name!r}: a pydantic v1 args_schema cannot be read; use pydantic v2"
    )


def _output(value: object) -> object:
    if isinstance(value, ToolMessage):
        if value.status == "error":
            return ToolResultBlock.error(str(value.content))
        value = value.content
    return content_of(value)


@final
class _LangChainTool(ToolBase[dict[str, JsonValue]]):
    """A LangChain tool, run by ferrotool."""

    def __init__(self, imported: BaseTool) -> None:
        self._tool = imported
        super().__init__(
            name=imported.name,
            description=imported.description or None,
            input_schema=_schema(imported),
        )

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> object:
        return _output(await self._tool.ainvoke(param.input))


def from_langchain(imported: BaseTool) -> ToolBase[dict[str, JsonValue]]:
    """A LangChain tool as a ferrotool tool, to register in a `Toolkit`.

    Its JSON Schema is the tool's ``tool_call_schema`` (what LangChain shows a model); a call
    is validated by ferrotool, then awaits ``ainvoke`` with the arguments. A ``ToolException``
    the tool does not handle becomes an error result, as any exception of a tool does.
    """
    return _LangChainTool(imported)


__all__ = ["FerrotoolTool", "from_langchain", "langchain_tool", "langchain_tools"]
