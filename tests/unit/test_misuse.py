"""A developer's mistakes with calls raise a `TypeError` that says what to pass.

A tool's name and its arguments where the `ToolUseBlock` goes, one call where a batch goes, a
call built without its id: each is refused where it is made, naming the fields, on every entry
(the Rust ``call_tool``, the sync one, a view's, a batch's).
"""

from __future__ import annotations

import re

import pytest

from ferrotool import (
    Next,
    RuntimeContext,
    Toolkit,
    ToolkitConfig,
    ToolResultBlock,
    ToolUseBlock,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def _toolkit(config: ToolkitConfig | None = None) -> Toolkit:
    toolkit = Toolkit(config)
    toolkit.register(add)
    return toolkit


async def _passing(call: ToolUseBlock, context: RuntimeContext, proceed: Next) -> ToolResultBlock:
    return await proceed(call, context)


NAMED: re.Pattern[str] = re.compile(
    r"call_tool takes a ToolUseBlock, e\.g\. ToolUseBlock\(id='call_1', name='add', "
    r"arguments='\{\"a\": 1\}'\) or ToolUseBlock\.of\('call_1', 'add', \{'a': 1\}\); got str 'add'"
)


@pytest.mark.anyio
async def test_a_name_and_arguments_in_place_of_a_call_to_call_tool() -> None:
    toolkit = _toolkit()
    with pytest.raises(TypeError, match=NAMED):
        await toolkit.call_tool("add", {"a": 1, "b": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=NAMED):
        await toolkit.call_tool("add")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"call_tool takes a ToolUseBlock.*got dict"):
        await toolkit.call_tool({"id": "c1", "name": "add"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=NAMED):
        await toolkit.snapshot().call_tool("add", {"a": 1})  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_same_mistake_on_a_view_and_through_middleware() -> None:
    view = _toolkit().view()
    with pytest.raises(TypeError, match=NAMED):
        await view.call_tool("add", {"a": 1, "b": 2})  # type: ignore[arg-type]
    wrapped = _toolkit(ToolkitConfig(middleware=(_passing,)))
    with pytest.raises(TypeError, match=NAMED):
        await wrapped.call_tool("add", {"a": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=NAMED):
        await wrapped.view().call_tool("add")  # type: ignore[arg-type]


def test_the_same_mistake_on_the_sync_entries() -> None:
    toolkit = _toolkit()
    with pytest.raises(TypeError, match=NAMED):
        toolkit.call_tool_sync("add", {"a": 1, "b": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=NAMED):
        toolkit.view().call_tool_sync("add", {"a": 1, "b": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got int 7"):
        toolkit.call_tool_sync(7)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_call_of_another_type_with_the_three_fields_still_runs() -> None:
    class Call:
        id = "c1"
        name = "add"
        arguments = '{"a": 1, "b": 2}'

    result = await _toolkit().call_tool(Call())  # type: ignore[arg-type]
    assert result.content == "3"
    assert _toolkit().call_tool_sync(Call()).content == "3"  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_one_call_or_a_name_where_a_batch_goes() -> None:
    toolkit = _toolkit()
    call = ToolUseBlock("c1", "add", '{"a": 1, "b": 2}')
    with pytest.raises(TypeError, match=r"not one ToolUseBlock: pass \[call\]"):
        await toolkit.call_tools(call)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"sequence of ToolUseBlock calls.*got str 'add'"):
        await toolkit.call_tools("add")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got dict"):
        await toolkit.call_tools({"c1": call})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the one at index 1 is a str"):
        await toolkit.call_tools([call, "add"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"not one ToolUseBlock"):
        await toolkit.view().call_tools(call)  # type: ignore[arg-type]
    batch = await toolkit.call_tools((call,))
    assert [result.content for result in batch.results] == ["3"]


def test_a_call_built_without_its_id_names_the_fields() -> None:
    with pytest.raises(TypeError) as raised:
        ToolUseBlock("add", '{"a": 1}')
    message = str(raised.value)
    assert "(id, name, arguments)" in message
    assert """ToolUseBlock(id='call_1', name='add', arguments='{"a": 1}')""" in message
    with pytest.raises(TypeError, match="no id"):
        ToolUseBlock("add", '  {"a": 1}')


def test_a_call_built_whole_or_by_keywords_is_unchanged() -> None:
    assert ToolUseBlock("c1", "add") == ToolUseBlock("c1", "add", "{}")
    assert ToolUseBlock(id="c1", name="add", arguments="{}").arguments == "{}"
    assert tuple(ToolUseBlock("c1", "{odd name}", "{}")) == ("c1", "{odd name}", "{}")
    assert ToolUseBlock.of("c1", "add", {"a": 1}).arguments == '{"a":1}'
    call = ToolUseBlock("c1", "add", '{"a": 1}')
    assert call._replace(id="c2") == ToolUseBlock("c2", "add", '{"a": 1}')
    assert ToolUseBlock.from_json(call.to_json()) == call


def test_the_message_names_what_was_passed() -> None:
    toolkit = _toolkit()
    with pytest.raises(TypeError, match=r"got NoneType None$"):
        toolkit.call_tool_sync(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"name='lookup'"):
        toolkit.call_tool_sync("lookup")  # type: ignore[arg-type]


# - a context that is not one -

CALL = ToolUseBlock("c1", "add", '{"a": 1, "b": 2}')
NOT_A_CONTEXT = {"user_id": "u1", "session_id": "s1"}


def _says_build_a_context(error: pytest.ExceptionInfo[TypeError]) -> None:
    message = str(error.value)
    assert "takes a RuntimeContext" in message
    assert "RuntimeContext(user_id='u1', session_id='s1')" in message
    assert "got dict" in message


async def test_a_dict_where_the_context_goes_on_the_async_entries() -> None:
    toolkit = _toolkit()
    with pytest.raises(TypeError) as error:
        await toolkit.call_tool(CALL, NOT_A_CONTEXT)  # type: ignore[arg-type]
    _says_build_a_context(error)
    wrapped = _toolkit(ToolkitConfig(middleware=(_passing,)))  # the pipeline's route
    with pytest.raises(TypeError) as error:
        await wrapped.call_tool(CALL, NOT_A_CONTEXT)  # type: ignore[arg-type]
    _says_build_a_context(error)
    with pytest.raises(TypeError) as error:
        await toolkit.call_tools([CALL], NOT_A_CONTEXT)  # type: ignore[arg-type]
    _says_build_a_context(error)


def test_a_dict_where_the_context_goes_on_the_sync_entry() -> None:
    with pytest.raises(TypeError) as error:
        _toolkit().call_tool_sync(CALL, NOT_A_CONTEXT)  # type: ignore[arg-type]
    _says_build_a_context(error)


async def test_a_context_or_none_is_taken_as_before() -> None:
    toolkit = _toolkit()
    assert (await toolkit.call_tool(CALL, None)).content == "3"
    assert (await toolkit.call_tool(CALL, RuntimeContext(user_id="u1"))).content == "3"
    assert toolkit.call_tool_sync(CALL, RuntimeContext(user_id="u1")).content == "3"
