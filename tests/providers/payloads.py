"""Provider wire payloads for the tests: what the model APIs answer, as JSON values."""

from __future__ import annotations

from typing import Any

# -- OpenAI Chat Completions --


def completion(*calls: tuple[str, str, str], text: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for id, name, arguments in calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if calls else "stop",
                "message": message,
            }
        ],
    }


def chunk(tool_calls: list[dict[str, Any]] | None, finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"role": "assistant"}
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def piece(index: int, arguments: str, id: str | None = None, name: str | None = None) -> Any:
    function: dict[str, Any] = {"arguments": arguments}
    if name:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "function": function}
    if id:
        call |= {"id": id, "type": "function"}
    return call


# -- Anthropic Messages --


def message(*content: dict[str, Any]) -> dict[str, Any]:
    tool_use = any(block["type"] == "tool_use" for block in content)
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": list(content),
        "stop_reason": "tool_use" if tool_use else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def tool_use(id: str, name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def sse(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}


def json_delta(index: int, text: str) -> tuple[str, dict[str, Any]]:
    return sse(
        "content_block_delta",
        index=index,
        delta={"type": "input_json_delta", "partial_json": text},
    )


def block_delta(index: int, **delta: Any) -> tuple[str, dict[str, Any]]:
    """A ``content_block_delta`` event (``text_delta``, ``thinking_delta``, ``signature_delta``)."""
    return sse("content_block_delta", index=index, delta=delta)


def streamed(*blocks: tuple[dict[str, Any], list[dict[str, Any]]], stop: str) -> list[Any]:
    """A whole Messages stream: each block's start (its empty form), its deltas, its stop."""
    events: list[Any] = [sse("message_start", message=message() | {"stop_reason": None})]
    for index, (start, deltas) in enumerate(blocks):
        events.append(sse("content_block_start", index=index, content_block=start))
        events += [block_delta(index, **delta) for delta in deltas]
        events.append(sse("content_block_stop", index=index))
    events.append(sse("message_delta", delta={"stop_reason": stop}, usage={"output_tokens": 5}))
    events.append(sse("message_stop"))
    return events


# -- OpenAI Responses --


def response(*output: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    """A ``Response`` with these output items."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": status,
        "output": list(output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A ``function_call`` output item."""
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def output_message(text: str) -> dict[str, Any]:
    """An assistant ``message`` output item of one ``output_text``."""
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """A streamed Responses event."""
    return kind, {"type": kind, "sequence_number": 0, **fields}


# -- Gemini --


def candidate(*parts: dict[str, Any], finish: str | None = "STOP") -> dict[str, Any]:
    """A ``GenerateContentResponse`` of one candidate (a streamed chunk when ``finish`` is None)."""
    one: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        one["finishReason"] = finish
    return {
        "candidates": [one],
        "usageMetadata": {"promptTokenCount": 1, "totalTokenCount": 2},
    }
