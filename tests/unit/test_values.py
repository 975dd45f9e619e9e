"""The message-level values: content blocks, tool calls, results, specs, contexts."""

from __future__ import annotations

import dataclasses

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrotool import (
    ImageBlock,
    JsonBlock,
    PermissionBehavior,
    PermissionDecision,
    RuntimeContext,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
blocks = st.one_of(
    st.builds(TextBlock, st.text()),
    st.builds(JsonBlock, json_values),
    st.builds(ImageBlock, media_type=st.just("image/png"), data=st.text(min_size=1)),
    st.builds(ImageBlock, media_type=st.just("image/jpeg"), url=st.text(min_size=1)),
)
results = st.builds(
    ToolResultBlock,
    id=st.none() | st.text(),
    name=st.none() | st.text(),
    output=st.lists(blocks, max_size=3).map(tuple),
    state=st.sampled_from(ToolResultState),
    metadata=st.dictionaries(st.text(), json_values, max_size=3),
    structured=json_values,
)


@given(results)
def test_result_json_round_trips(result: ToolResultBlock) -> None:
    assert ToolResultBlock.from_json(result.to_json()) == result


@given(st.text(), st.text(), json_values)
def test_tool_use_json_round_trips(id: str, name: str, value: object) -> None:
    import orjson

    block = ToolUseBlock(id, name, orjson.dumps(value).decode())
    assert ToolUseBlock.from_json(block.to_json()) == block


def test_factories_state_explicitly() -> None:
    call = ToolUseBlock("c1", "search", '{"q": "x"}')
    assert ToolResultBlock.success("ok").state is ToolResultState.SUCCESS
    error = ToolResultBlock.error("boom")
    assert error.state is ToolResultState.ERROR
    assert error.content == "Error: boom"
    running = ToolResultBlock.text("working")
    assert running.state is ToolResultState.RUNNING
    assert running.with_state(ToolResultState.SUCCESS).state is ToolResultState.SUCCESS
    assert running.state is ToolResultState.RUNNING  # a value: with_state made a new one
    suspended = ToolResultBlock.suspended(call)
    assert (suspended.id, suspended.name) == ("c1", "search")
    assert suspended.is_suspended
    assert suspended.state is ToolResultState.RUNNING
    assert suspended.content == "[Awaiting external execution]"
    assert ToolResultBlock.suspended(call, "run it on the client").content == "run it on the client"
    assert ToolResultBlock.interrupted(call).state is ToolResultState.INTERRUPTED
    assert ToolResultBlock.denied(call, "no").state is ToolResultState.DENIED


def test_with_call_keeps_state_and_metadata() -> None:
    result = ToolResultBlock.error("x", metadata={"k": 1}).with_call("c9", "t")
    assert (result.id, result.name, result.state) == ("c9", "t", ToolResultState.ERROR)
    assert result.metadata == {"k": 1}


def test_values_are_immutable_and_typed_equal() -> None:
    result = ToolResultBlock.success("x")
    with pytest.raises(AttributeError):
        result.state = ToolResultState.ERROR  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.metadata["k"] = 1  # type: ignore[index]
    assert TextBlock("a") != ("a",)
    assert TextBlock("a") != JsonBlock("a")
    assert hash(TextBlock("a")) == hash(TextBlock("a"))
    assert hash(JsonBlock({"a": [1]})) == hash(JsonBlock({"a": [1]}))
    assert result != tuple(result)


def test_output_accepts_blocks_and_rejects_others() -> None:
    image = ImageBlock(media_type="image/png", url="https://example.com/a.png")
    assert ToolResultBlock.success([TextBlock("a"), image]).output == (TextBlock("a"), image)
    with pytest.raises(TypeError, match="content blocks"):
        ToolResultBlock.success(["plain string"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="exactly one"):
        ImageBlock(media_type="image/png")


def test_tool_use_input_is_parsed_or_empty() -> None:
    assert ToolUseBlock("1", "t", '{"a": 1}').input == {"a": 1}
    assert ToolUseBlock("1", "t", "").input == {}
    assert ToolUseBlock("1", "t", "[1]").input == {}
    assert ToolUseBlock("1", "t", "{bad").input == {}
    assert ToolUseBlock.of("1", "t", {"a": [1, 2]}).arguments == '{"a":[1,2]}'
    with pytest.raises(ValueError, match="not a tool call"):
        ToolUseBlock.from_json(b'{"id": 1}')


def test_tool_use_is_an_immutable_hashable_value() -> None:
    block = ToolUseBlock("1", "t", '{"a": 1}')
    assert block == ToolUseBlock("1", "t", '{"a": 1}')
    assert hash(block) == hash(ToolUseBlock("1", "t", '{"a": 1}'))
    assert block != ("1", "t", '{"a": 1}')  # a named tuple, but only equal to its own kind
    assert len({block, ToolUseBlock("1", "t", '{"a": 1}'), block._replace(id="2")}) == 2
    with pytest.raises(AttributeError):
        block.id = "2"  # type: ignore[misc]


def test_result_from_json_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="version"):
        ToolResultBlock.from_json(b"{}")
    with pytest.raises(ValueError, match="content block"):
        ToolResultBlock.from_json(b'{"version": 1, "output": [{"type": "video"}]}')


def test_spec_round_trips_and_checks_names() -> None:
    spec = ToolSpec(
        name="get_weather",
        description="Weather.",
        parameters_json=b'{"type":"object","properties":{}}',
        read_only=True,
        timeout=2.5,
        mcp_server="weather",
    )
    assert ToolSpec.from_json(spec.to_json()) == spec
    assert hash(spec) == hash(ToolSpec.from_json(spec.to_json()))
    for bad in ("", "has space", "x" * 65, "dot.name", "ünicode"):
        with pytest.raises(ValueError, match="invalid tool name"):
            ToolSpec(name=bad, description="d", parameters_json=b"{}")
    with pytest.raises(ValueError, match="timeout"):
        ToolSpec(name="t", description="d", parameters_json=b"{}", timeout=0)


def test_spec_idempotent_round_trips_and_defaults_to_true() -> None:
    spec = ToolSpec(name="pay", description="Pay.", parameters_json=b"{}", idempotent=False)
    assert ToolSpec.from_json(spec.to_json()) == spec
    assert orjson.loads(spec.to_json())["idempotent"] is False
    # A spec written before the flag existed reads as idempotent, the default.
    older = orjson.loads(dataclasses.replace(spec, idempotent=True).to_json())
    del older["idempotent"]
    assert ToolSpec.from_json(orjson.dumps(older)).idempotent


class Base:
    pass


class Derived(Base):
    pass


def test_runtime_context_typed_layer() -> None:
    derived = Derived()
    context = RuntimeContext.of(derived, user_id="u", session_id="s", scratch={"k": 1})
    assert context.get(Derived) is derived
    assert context.get(Base) is derived  # the most specific stored subtype
    assert context.get(int) is None
    assert context.get(RuntimeContext) is context
    with pytest.raises(LookupError, match="int"):
        context.require(int)
    base = Base()
    both = context.with_value(base)
    assert both.get(Base) is base  # exact match first
    assert context.get(Base) is derived  # the original is unchanged
    assert both.with_scratch("k", None).scratch == {}
    assert context.scratch == {"k": 1}
    assert context.with_ids(session_id="s2").session_id == "s2"
    assert context.with_ids(session_id="s2").user_id == "u"


def test_permission_decision_json() -> None:
    decision = PermissionDecision.ask("needs approval", reason="safety: writes files")
    assert decision.to_dict() == {
        "behavior": "ask",
        "message": "needs approval",
        "decision_reason": "safety: writes files",
    }
    assert PermissionBehavior.parse("ALLOW") is PermissionBehavior.ALLOW
    with pytest.raises(ValueError, match="Unknown PermissionBehavior: nope"):
        PermissionBehavior.parse("nope")


def test_what_is_hashable() -> None:
    assert len({TextBlock("a"), TextBlock("a"), ToolUseBlock("1", "t")}) == 2
    with pytest.raises(TypeError, match="unhashable"):
        hash(ToolResultBlock.success("x"))
