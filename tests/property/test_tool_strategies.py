"""ferrotool.testing on every example tool: valid arguments run, invalid ones are results."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import AgentTool, Toolkit, ToolResultState, ToolUseBlock
from ferrotool.cli.demo import demo_toolkit
from ferrotool.testing import InvalidArguments, invalid_arguments, valid_arguments

DEMO = demo_toolkit()
TOOLS = [tool for name in DEMO.names() if (tool := DEMO.get_tool(name)) is not None]


def run(toolkit: Toolkit, name: str, arguments: str) -> Any:
    from ferrotool.cli.demo import DEMO_CONTEXT

    return anyio.run(toolkit.call_tool, ToolUseBlock("p", name, arguments), DEMO_CONTEXT)


def _check_valid(tool: AgentTool, arguments: str) -> None:
    result = run(DEMO, tool.spec.name, arguments)
    assert result.state is ToolResultState.SUCCESS, (arguments, result.content)


def _reads_as_left_out(tool: AgentTool, bad: InvalidArguments) -> bool:
    """A mutation that put ``null`` at a top-level optional property: ferrotool reads such a
    ``null`` as the property left out (strict provider schemas send them), so it is valid."""
    schema = orjson.loads(tool.spec.parameters_json)
    parts = bad.mutation.pointer.split("/")[1:]
    return (
        bad.mutation.kind == "wrong_type"
        and isinstance(bad.value, dict)
        and len(parts) == 1
        and bad.value.get(parts[0], 0) is None
        and parts[0] in schema.get("properties", {})
        and parts[0] not in schema.get("required", [])
    )


def _check_invalid(tool: AgentTool, bad: InvalidArguments) -> None:
    result = run(DEMO, tool.spec.name, bad.arguments)
    if _reads_as_left_out(tool, bad):
        assert result.state is ToolResultState.SUCCESS, (bad, result.content)
        return
    assert result.state is ToolResultState.ERROR, (bad, result.content)
    assert result.content.startswith(f"Error: Invalid arguments for tool '{tool.spec.name}'")
    assert result.metadata["errors"], bad


@settings(max_examples=30)
@given(st.sampled_from(TOOLS).flatmap(lambda t: st.tuples(st.just(t), valid_arguments(t))))
def test_valid_arguments_run_every_demo_tool(case: tuple[AgentTool, str]) -> None:
    _check_valid(*case)


@settings(max_examples=30)
@given(
    st.sampled_from(TOOLS).flatmap(
        lambda t: st.tuples(st.just(t), invalid_arguments(t, include_malformed_json=True))
    )
)
def test_invalid_arguments_are_error_results_for_every_demo_tool(
    case: tuple[AgentTool, InvalidArguments],
) -> None:
    _check_invalid(*case)
