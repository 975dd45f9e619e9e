"""Google Gemini: ``function_call`` parts in, ``function_response`` parts out.

::

    batch = await view.call_tools(gemini.tool_calls(response), context)
    contents += [gemini.model_content(response), gemini.user_turn(batch)]

`tool_calls` reads a ``GenerateContentResponse`` or ``Content`` of google-genai, a list of
parts, or the same as dicts (the SDK's ``function_call`` keys or the REST API's
``functionCall``); a candidate's first content is read. `result_messages` writes one
``function_response`` part per result, in order; `tools` is the request's ``tools=`` list (one
``Tool`` holding every function declaration). `model_content` is the model's ``Content`` as it
was, to send back (each part's ``thought_signature`` with it, as Gemini requires of a thinking
model's function calls); `assistant` writes text and calls the model gave elsewhere.

Gemini often leaves a call's ``id`` out and matches responses to calls by name and order. Such a
call gets the id ``gemini-call-<n>`` (its position in the response) so ferrotool can pair its
result, and `result_messages` leaves that id out again.

How results map (``function_response.response``):

- ``SUCCESS`` and ``RUNNING``: ``{"output": ...}``, the structured value when a successful tool
  returned one (a record, dict or list), else the text (JSON blocks as JSON text);
- ``ERROR``, ``DENIED`` and ``INTERRUPTED``: ``{"error": text}``;
- images: the response's ``parts``, ``inline_data`` for base64 data, ``file_data`` for a URL.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, TypeAlias, cast

import orjson

from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.content import ImageBlock
from ferrotool.errors import ProviderShapeError
from ferrotool.providers._results import (
    ERROR_STATES,
    field,
    items,
    result_id,
    result_name,
    results_of,
    split,
)

if TYPE_CHECKING:
    from google.genai.types import (
        Content,
        ContentDict,
        FunctionCallDict,
        FunctionResponseDict,
        FunctionResponsePartDict,
        PartDict,
        ToolUnion,
    )

    from ferrotool._execution.batch import ToolBatch
    from ferrotool._registry.listing import ToolLists
else:
    Content: TypeAlias = object
    ContentDict: TypeAlias = dict
    FunctionCallDict: TypeAlias = dict
    FunctionResponseDict: TypeAlias = dict
    FunctionResponsePartDict: TypeAlias = dict
    PartDict: TypeAlias = dict
    ToolUnion: TypeAlias = object

GENERATED_ID: Final = "gemini-call-"
"""The prefix of the ids given to Gemini calls that came without one."""

_block: Final = tuple.__new__
"""Builds a `ToolUseBlock` without its Python ``__new__`` frame (this runs per call)."""
_WHAT: Final = "a Gemini response"


def _parts(source: object) -> Iterable[object]:
    if isinstance(source, (list, tuple)):
        return source
    return items(_content(source), "parts", _WHAT)


def _content(source: object) -> object:
    """A response's first candidate's content; a content itself."""
    candidates = field(source, "candidates")
    if candidates is None:
        return source
    if not isinstance(candidates, (list, tuple)) or not candidates:
        raise ProviderShapeError(f"{_WHAT} has no candidates: {source!r:.200}")
    return field(candidates[0], "content")


def model_content(response: object) -> Content | ContentDict:
    """The model's content of a response (its first candidate's), as it was, to send back.

    Args:
        response: A ``GenerateContentResponse`` of google-genai (or a dict of one); a
            ``Content`` is returned as it is.

    Returns:
        The ``Content`` (or content dict): its parts keep their ``thought`` flags and
        ``thought_signature`` values, which a thinking model needs back with its calls.

    Raises:
        ProviderShapeError: The response has no candidate with a content.
    """
    content = _content(response)
    if content is None:
        raise ProviderShapeError(f"{_WHAT} has no content: {response!r:.200}")
    return cast("Content | ContentDict", content)


def tool_calls(response: object) -> tuple[ToolUseBlock, ...]:
    """The function calls of a response, in order.

    Args:
        response: A ``GenerateContentResponse`` or ``Content`` of google-genai, a list of parts,
            or any of these as dicts, in the SDK's keys or the REST API's.

    Returns:
        One `ToolUseBlock` per ``function_call`` part, its ``args`` as JSON text.

    Raises:
        ProviderShapeError: The value is not a response, or a call lacks its name.
    """
    calls = []
    for index, part in enumerate(_parts(response)):
        if isinstance(part, dict):
            call = part.get("function_call") or part.get("functionCall")
        else:
            call = getattr(part, "function_call", None)
        if call is not None:
            calls.append(_call(call, index))
    return tuple(calls)


def _call(call: object, index: int) -> ToolUseBlock:
    """One function call (read with direct lookups: this runs per call)."""
    if isinstance(call, dict):
        call_id, name, arguments = call.get("id"), call.get("name"), call.get("args")
    else:
        call_id, name = getattr(call, "id", None), getattr(call, "name", None)
        arguments = getattr(call, "args", None)
    if not isinstance(name, str):
        raise ProviderShapeError(f"{_WHAT}: a function call needs a string name: {call!r:.200}")
    return _block(
        ToolUseBlock,
        (
            call_id if isinstance(call_id, str) and call_id else f"{GENERATED_ID}{index}",
            name,
            "{}" if arguments is None else orjson.dumps(arguments).decode(),
        ),
    )


def _image(image: ImageBlock) -> FunctionResponsePartDict:
    if image.url is not None:
        return {"file_data": {"mime_type": image.media_type, "file_uri": image.url}}
    return {
        "inline_data": {"mime_type": image.media_type, "data": base64.b64decode(image.data or "")}
    }


def result_messages(results: ToolBatch | Iterable[ToolResultBlock]) -> list[PartDict]:
    """The ``function_response`` parts answering the calls, in order (see the module).

    Args:
        results: A `ToolBatch` or its results, each stamped with its call's id and name.

    Raises:
        ProviderShapeError: A result has no call id or tool name.
    """
    parts: list[PartDict] = []
    for result in results_of(results):
        call_id = result_id(result)
        text, images = split(result)
        if result.state in ERROR_STATES:
            payload: dict[str, object] = {"error": text}
        elif result.structured is not None and result.state is ToolResultState.SUCCESS:
            payload = {"output": result.structured}
        else:
            payload = {"output": text}
        response: FunctionResponseDict = {"name": result_name(result), "response": payload}
        if not call_id.startswith(GENERATED_ID):
            response["id"] = call_id
        if images:
            response["parts"] = [_image(image) for image in images]
        parts.append({"function_response": response})
    return parts


def user_turn(results: ToolBatch | Iterable[ToolResultBlock]) -> ContentDict:
    """The ``user`` content that carries every result of the model's turn."""
    return {"role": "user", "parts": result_messages(results)}


