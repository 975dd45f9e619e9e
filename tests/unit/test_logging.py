"""What a call that does not succeed logs: one record, with structured fields, and nothing else.

Invalid arguments, a refusal, a suspension and a failing tool each log one record on the
``ferrotool`` logger, its fields passed as ``extra`` (``ferrotool_tool``, ``ferrotool_call_id``,
``ferrotool_state``, ``ferrotool_outcome``...), so a JSON formatter shows them; a success logs
nothing; with no logging configured, nothing reaches stderr. An MCP server that comes up logs
its name, transport, tool count and the time it took.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Final

import anyio
import orjson
import pytest

import ferrotool
from ferrotool import (
    EMPTY_STATE,
    ExecutionConfig,
    InMemorySessionStore,
    PermissionBehavior,
    PermissionRule,
    RuntimeContext,
    SchemaOnlyTool,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    session_key,
    tool,
    update_session,
)
from ferrotool._execution.batch import Confirmation
from ferrotool.mcp import McpClient, register_mcp

SERVERS: Final = Path(__file__).parent.parent / "mcp" / "servers"


@tool(inline=True)
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool(inline=True)
def fail(reason: str) -> str:
    """Fail with a reason.

    Args:
        reason: Why.
    """
    raise RuntimeError(reason)


@tool(timeout=5.0)
async def slow_add(a: int, b: int) -> int:
    """Add two numbers through the whole pipeline (a timeout: no direct call).

    Args:
        a: The first.
        b: The second.
    """
    return a + b


GEOLOCATE: Final = SchemaOnlyTool(
    {
        "name": "geolocate",
        "description": "Where the user is (the client runs it).",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
)


def _toolkit() -> Toolkit:
    toolkit = Toolkit()
    for item in (add, fail, slow_add, GEOLOCATE):
        toolkit.register(item)
    return toolkit


def _fields(record: logging.LogRecord) -> dict[str, object]:
    return {key: value for key, value in vars(record).items() if key.startswith("ferrotool_")}


def _records(caplog: pytest.LogCaptureFixture, call_id: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "ferrotool_call_id", None) == call_id]


@pytest.fixture
def caplog_debug(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="ferrotool")
    return caplog


@pytest.mark.anyio
async def test_invalid_arguments_log_one_record_with_their_error_codes(
    caplog_debug: pytest.LogCaptureFixture,
) -> None:
    toolkit = _toolkit()
    direct = await toolkit.call_tool(ToolUseBlock("c1", "add", '{"a": "one"}'))
    piped = await toolkit.call_tool(ToolUseBlock("c2", "slow_add", '{"a": "one"}'))
    assert direct.state is piped.state is ToolResultState.ERROR
    for call_id, name in (("c1", "add"), ("c2", "slow_add")):
        (record,) = _records(caplog_debug, call_id)
        assert record.levelno == logging.INFO
        assert record.name == "ferrotool"
        assert record.exc_info is None
        assert _fields(record) == {
            "ferrotool_tool": name,
            "ferrotool_call_id": call_id,
            "ferrotool_state": "error",
            "ferrotool_outcome": "invalid_arguments",
            "ferrotool_error_codes": ["wrong_type", "missing_property"],
        }
    assert toolkit.call_tool_sync(ToolUseBlock("c3", "add", "{")).state is ToolResultState.ERROR
    (record,) = _records(caplog_debug, "c3")
    assert _fields(record)["ferrotool_outcome"] == "invalid_arguments"


@pytest.mark.anyio
async def test_a_success_logs_nothing(caplog_debug: pytest.LogCaptureFixture) -> None:
    toolkit = _toolkit()
    await toolkit.call_tool(ToolUseBlock("c1", "add", '{"a": 1, "b": 2}'))
    await toolkit.call_tool(ToolUseBlock("c2", "slow_add", '{"a": 1, "b": 2}'))
    await toolkit.call_tools([ToolUseBlock("c3", "add", '{"a": 1, "b": 2}')])
    assert caplog_debug.records == []


@pytest.mark.anyio
async def test_a_denial_and_a_suspension_log_their_state(
    caplog_debug: pytest.LogCaptureFixture,
) -> None:
    rules = [
        PermissionRule(tool_name="add", behavior=PermissionBehavior.DENY, source="test"),
        PermissionRule(tool_name="slow_add", behavior=PermissionBehavior.ASK, source="test"),
        PermissionRule(tool_name="geolocate", behavior=PermissionBehavior.ALLOW, source="test"),
    ]
    state = EMPTY_STATE.with_permissions(EMPTY_STATE.permissions.with_rules(rules))
    view = _toolkit().view(state)
    batch = await view.call_tools(
        [
            ToolUseBlock("c1", "add", '{"a": 1, "b": 2}'),
            ToolUseBlock("c2", "slow_add", '{"a": 1, "b": 2}'),
            ToolUseBlock("c3", "geolocate", "{}"),
        ]
    )
    assert [r.state for r in batch.results] == [
        ToolResultState.DENIED,
        ToolResultState.RUNNING,
        ToolResultState.RUNNING,
    ]
    expected = {
        "c1": (logging.INFO, "add", "denied", "denied"),
        "c2": (logging.DEBUG, "slow_add", "running", "approval_required"),
        "c3": (logging.DEBUG, "geolocate", "running", "suspended"),
    }
    for call_id, (level, name, state_value, outcome) in expected.items():
        (record,) = _records(caplog_debug, call_id)
        assert record.levelno == level
        assert _fields(record) == {
            "ferrotool_tool": name,
            "ferrotool_call_id": call_id,
            "ferrotool_state": state_value,
            "ferrotool_outcome": outcome,
        }


@pytest.mark.anyio
async def test_a_person_rejecting_a_call_logs_it(caplog_debug: pytest.LogCaptureFixture) -> None:
    rule = PermissionRule(tool_name="add", behavior=PermissionBehavior.ASK, source="test")
    store = InMemorySessionStore()
    context = RuntimeContext.of(session_id="s1")
    await update_session(
        store,
        session_key(context),
        lambda state: state.with_permissions(state.permissions.with_rules([rule])),
    )
    toolkit = _toolkit()
    view = await toolkit.open_view(context, store)
    await view.call_tools([ToolUseBlock("c1", "add", '{"a": 1, "b": 2}')], context)
    view = await toolkit.open_view(context, store)
    resumed = await view.resume([Confirmation("c1", approved=False)])
    assert [r.state for r in resumed.results] == [ToolResultState.DENIED]
    asked, rejected = _records(caplog_debug, "c1")
    assert _fields(asked)["ferrotool_outcome"] == "approval_required"
    assert _fields(rejected)["ferrotool_outcome"] == "rejected"
    assert _fields(rejected)["ferrotool_state"] == "denied"


@pytest.mark.anyio
async def test_a_failing_tool_logs_a_warning_with_the_exception(
    caplog_debug: pytest.LogCaptureFixture,
) -> None:
    result = await _toolkit().call_tool(ToolUseBlock("c1", "fail", '{"reason": "no disk"}'))
    assert result.state is ToolResultState.ERROR
    (record,) = _records(caplog_debug, "c1")
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert _fields(record)["ferrotool_outcome"] == "raised"


@pytest.mark.anyio
async def test_a_timeout_logs_its_seconds(caplog_debug: pytest.LogCaptureFixture) -> None:
    @tool
    async def sleepy() -> str:
        """Sleep too long."""
        await anyio.sleep(5)
        return "late"

    toolkit = Toolkit()
    toolkit.register(sleepy)
    await toolkit.call_tools(
        [ToolUseBlock("c1", "sleepy", "{}")], config=ExecutionConfig(timeout=0.05)
    )
    (record,) = _records(caplog_debug, "c1")
    assert _fields(record)["ferrotool_outcome"] == "timed_out"
    assert _fields(record)["ferrotool_timeout_s"] == 0.05


def test_a_json_formatter_shows_the_fields() -> None:
    class Json(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return orjson.dumps({"message": record.getMessage(), **_fields(record)}).decode()

    lines: list[str] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Lines()
    handler.setFormatter(Json())
    logger = logging.getLogger("ferrotool")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        _toolkit().call_tool_sync(ToolUseBlock("c1", "add", '{"a": 1}'))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    (line,) = lines
    assert orjson.loads(line) == {
        "message": "tool add (call c1) got invalid arguments: missing_property",
        "ferrotool_tool": "add",
        "ferrotool_call_id": "c1",
        "ferrotool_state": "error",
        "ferrotool_outcome": "invalid_arguments",
        "ferrotool_error_codes": ["missing_property"],
    }


def test_with_no_logging_configured_nothing_reaches_stderr() -> None:
    program = textwrap.dedent(
        """
        from ferrotool import (
            EMPTY_STATE, PermissionBehavior, PermissionRule, Toolkit, ToolUseBlock, tool,
        )

        @tool(inline=True)
        def fail(reason: str) -> str:
            '''Fail.'''
            raise RuntimeError(reason)

        @tool
        async def add(a: int, b: int) -> int:
            '''Add.'''
            return a + b

        toolkit = Toolkit()
        toolkit.register(fail)
        toolkit.register(add)
        rule = PermissionRule(tool_name="add", behavior=PermissionBehavior.DENY, source="t")
        rules = EMPTY_STATE.permissions.with_rules([rule])
        view = toolkit.view(EMPTY_STATE.with_permissions(rules))
        print(toolkit.call_tool_sync(ToolUseBlock("c1", "fail", '{"reason": "boom"}')).state)
        print(view.call_tool_sync(ToolUseBlock("c2", "add", '{"a": 1, "b": 2}')).state)
        print(toolkit.call_tool_sync(ToolUseBlock("c3", "nope", "{}")).state)
        print(toolkit.call_tool_sync(ToolUseBlock("c4", "add", '{"a": "x"}')).state)
        """
    )
    env = {"PYTHONPATH": str(Path(ferrotool.__file__).parent.parent), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["error", "denied", "error", "error"]
    assert done.stderr == ""


@pytest.mark.anyio
async def test_an_mcp_server_coming_up_logs_its_name_transport_tools_and_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="ferrotool.mcp")
    client = McpClient.stdio("sdk", sys.executable, [str(SERVERS / "sdk_server.py")])
    toolkit = Toolkit()
    try:
        tools = await register_mcp(toolkit, client)
    finally:
        await client.close()
    (record,) = [r for r in caplog.records if hasattr(r, "ferrotool_server")]
    assert record.name == "ferrotool.mcp"
    assert record.levelno == logging.INFO
    fields = _fields(record)
    duration = fields.pop("ferrotool_duration_ms")
    assert isinstance(duration, float)
    assert duration > 0
    assert isinstance(fields.pop("ferrotool_protocol"), str)
    assert fields == {
        "ferrotool_server": "sdk",
        "ferrotool_transport": "stdio",
        "ferrotool_tools": len(tools),
    }
    assert record.getMessage().startswith("MCP server 'sdk' up (stdio, protocol ")
