"""What the framework bridges share: where exported calls run, and what imported tools return.

An exported tool calls through a `ToolView` (a toolkit's or registry's default view, or a
request's), so the other framework's calls get ferrotool's validation, permission gate,
injection, timeouts and result conversion. An imported tool is a `ToolBase` whose schema is the
other framework's and whose ``call`` runs the other framework's function; what that returns
becomes ferrotool content here.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable

import orjson

from ferrotool._execution import outcomes
from ferrotool._execution.pipeline import CallScope, gate, parse
from ferrotool._registry.source import ToolSource, view_of
from ferrotool._registry.view import ToolView
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import ContentBlock, ImageBlock, TextBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import ToolSpec
from ferrotool.errors import InteropError


def spec_of(view: ToolView, name: str) -> ToolSpec:
    """The spec of a tool the view shows.

    Raises:
        InteropError: The view shows no tool of that name.
    """
    spec = view.get_spec(name)
    if spec is None:
        raise InteropError(f"no tool {name!r} in this view: it has {', '.join(view.names())}")
    return spec


def schema_of(spec: ToolSpec) -> dict[str, JsonValue]:
    """A spec's argument schema as a fresh dict."""
    schema: dict[str, JsonValue] = orjson.loads(spec.parameters_json)
    return schema


def call_id(given: str | None) -> str:
    """The call's id, or a fresh one when the framework has none to give."""
    return given or f"call_{uuid.uuid4().hex[:24]}"


async def run(
    view: ToolView,
    call: ToolUseBlock,
    context: RuntimeContext | None,
    *,
    approved: bool = False,
) -> ToolResultBlock:
    """Run one call through the view's pipeline; the result is stamped and final.

    It is settled as a batch settles its results (`ferrotool._execution.outcomes.settled`).
    """
    return outcomes.settled(await view.run_one(view.scope(call, context, approved=approved)), call)


async def asks(view: ToolView, call: ToolUseBlock, context: RuntimeContext | None) -> bool:
    """Whether the permission gate would ask a person before running this call.

    Invalid arguments never ask (the call's own result will say what is wrong).
    """
    tool = view.resolve(call.name)
    if tool is None:
        return False
    arguments = parse(tool, call)
    if isinstance(arguments, ToolResultBlock):
        return False
    scope = CallScope.of(call, view.runner, context, None, None, permissions=view.state.permissions)
    stop = await gate(tool, arguments, scope)
    return isinstance(stop, ToolResultBlock) and stop.needs_approval


def refuse_external(spec: ToolSpec, framework: str) -> None:
    """Raise for an external tool handed to a framework that cannot defer a call.

    Raises:
        InteropError: Always, naming the tool.
    """
    if spec.external:
        raise InteropError(
            f"tool {spec.name!r} runs on the client (external): {framework} has no way to defer "
            "a call to a client, so it cannot be exported there"
        )


def content_of(value: object) -> object:
    """What an imported tool's return value is as ferrotool content (or the value, as JSON).

    Text stays text, content blocks stay blocks, a list of text and blocks becomes blocks;
    anything else is returned as it is, for ferrotool's own conversion (records, dicts and
    lists to JSON text with the structured value kept).
    """
    if isinstance(value, (str, TextBlock, ImageBlock)):
        return value
    if (
        isinstance(value, list)
        and value
        and all(isinstance(item, (str, TextBlock, ImageBlock)) for item in value)
    ):
        return [TextBlock(item) if isinstance(item, str) else item for item in value]
    return value


def image_block(data: bytes, media_type: str) -> ImageBlock:
    """An image from raw bytes."""
    return ImageBlock(media_type=media_type, data=base64.b64encode(data).decode())


def text_of(blocks: Iterable[ContentBlock]) -> str:
    """The text blocks of some content, joined by newlines."""
    return "\n".join(block.text for block in blocks if isinstance(block, TextBlock))


__all__ = [
    "ToolSource",
    "asks",
    "call_id",
    "content_of",
    "image_block",
    "refuse_external",
    "run",
    "schema_of",
    "spec_of",
    "text_of",
    "view_of",
]
