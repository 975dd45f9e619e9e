"""The Gemini adapter, through google-genai against a local server."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google import genai
from google.genai import types

from ferrotool import ProviderShapeError, ToolUseBlock
from ferrotool.providers import gemini
from providers.common import ERRORS, PNG, TEXTS, results_of_every_state, toolkit
from providers.wire import ModelServer, Reply

pytestmark = pytest.mark.asyncio_only("google-genai's async client needs asyncio's event loop")


def response(*parts: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 1, "totalTokenCount": 2},
    }


TWO_CALLS = response(
    {"text": "Checking."},
    {"functionCall": {"id": "fc-1", "name": "get_weather", "args": {"city": "Paris", "days": 3}}},
    {"functionCall": {"name": "lookup", "args": {"sku": "A1"}}},
)
EXPECTED = (
    ToolUseBlock("fc-1", "get_weather", '{"city":"Paris","days":3}'),
    ToolUseBlock("gemini-call-2", "lookup", '{"sku":"A1"}'),
)


def client(server: ModelServer) -> genai.Client:
    return genai.Client(api_key="t", http_options=types.HttpOptions(base_url=server.url))


def test_calls_read_alike_from_the_sdk_object_and_the_wire_dict() -> None:
    sdk = types.GenerateContentResponse.model_validate(TWO_CALLS)
    assert gemini.tool_calls(sdk) == EXPECTED
    assert gemini.tool_calls(TWO_CALLS) == EXPECTED
    content = sdk.candidates[0].content if sdk.candidates else None
    assert gemini.tool_calls(content) == EXPECTED
    assert gemini.tool_calls(content.model_dump(exclude_none=True) if content else {}) == EXPECTED
    assert gemini.tool_calls(response({"text": "hi"})) == ()


async def test_a_round_trip_through_the_sdk() -> None:
    kit = toolkit()
    with ModelServer([Reply(TWO_CALLS), Reply(response({"text": "Done."}))]) as server:
        async with client(server).aio as aio:
            config = types.GenerateContentConfig(tools=gemini.tools(kit))
            contents: list[types.ContentUnionDict] = [
                types.Content(role="user", parts=[types.Part(text="Go")])
            ]
            first = await aio.models.generate_content(
                model="gemini-test", contents=contents, config=config
            )
            batch = await kit.call_tools(gemini.tool_calls(first))
            assert first.candidates
            assert first.candidates[0].content
            contents += [first.candidates[0].content, gemini.user_turn(batch)]
            final = await aio.models.generate_content(
                model="gemini-test", contents=contents, config=config
            )
    assert final.text == "Done."
    first_body, second_body = server.bodies()
    declared = first_body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["get_weather", "lookup", "chart"]
    assert second_body["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "fc-1",
                    "name": "get_weather",
                    "response": {"output": "Paris: sunny for 3 day(s)"},
                }
            },
            {
                "functionResponse": {
                    "name": "lookup",
                    "response": {"output": {"sku": "A1", "price": 9.5}},
                }
            },
        ],
    }


async def test_errors_go_under_error_and_images_into_parts() -> None:
    results = results_of_every_state()
    parts = gemini.result_messages(results)
    loaded = [types.Part.model_validate(part) for part in parts]
    responses = [part.function_response for part in loaded]
    assert [r.id for r in responses if r] == [r.id for r in results]
    for result, function_response in zip(results, responses, strict=True):
        assert function_response is not None
        assert function_response.name == result.name
        payload = function_response.response or {}
        key = "error" if result.id in ERRORS else "output"
        assert set(payload) == {key}
        if result.id == "r6":
            assert payload[key] == {"sku": "A1"}
        elif result.id not in ("r8", "r9"):
            assert payload[key] == TEXTS[result.id or ""]
    chart = responses[7]
    assert chart is not None
    assert chart.parts
    assert chart.parts[0].inline_data is not None
    assert chart.parts[0].inline_data.data == base64.b64decode(PNG)
    link = responses[8]
    assert link is not None
    assert link.parts
    assert link.parts[0].file_data is not None
    assert link.parts[0].file_data.file_uri == "https://example.com/a.png"
    with ModelServer([Reply(response({"text": "ok"}))]) as server:
        async with client(server).aio as aio:
            await aio.models.generate_content(
                model="gemini-test", contents=[gemini.user_turn(results)]
            )
    sent = server.bodies()[0]["contents"][0]["parts"][7]["functionResponse"]["parts"][0]
    # Protobuf's JSON takes either spelling; this SDK sends the nested part's snake_case.
    assert (sent.get("inlineData") or sent["inline_data"])["data"] == PNG


def test_a_call_without_a_name_is_refused() -> None:
    with pytest.raises(ProviderShapeError, match="needs a string name"):
        gemini.tool_calls([{"function_call": {"args": {}}}])
    with pytest.raises(ProviderShapeError, match="no candidates"):
        gemini.tool_calls({"candidates": []})
