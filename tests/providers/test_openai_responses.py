"""The OpenAI Responses adapter, through the openai SDK against a local server."""

from __future__ import annotations

from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.responses import Response, ResponseInputItemParam
from pydantic import TypeAdapter

from ferrotool import ProviderShapeError, ToolUseBlock
from ferrotool.providers import ToolCallStream, openai_responses
from providers.common import PNG, TEXTS, results_of_every_state, toolkit
from providers.wire import Events, ModelServer, Reply

ITEMS = TypeAdapter(list[ResponseInputItemParam])


def response(*output: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": "completed",
        "output": list(output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
TWO_CALLS = response(
    REASONING,
    function_call("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
    function_call("call_2", "lookup", '{"sku": "A1"}'),
)
ANSWER = response(
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
    }
)
EXPECTED = (
    ToolUseBlock("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
    ToolUseBlock("call_2", "lookup", '{"sku": "A1"}'),
)


def test_calls_read_alike_from_the_sdk_object_and_the_wire_dict() -> None:
    sdk = Response.model_validate(TWO_CALLS)
    assert openai_responses.tool_calls(sdk) == EXPECTED
    assert openai_responses.tool_calls(sdk.output) == EXPECTED
    assert openai_responses.tool_calls(TWO_CALLS) == EXPECTED
    assert openai_responses.tool_calls(TWO_CALLS["output"][1]) == EXPECTED[:1]
    assert openai_responses.tool_calls(ANSWER) == ()


async def test_a_round_trip_through_the_sdk() -> None:
    kit = toolkit()
    with ModelServer([Reply(TWO_CALLS), Reply(ANSWER)]) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as openai:
            tools = openai_responses.tools(kit, strict=True)
            first = await openai.responses.create(model="gpt-test", input="Go", tools=tools)
            batch = await kit.call_tools(openai_responses.tool_calls(first))
            outputs = openai_responses.result_messages(batch)
            final = await openai.responses.create(
                model="gpt-test", input=outputs, previous_response_id=first.id, tools=tools
            )
    assert final.output_text == "Done."
    request = server.bodies()[1]
    assert request["previous_response_id"] == "resp_1"
    assert request["input"] == [
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": "Paris: sunny for 3 day(s)",
        },
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": '{"sku":"A1","price":9.5}',
        },
    ]
    assert server.bodies()[0]["tools"][0] == {**tools[0], "strict": True}


async def test_every_state_is_its_text_and_images_are_input_images() -> None:
    results = results_of_every_state()
    outputs = openai_responses.result_messages(results)
    ITEMS.validate_python(outputs)
    plain: list[dict[str, Any]] = [dict(item) for item in outputs]
    assert [o["call_id"] for o in plain] == [r.id for r in results]
    for item in plain:
        if item["call_id"] not in ("r8", "r9"):
            assert item["output"] == TEXTS[item["call_id"] or ""]
    assert plain[7]["output"] == [
        {"type": "input_text", "text": "chart"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
    ]
    assert plain[8]["output"] == [
        {"type": "input_text", "text": ""},
        {"type": "input_image", "image_url": "https://example.com/a.png"},
    ]
    with ModelServer([Reply(ANSWER)]) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as openai:
            await openai.responses.create(model="gpt-test", input=outputs)
    assert server.bodies()[0]["input"] == outputs


def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, "sequence_number": 0, **fields}


async def test_streamed_arguments_gather_into_the_same_calls() -> None:
    added = function_call("call_1", "get_weather", "") | {"status": "in_progress"}
    events = [
        event("response.created", response=response() | {"status": "in_progress"}),
        event("response.output_item.added", output_index=0, item=REASONING),
        event("response.output_item.added", output_index=1, item=added),
        event(
            "response.function_call_arguments.delta",
            output_index=1,
            item_id="fc_call_1",
            delta='{"city": "Paris", ',
        ),
        event(
            "response.function_call_arguments.delta",
            output_index=1,
            item_id="fc_call_1",
            delta='"days": 3}',
        ),
        event(
            "response.function_call_arguments.done",
            output_index=1,
            item_id="fc_call_1",
            arguments='{"city": "Paris", "days": 3}',
            name="get_weather",
        ),
        event("response.completed", response=TWO_CALLS),
    ]
    calls = ToolCallStream(openai_responses.deltas)
    partials = []
    with ModelServer([Events(events)]) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as openai:
            stream = await openai.responses.create(model="gpt-test", input="Go", stream=True)
            async for streamed in stream:
                partials += [call.partial() for call in calls.feed(streamed)]
    assert calls.blocks() == EXPECTED[:1]
    assert calls.calls[0].done
    assert {"city": "Paris"} in partials


def test_a_custom_tool_call_is_refused() -> None:
    custom = response({"type": "custom_tool_call", "call_id": "c1", "name": "g", "input": "x"})
    with pytest.raises(ProviderShapeError, match="only function calls"):
        openai_responses.tool_calls(custom)
    with pytest.raises(ProviderShapeError, match="no output list"):
        openai_responses.tool_calls({"id": "resp_1"})
    with pytest.raises(ProviderShapeError, match="call_id"):
        openai_responses.tool_calls([{"type": "function_call", "name": "f"}])
