"""MCP values to ferrotool values and back: tool names, content blocks, results.

The client side turns an MCP server's ``CallToolResult`` into a `ToolResultBlock`; the server
side (`ferrotool serve`) turns a `ToolResultBlock` into the wire form of a ``CallToolResult``.
Both directions keep every block: what a ferrotool block cannot hold as such (audio, a binary
resource, a resource link) travels as a `JsonBlock` holding the MCP block itself.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, final

import mcp_types as types
import orjson

from ferrotool._values.calls import ToolResultBlock, ToolResultState
from ferrotool._values.content import ContentBlock, ImageBlock, JsonBlock, TextBlock
from ferrotool._values.json import JsonValue

PREFIX: Final = "mcp__"
SEPARATOR: Final = "__"
MAX_NAME: Final = 64
SERVER_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")
"""An MCP client's name: it becomes part of every tool name, so it follows the tool-name
alphabet, and leaves room for the tool's own name within the 64 characters."""

SESSION_META_KEY: Final = "io.ferrotool/session"
"""The ``_meta`` entry that carries a stateless (2026-07-28) client's session id: `ferrotool
serve` puts it in its results, and ferrotool's client sends it back with its requests."""

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")
_DIGEST: Final = 8
EMPTY_SCHEMA: Final[Mapping[str, JsonValue]] = {"type": "object", "properties": {}, "required": []}
"""The input schema of a tool that declares none (AgentScope's conversion)."""


def check_server_name(name: str) -> str:
    """Return ``name`` if it may name an MCP client, else raise `ValueError` saying why."""
    if not name or not name.strip():
        raise ValueError("MCP client name cannot be null or empty")
    if SERVER_NAME.fullmatch(name) is None:
        raise ValueError(
            f"invalid MCP client name {name!r}: use 1 to 32 letters, digits, '_' or '-' "
            "(it becomes part of every tool name, mcp__{server}__{tool})"
        )
    return name


def tool_name(server: str, tool: str) -> str:
    """The ferrotool name of an MCP server's tool: ``mcp__{server}__{tool}``.

    A tool name that already follows the rule (``^[A-Za-z0-9_-]{1,64}$`` once prefixed) is
    kept. Any other one has each character outside ``A-Z a-z 0-9 _ -`` replaced by ``_``, is
    cut to fit, and ends with ``_`` and 8 hex digits of the SHA-256 of the original name: the
    name depends on the tool's own name only (not on the order or the other tools a server
    lists), and two names that read alike once cleaned (``a.b`` and ``a_b``) stay apart.
    """
    head = f"{PREFIX}{server}{SEPARATOR}"
    if _UNSAFE.search(tool) is None and tool and len(head) + len(tool) <= MAX_NAME:
        return head + tool
    digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST]
    room = MAX_NAME - len(head) - 1 - _DIGEST
    cleaned = _UNSAFE.sub("_", tool)[:room]
    return f"{head}{cleaned}_{digest}"


@final
@dataclass(frozen=True, slots=True)
class RejectedTool:
    """A tool of a server's listing that is not registered, and why.

    Attributes:
        name: The tool's name as the server lists it.
        reason: Why it is left out (its schema does not compile, its name is listed twice...).
    """

    name: str
    reason: str


# --- MCP result -> ToolResultBlock ---------------------------------------------------------------


def content_block(block: types.ContentBlock) -> ContentBlock | None:
    """One MCP content block as a ferrotool block (``None``: an image without data)."""
    if isinstance(block, types.TextContent):
        return TextBlock(block.text)
    if isinstance(block, types.ImageContent):
        return ImageBlock(media_type=block.mime_type, data=block.data) if block.data else None
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return TextBlock(resource.text)
        mime = resource.mime_type or ""
        if mime.startswith("image/") and resource.blob:
            return ImageBlock(media_type=mime, data=resource.blob)
    dumped: dict[str, JsonValue] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return JsonBlock(dumped)


def result_block(
    result: types.CallToolResult, *, structured_error: str | None = None
) -> ToolResultBlock:
    """A server's ``CallToolResult`` as the call's result.

    ``isError`` gives an ``ERROR`` result whose text is the server's texts joined by newlines
    (``Unknown error`` when it sent none); otherwise the blocks are kept in order (an empty
    result is one empty text), with ``structuredContent`` as `ToolResultBlock.structured`.

    Args:
        result: What the server answered.
        structured_error: Why the structured content does not match the tool's output schema,
            if it does not: the result is then an ``ERROR`` saying so.
    """
    if result.is_error:
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        return ToolResultBlock.error("\n".join(texts) or "Unknown error")
    if structured_error is not None:
        return ToolResultBlock.error(structured_error)
    blocks = tuple(
        converted for block in result.content if (converted := content_block(block)) is not None
    )
    return ToolResultBlock(
        output=blocks or (TextBlock(""),),
        state=ToolResultState.SUCCESS,
        structured=result.structured_content,
    )


# --- ToolResultBlock -> MCP result (the server side) --------------------------------------------


def wire_content(blocks: Iterable[ContentBlock]) -> list[JsonValue]:
    """A result's blocks in MCP's wire form.

    A `JsonBlock` holding an MCP block (a ``type`` MCP knows) goes back as that block; any other
    `JsonBlock` becomes its JSON text, the form every MCP client reads. An image given by URL
    becomes a resource link.
    """
    out: list[JsonValue] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            if block.data is not None:
                out.append({"type": "image", "data": block.data, "mimeType": block.media_type})
            else:
                link: dict[str, JsonValue] = {"type": "resource_link", "name": "image"}
                link.update({"uri": block.url, "mimeType": block.media_type})
                out.append(link)
        else:
            value = block.value
            if isinstance(value, dict) and value.get("type") in _MCP_BLOCKS:
                out.append(value)
            else:
                out.append({"type": "text", "text": _json_text(value)})
    return out


_MCP_BLOCKS: Final = frozenset({"audio", "resource", "resource_link"})


def _json_text(value: JsonValue) -> str:
    return orjson.dumps(value).decode()


def wire_result(result: ToolResultBlock, *, structured: bool = False) -> dict[str, JsonValue]:
    """A `ToolResultBlock` as the wire form of a ``CallToolResult``.

    Every state but ``SUCCESS`` is ``isError`` (a denial, a timeout, an interrupted call are
    all failures to the client), with the result's text. The structured value goes out as
    ``structuredContent`` when the tool declares an output schema (``structured``) and the
    value is an object, as MCP requires.
    """
    body: dict[str, JsonValue] = {"content": wire_content(result.output)}
    if result.state is not ToolResultState.SUCCESS:
        body["isError"] = True
    elif structured and isinstance(result.structured, dict):
        body["structuredContent"] = result.structured
    return body


def texts(blocks: Sequence[ContentBlock]) -> str:
    """The text blocks joined by newlines."""
    return "\n".join(block.text for block in blocks if isinstance(block, TextBlock))


__all__ = [
    "EMPTY_SCHEMA",
    "SESSION_META_KEY",
    "RejectedTool",
    "check_server_name",
    "content_block",
    "result_block",
    "texts",
    "tool_name",
    "wire_content",
    "wire_result",
]