def assistant(text: str, calls: Iterable[ToolUseBlock]) -> ContentDict:
    """A ``model`` content of text and ``function_call`` parts.

    For a transcript that does not hold the model's own response (see `model_content`). A
    call's arguments go back as the object the model wrote; an id that ferrotool made up
    (`GENERATED_ID`) is left out, as Gemini sent none.
    """
    parts: list[PartDict] = [{"text": text}] if text else []
    for call in calls:
        function_call: FunctionCallDict = {"name": call.name, "args": dict(call.input)}
        if not call.id.startswith(GENERATED_ID):
            function_call["id"] = call.id
        parts.append({"function_call": function_call})
    return {"role": "model", "parts": parts}


def tools(source: ToolLists, *, strict: bool = False) -> list[ToolUnion]:
    """The ``tools=`` list of a request: one ``Tool`` with every function declaration.

    Args:
        source: A `ToolView`, `Registry` or `Toolkit`.
        strict: Warn for a tool whose declaration differs materially from its schema (Gemini
            has no per-tool strict mode).

    Returns:
        google-genai's ``Tool`` (none without a declaration), in the list type of
        ``GenerateContentConfig(tools=...)``. The declarations alone, as dicts of the wire
        format, are ``source.schemas("gemini")``.
    """
    declarations = source.schemas("gemini", strict=strict)
    if not declarations:
        return []
    from google.genai.types import Tool  # the SDK's class, needed here only

    return [Tool.model_validate({"function_declarations": declarations})]


__all__ = [
    "GENERATED_ID",
    "assistant",
    "model_content",
    "result_messages",
    "tool_calls",
    "tools",
    "user_turn",
]
