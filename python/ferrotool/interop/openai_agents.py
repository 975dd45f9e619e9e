"""The OpenAI Agents SDK both ways: ferrotool tools as ``FunctionTool`` objects, and back.

Export: `function_tools(source)` gives one ``agents.FunctionTool`` per tool a view shows
(`function_tool` one of them). The SDK hands over the model's raw JSON arguments, which go
through ferrotool's call pipeline as they are; the result comes back as the SDK's tool output
(the text, or the text and ``ToolOutputImage`` values), errors included as their text (the SDK
has no error flag for a tool output). A tool whose permission check asks is marked
``needs_approval`` with a check that asks ferrotool's permission gate for each call: the SDK
interrupts the run for the person, and an approved call runs without asking again. External
(client) tools cannot be exported: the SDK has no way to defer a call to a client.

Import: `from_openai_agents(tool)` is a ferrotool tool whose schema is the ``FunctionTool``'s
and whose call hands the raw arguments to its ``on_invoke_tool``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, final

import orjson

from ferrotool._definitions.formats import tool_definition
from ferrotool._definitions.wire import image_url, json_text
from ferrotool._extras import requires_extra
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import ContentBlock, ImageBlock, TextBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool.interop._common import (
    ToolSource,
    asks,
    call_id,
    content_of,
    refuse_external,
    run,
    spec_of,
    view_of,
)

with requires_extra("ferrotool.interop.openai_agents", "openai-agents"):
    from agents import FunctionTool, RunContextWrapper, Tool, ToolOutputImage, ToolOutputText
    from agents.tool_context import ToolContext


def _output(result: ToolResultBlock) -> str | list[ToolOutputText | ToolOutputImage]:
    """A result as the SDK's tool output: its text, or text and images."""
    if not any(isinstance(block, ImageBlock) for block in result.output):
        return result.content
    parts: list[ToolOutputText | ToolOutputImage] = []
    for block in result.output:
        if isinstance(block, TextBlock):
            parts.append(ToolOutputText(text=block.text))
        elif isinstance(block, ImageBlock):
            parts.append(ToolOutputImage(image_url=image_url(block)))
        else:
            parts.append(ToolOutputText(text=json_text(block.value)))
    return parts


def function_tool(
    source: ToolSource,
    name: str,
    context: RuntimeContext | None = None,
    *,
    strict: bool = True,
) -> FunctionTool:
    """One ferrotool tool as an ``agents.FunctionTool`` (its calls run through ``source``).

    Args:
        source: A `ToolView`, or a `Toolkit` or `Registry` (their default view).
        name: The tool.
        context: The runtime context of every call.
        strict: Send ferrotool's strict schema (the SDK's default is strict): optional
            arguments become required and nullable, and a ``null`` reads as left out. A tool
            that cannot be made strict faithfully goes non-strict, with a
            `StrictSchemaWarning`; the tool's own ``strict`` wins over this.

    Raises:
        InteropError: ``source`` shows no tool ``name``, or it is an external tool.
    """
    view = view_of(source)
    spec = spec_of(view, name)
    refuse_external(spec, "the OpenAI Agents SDK")
    definition = tool_definition(spec, "openai_responses", strict=strict)
    parameters = definition.definition()["parameters"]
    assert isinstance(parameters, dict)

    async def invoke(ctx: ToolContext[Any], arguments: str) -> object:
        call = ToolUseBlock(call_id(ctx.tool_call_id), name, arguments)
        approved = ctx.is_tool_approved(name, call.id) is True
        return _output(await run(view, call, context, approved=approved))

    async def needs_approval(
        ctx: RunContextWrapper[Any], arguments: dict[str, Any], tool_call_id: str
    ) -> bool:
        call = ToolUseBlock(tool_call_id, name, orjson.dumps(arguments).decode())
        return await asks(view, call, context)

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=parameters,
        on_invoke_tool=invoke,
        strict_json_schema=definition.strict,
        needs_approval=needs_approval,
    )


def function_tools(
    source: ToolSource,
    context: RuntimeContext | None = None,
    *,
    names: Sequence[str] | None = None,
    strict: bool = True,
) -> list[Tool]:
    """Every tool of ``source`` (or only ``names``) as ``FunctionTool`` objects.

    The list is typed as ``Agent(tools=...)`` takes it (``agents.Tool``); `function_tool` gives
    one tool typed as ``FunctionTool``.

    External (client) tools are left out (see the module).
    """
    view = view_of(source)
    chosen = view.names() if names is None else tuple(names)
    return [
        function_tool(view, name, context, strict=strict)
        for name in chosen
        if names is not None or not spec_of(view, name).external
    ]


def _content(value: object) -> object:
    """An imported tool's output as ferrotool content (the SDK's output types understood)."""
    if isinstance(value, ToolOutputText):
        return TextBlock(value.text)
    if isinstance(value, ToolOutputImage) and value.image_url:
        return _image(value.image_url)
    if isinstance(value, list) and all(
        isinstance(item, (ToolOutputText, ToolOutputImage, str)) for item in value
    ):
        blocks: list[ContentBlock] = []
        for item in value:
            converted = _content(item)
            if isinstance(converted, (TextBlock, ImageBlock)):
                blocks.append(converted)
            elif isinstance(converted, str):
                blocks.append(TextBlock(converted))
        return blocks
    return content_of(value)


def _image(url: str) -> ImageBlock:
    """An image output: a data URL becomes data, any other URL stays a URL."""
    if url.startswith("data:") and ";base64," in url:
        media_type, _, data = url[5:].partition(";base64,")
        return ImageBlock(media_type=media_type, data=data)
    return ImageBlock(media_type="image/*", url=url)


@final
class _AgentsTool(ToolBase[dict[str, JsonValue]]):
    """An OpenAI Agents SDK function tool, run by ferrotool."""

    def __init__(self, imported: FunctionTool) -> None:
        self._tool = imported
        super().__init__(
            name=imported.name,
            description=imported.description or None,
            input_schema=imported.params_json_schema,
            strict=imported.strict_json_schema,
            timeout=imported.timeout_seconds,
        )

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> object:
        call = param.call
        ctx: ToolContext[RuntimeContext] = ToolContext(
            context=param.context,
            tool_name=self.name,
            tool_call_id=call.id,
            tool_arguments=call.arguments,
        )
        return _content(await self._tool.on_invoke_tool(ctx, call.arguments or "{}"))


def from_openai_agents(imported: FunctionTool) -> ToolBase[dict[str, JsonValue]]:
    """An OpenAI Agents SDK ``FunctionTool`` as a ferrotool tool, to register in a `Toolkit`.

    Its JSON Schema and strictness are the ``FunctionTool``'s; a call is validated by
    ferrotool, then its raw arguments go to ``on_invoke_tool`` with a ``ToolContext`` whose
    ``context`` is the call's `RuntimeContext`. Text and image outputs become content blocks;
    a tool whose SDK failure handler turned an exception into text answers with that text.
    """
    return _AgentsTool(imported)


__all__ = ["from_openai_agents", "function_tool", "function_tools"]
