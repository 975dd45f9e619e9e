"""Whatever a model (or a provider adapter passing its text on) sends, `call_tool` answers with a
result; only a programmer's mistake (arguments that are not text at all) raises."""

from __future__ import annotations

import tracemalloc
from typing import Any, Literal

import pytest

from ferrotool import (
    RegistrationError,
    RuntimeContext,
    SchemaError,
    SchemaOnlyTool,
    ToolBase,
    Toolkit,
    ToolkitConfig,
    ToolRequestConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)


@tool
async def echo(text: str = "x") -> str:
    """Echo (a direct call)."""
    return text


@tool(inline=True)
def echo_with_context(context: RuntimeContext, text: str = "x") -> str:
    """Echo (through the pipeline: it has an injected parameter)."""
    return text


@tool(inline=True)
def huge() -> int:
    """An int longer than `str()` allows (5,001 digits)."""
    return 10**5000


@tool
def huge_on_thread() -> int:
    """The same, on a worker thread."""
    return 10**5000


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this one")


@tool(inline=True)
def unprintable() -> object:
    """Returns a value that is neither JSON nor printable."""
    return Unprintable()


@tool
def unprintable_on_thread() -> object:
    """The same, on a worker thread."""
    return Unprintable()


CLIENT = SchemaOnlyTool(
    {"name": "client", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}
)
TOOLKIT = Toolkit()
for _item in (echo, echo_with_context, huge, huge_on_thread, unprintable, unprintable_on_thread):
    TOOLKIT.register(_item)
VIEW = TOOLKIT.snapshot().view(config=ToolRequestConfig([CLIENT]))
NAMES = ("echo", "echo_with_context", "client")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("arguments", "found"),
    [
        (b'{"text": "\xff\xfe"}', "invalid UTF-8 at byte 10"),
        ('{"text": "\ud800"}', "a lone surrogate"),
    ],
)
async def test_text_that_is_not_utf8_is_an_error_result(
    name: str, arguments: Any, found: str
) -> None:
    result = await VIEW.call_tool(ToolUseBlock("c1", name, arguments))
    assert result.state is ToolResultState.ERROR
    assert found in result.content
    errors = result.metadata["errors"]
    assert isinstance(errors, list)
    assert [(error["code"], error["pointer"]) for error in errors] == [("invalid_json", "")]  # type: ignore[index,call-overload]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("arguments", [{}, 0, False, [], None, {"text": "a"}])
async def test_arguments_that_are_not_text_are_a_type_error(name: str, arguments: Any) -> None:
    with pytest.raises(TypeError, match=r"str or bytes|not JSON text"):
        await VIEW.call_tool(ToolUseBlock("c1", name, arguments))


@pytest.mark.parametrize("name", ["huge", "huge_on_thread"])
async def test_an_int_beyond_the_str_limit_is_returned_whole(name: str) -> None:
    result = await TOOLKIT.call_tool(ToolUseBlock("c1", name, "{}"))
    assert result.state is ToolResultState.SUCCESS
    assert result.content == "1" + "0" * 5000
    assert result.structured == {"result": 10**5000}  # an int's output schema is wrapped


@pytest.mark.parametrize("name", ["unprintable", "unprintable_on_thread"])
async def test_a_value_whose_str_raises_is_an_error_result(name: str) -> None:
    result = await TOOLKIT.call_tool(ToolUseBlock("c1", name, "{}"))
    assert result.state is ToolResultState.ERROR
    assert "no text for this one" in result.content


def test_a_huge_non_ascii_str_is_refused_by_size_before_it_is_copied() -> None:
    arguments = '{"text": "' + "é" * 80_000_000 + '"}'
    tracemalloc.start()
    try:
        result = TOOLKIT.call_tool_sync(ToolUseBlock("c1", "echo", arguments))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.state is ToolResultState.ERROR
    assert "input_too_large" in result.content
    assert peak < 5_000_000  # no 160 MB UTF-8 copy of the 80 MB string


MEMBERS = tuple(f"member_{index:05d}" for index in range(10_000))
Choice = Literal.__getitem__(MEMBERS)


def test_an_error_about_a_huge_literal_names_a_bounded_number_of_members() -> None:
    @tool(inline=True)
    def choose(option: Choice) -> str:  # type: ignore[valid-type]
        """Pick one of ten thousand."""
        return str(option)

    kit = Toolkit()
    kit.register(choose)
    result = kit.call_tool_sync(ToolUseBlock("c1", "choose", '{"option": "nope"}'))
    assert result.state is ToolResultState.ERROR
    assert "member_00000" in result.content
    assert "(9992 more)" in result.content
    assert len(result.content) < 1_000


def test_an_empty_tool_name_is_refused_at_definition() -> None:
    with pytest.raises(ValueError, match="invalid tool name ''"):

        @tool(name="")
        def nameless() -> None:
            """Has no name."""


def test_an_inline_tool_with_a_timeout_is_refused_at_definition() -> None:
    with pytest.raises(ValueError, match=r"inline tool .* timeout cannot stop it"):

        @tool(inline=True, timeout=1.0)
        def impatient() -> None:
            """Cannot be stopped."""


def test_an_inline_async_tool_is_refused_at_definition() -> None:
    # It would run as a sync call and answer with the coroutine object, never awaited.
    with pytest.raises(ValueError, match=r"eager': inline=True is for a sync function"):

        @tool(inline=True)
        async def eager() -> None:
            """Awaited nowhere."""


def test_a_schema_nested_past_json_limits_is_a_schema_error() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(400):
        schema = {"type": "object", "properties": {"next": schema}}
    with pytest.raises(SchemaError, match="deep_tool"):
        ToolBase(name="deep_tool", input_schema=schema)
    with pytest.raises(SchemaError, match="client_tool"):
        SchemaOnlyTool({"name": "client_tool", "parameters": schema})


def test_a_failed_create_group_leaves_nothing_behind() -> None:
    @tool
    def reset_tools() -> None:
        """A user tool that takes the meta tool's name."""

    kit = Toolkit(ToolkitConfig(meta_tool=True))
    kit.register(reset_tools)
    before = (kit.groups(), kit.names(), kit.schemas_json())
    with pytest.raises(RegistrationError, match=r"meta tool's name"):
        kit.create_group("database", "Tools for databases.")
    assert (kit.groups(), kit.names(), kit.schemas_json()) == before
    with pytest.raises(ValueError, match="basic"):
        kit.create_group("basic")
    assert (kit.groups(), kit.names(), kit.schemas_json()) == before
