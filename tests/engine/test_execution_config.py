"""`ExecutionConfig`: merged field by field (tool, call, toolkit, defaults); timeouts; retries
with backoff for execution failures only; logging of what went wrong."""

from __future__ import annotations

import logging

import anyio
import pytest

from ferrotool import (
    ExecutionConfig,
    PermissionContext,
    PermissionDecision,
    SuspendTool,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolkitConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool._values.execution import DEFAULTS


def test_fields_merge_one_by_one_the_first_setting_winning() -> None:
    tool_own = ExecutionConfig(timeout=1.0)
    call = ExecutionConfig(timeout=9.0, max_attempts=3)
    toolkit = ExecutionConfig(max_attempts=5, initial_backoff=0.5, max_concurrency=4)
    merged = tool_own.over(call, toolkit, DEFAULTS)
    assert merged == ExecutionConfig(
        timeout=1.0,
        max_attempts=3,
        initial_backoff=0.5,
        max_backoff=DEFAULTS.max_backoff,
        jitter=DEFAULTS.jitter,
        max_concurrency=4,
    )


def test_the_defaults_have_no_timeout_and_one_attempt() -> None:
    assert DEFAULTS.timeout is None
    assert DEFAULTS.attempts == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"timeout": 0},
        {"max_attempts": 0},
        {"initial_backoff": -1},
        {"jitter": 1.5},
        {"max_concurrency": 0},
    ],
)
def test_nonsense_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        ExecutionConfig(**bad)  # type: ignore[arg-type]


def test_backoff_doubles_up_to_its_cap_with_jitter_inside_its_share() -> None:
    config = ExecutionConfig(initial_backoff=1.0, max_backoff=3.0, jitter=0.5)
    for retry, base in [(1, 1.0), (2, 2.0), (3, 3.0), (4, 3.0)]:
        waits = [config.backoff(retry) for _ in range(200)]
        assert min(waits) >= base * 0.5
        assert max(waits) <= base
    assert ExecutionConfig(initial_backoff=1.0, jitter=0).backoff(2) == 2.0


class Flaky:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0


async def test_a_raising_tool_is_tried_again_until_it_succeeds() -> None:
    state = Flaky(failures=2)

    @tool(execution=ExecutionConfig(max_attempts=3, initial_backoff=0.001))
    async def flaky() -> str:
        """Fails twice."""
        state.calls += 1
        if state.calls <= state.failures:
            raise ConnectionError(f"attempt {state.calls}")
        return "finally"

    kit = Toolkit()
    kit.register(flaky)
    result = await kit.call_tool(ToolUseBlock("c1", "flaky", "{}"))
    assert (result.state, result.content, state.calls) == (ToolResultState.SUCCESS, "finally", 3)


async def test_the_last_failure_is_the_result_when_attempts_run_out() -> None:
    state = Flaky(failures=10)

    @tool
    async def flaky() -> str:
        """Always fails."""
        state.calls += 1
        raise ConnectionError(f"attempt {state.calls}")

    kit = Toolkit(ToolkitConfig(execution=ExecutionConfig(max_attempts=4, initial_backoff=0)))
    kit.register(flaky)
    result = await kit.call_tool(ToolUseBlock("c1", "flaky", "{}"))
    assert (result.state, state.calls) == (ToolResultState.ERROR, 4)
    assert "attempt 4" in result.content


async def test_validation_errors_denials_and_suspensions_are_never_retried() -> None:
    counts = {"valid": 0, "suspend": 0}

    @tool
    async def strict_input(n: int) -> int:
        """Takes an int."""
        counts["valid"] += 1
        return n

    @tool
    async def hands_off() -> str:
        """Suspends."""
        counts["suspend"] += 1
        raise SuspendTool("the client runs this")

    class Denied(ToolBase[dict[str, object]]):
        name = "denied"
        input_schema = {"type": "object"}

        async def check_permissions(
            self, tool_input: dict[str, object], context: PermissionContext
        ) -> PermissionDecision:
            return PermissionDecision.deny("no")

        async def call(self, param: ToolCallParam[dict[str, object]]) -> None:
            raise AssertionError("never runs")

    kit = Toolkit(ToolkitConfig(execution=ExecutionConfig(max_attempts=5, initial_backoff=0)))
    kit.register(strict_input)
    kit.register(hands_off)
    kit.register(Denied())
    batch = await kit.call_tools(
        [
            ToolUseBlock("c1", "strict_input", '{"n": "x"}'),
            ToolUseBlock("c2", "hands_off", "{}"),
            ToolUseBlock("c3", "denied", "{}"),
        ]
    )
    assert [r.state for r in batch.results] == [
        ToolResultState.ERROR,
        ToolResultState.RUNNING,
        ToolResultState.DENIED,
    ]
    assert counts == {"valid": 0, "suspend": 1}


async def test_a_batch_timeout_applies_to_plain_tools_too() -> None:
    @tool
    async def slow() -> str:
        """Sleeps."""
        await anyio.sleep(5)
        return "late"

    kit = Toolkit()
    kit.register(slow)
    batch = await kit.call_tools(
        [ToolUseBlock("c1", "slow", "{}")], config=ExecutionConfig(timeout=0.05)
    )
    (result,) = batch.results
    assert (result.state, result.content) == (
        ToolResultState.ERROR,
        "Error: Tool execution timed out after 0.05 s",
    )


async def test_the_tools_own_timeout_wins_over_the_calls() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        """Sleeps."""
        await anyio.sleep(5)
        return "late"

    kit = Toolkit()
    kit.register(slow)
    batch = await kit.call_tools(
        [ToolUseBlock("c1", "slow", "{}")], config=ExecutionConfig(timeout=30)
    )
    assert "timed out after 0.05 s" in batch.results[0].content


async def test_what_goes_wrong_is_logged_at_its_level(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    async def boom() -> str:
        """Raises."""
        raise RuntimeError("boom")

    @tool(timeout=0.01)
    async def slow() -> str:
        """Sleeps."""
        await anyio.sleep(1)
        return "late"

    class Denied(ToolBase[dict[str, object]]):
        name = "denied"
        input_schema = {"type": "object"}

        async def check_permissions(
            self, tool_input: dict[str, object], context: PermissionContext
        ) -> PermissionDecision:
            return PermissionDecision.deny("no")

        async def call(self, param: ToolCallParam[dict[str, object]]) -> None:
            raise AssertionError("never runs")

    kit = Toolkit()
    kit.register(boom)
    kit.register(slow)
    kit.register(Denied())
    with caplog.at_level(logging.INFO, logger="ferrotool"):
        await kit.call_tools(
            [
                ToolUseBlock("c1", "boom", "{}"),
                ToolUseBlock("c2", "slow", "{}"),
                ToolUseBlock("c3", "denied", "{}"),
                ToolUseBlock("c4", "nope", "{}"),
            ]
        )
    levels = {(record.levelname, record.getMessage().split(" (")[0]) for record in caplog.records}
    assert ("WARNING", "tool boom") in levels
    assert ("WARNING", "tool slow") in levels
    assert ("INFO", "tool denied") in levels
    assert any(
        r.levelname == "INFO" and "unknown tool 'nope'" in r.getMessage() for r in caplog.records
    )
