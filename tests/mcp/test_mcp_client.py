"""The MCP client: transports, both protocol eras, tools as ferrotool tools, registration."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_support import PYTHON, RAW, SDK

from ferrotool import (
    EMPTY_PERMISSIONS,
    ImageBlock,
    JsonBlock,
    JsonValue,
    PermissionBehavior,
    PermissionRule,
    RegistrationError,
    RuntimeContext,
    TextBlock,
    ToolContextState,
    Toolkit,
    ToolkitConfig,
    ToolProgress,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._values.spec import TOOL_NAME
from ferrotool.errors import McpError
from ferrotool.mcp import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT,
    McpClient,
    McpMeta,
    McpTool,
    register_mcp,
    remove_mcp,
    tool_name,
)


def raw(log: Path | None = None, **options: float) -> McpClient:
    env = {"FAULTS_LOG": str(log)} if log is not None else None
    return McpClient.stdio("raw", PYTHON, [RAW], env=env, **options)  # type: ignore[arg-type]


def call(name: str, arguments: object = None, id: str = "c1") -> ToolUseBlock:
    return ToolUseBlock(id, f"mcp__raw__{name}", json.dumps(arguments or {}))


def received(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[tuple[Toolkit, McpClient, Path]]:
    log = tmp_path / "received.jsonl"
    client = raw(log, request_timeout=5, backoff=0.01)
    toolkit = Toolkit()
    with anyio.fail_after(20):
        # Trusted: these tests are about the transport; the permissions of MCP tools by
        # their hints are test_mcp_hints.py's.
        await register_mcp(toolkit, client, trust=True)
    yield toolkit, client, log
    with anyio.fail_after(20):
        await client.close()


# - names -


@given(st.text(max_size=120))
def test_every_tool_name_follows_the_name_rule_and_is_stable(name: str) -> None:
    first = tool_name("server", name)
    assert TOOL_NAME.fullmatch(first)
    assert first.startswith("mcp__server__")
    assert tool_name("server", name) == first


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_different_tool_names_stay_apart(left: str, right: str) -> None:
    if left != right:
        assert tool_name("s", left) != tool_name("s", right)


def test_a_clean_name_is_kept_and_a_dirty_one_cleaned() -> None:
    assert tool_name("fs", "read_file") == "mcp__fs__read_file"
    assert tool_name("fs", "a.b") != tool_name("fs", "a_b")
    assert tool_name("fs", "a.b").startswith("mcp__fs__a_b_")
    assert len(tool_name("fs", "x" * 200)) == 64


@pytest.mark.parametrize("name", ["", " ", "bad name", "a" * 33])
def test_a_client_name_must_fit_the_rule(name: str) -> None:
    with pytest.raises(ValueError, match="MCP client name"):
        McpClient.stdio(name, PYTHON, [RAW])


def test_timeouts_default_to_30_and_120_seconds_and_are_settable() -> None:
    client = McpClient.stdio("t", PYTHON, [RAW])
    assert (client.startup_timeout, client.request_timeout) == (30.0, 120.0)
    assert (DEFAULT_STARTUP_TIMEOUT, DEFAULT_REQUEST_TIMEOUT) == (30.0, 120.0)
    other = McpClient.streamable_http(
        "t", "http://127.0.0.1:1/mcp", startup_timeout=1, request_timeout=2
    )
    assert (other.startup_timeout, other.request_timeout) == (1, 2)
    with pytest.raises(ValueError, match="request_timeout"):
        McpClient.sse("t", "http://127.0.0.1:1/sse", request_timeout=0)


# - life -


async def test_calls_before_initialize_raise_the_study_error() -> None:
    client = raw()
    assert not client.is_initialized
    with pytest.raises(McpError, match="MCP client 'raw' not initialized"):
        await client.call_tool("echo", {"text": "x"})
    with pytest.raises(McpError, match="not initialized"):
        client.tools  # noqa: B018


async def test_initialize_is_idempotent_and_close_ends_it(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    client = raw(log)
    with anyio.fail_after(20):
        await client.initialize()
        await client.initialize()
        assert client.is_initialized
        assert client.protocol_version == "2025-11-25"
        await client.close()
        await client.close()
    assert "not initialized" in repr(client)
    methods = [message.get("method") for message in received(log)]
    assert methods.count("initialize") == 1
    with pytest.raises(McpError, match="not initialized"):
        await client.call_tool("echo", {"text": "x"})


async def test_a_server_that_cannot_start_is_an_error_naming_it() -> None:
    client = McpClient.stdio("gone", "/nonexistent/mcp-server", startup_timeout=5)
    with anyio.fail_after(20), pytest.raises(McpError, match="could not be reached"):
        await client.initialize()
    await client.close()


async def test_a_server_that_never_answers_at_startup_times_out() -> None:
    client = McpClient.stdio(
        "mute", PYTHON, ["-c", "import time; time.sleep(60)"], startup_timeout=0.5
    )
    with anyio.fail_after(20), pytest.raises(McpError, match=r"did not start within 0\.5 s"):
        await client.initialize()
    await client.close()


# - registration -


async def test_registration_lists_every_page_and_names_tools(
    kit: tuple[Toolkit, McpClient, Path],
) -> None:
    toolkit, client, log = kit
    names = toolkit.names()
    assert len(names) == len(client.tools) == 13  # pages of three
    assert "mcp__raw__echo" in names
    assert "mcp__raw__odd_name_with_spaces_9e953746" in names
    lists = [m for m in received(log) if m.get("method") == "tools/list"]
    assert len(lists) == 5
    tool = toolkit.get_tool("mcp__raw__echo")
    assert isinstance(tool, McpTool)
    assert tool.remote_name == "echo"
    assert tool.spec.mcp_server == "raw"


async def test_read_only_hint_flags_and_permissions(kit: tuple[Toolkit, McpClient, Path]) -> None:
    _, client, _ = kit
    toolkit = Toolkit()
    with anyio.fail_after(20):
        await register_mcp(toolkit, client)  # not trusted: the hints decide
    echo, add = toolkit.get_spec("mcp__raw__echo"), toolkit.get_spec("mcp__raw__add")
    assert echo is not None
    assert add is not None
    assert (echo.read_only, echo.concurrency_safe) == (True, True)
    assert (add.read_only, add.concurrency_safe) == (False, False)
    # A session with a permission mode: read-only runs, the rest asks (behaviour 102).
    rule = PermissionRule(tool_name="unrelated", behavior=PermissionBehavior.ALLOW)
    view = toolkit.view(ToolContextState(permissions=EMPTY_PERMISSIONS.with_rules([rule])))
    assert (await view.call_tool(call("echo", {"text": "hi"}))).state is ToolResultState.SUCCESS
    asked = await view.call_tool(call("add", {"a": 1, "b": 2}))
    assert asked.needs_approval
    # Not read-only asks even where nothing else would (a session with no rules).
    assert (await toolkit.call_tool(call("add", {"a": 1, "b": 2}))).needs_approval
    wipe = await toolkit.call_tool(call("wipe"))
    assert wipe.needs_approval
    assert "destructiveHint" in json.dumps(dict(wipe.metadata))


async def test_invalid_arguments_never_leave_the_process(
    kit: tuple[Toolkit, McpClient, Path],
) -> None:
    toolkit, _, log = kit
    result = await toolkit.call_tool(call("echo", {"text": ""}))
    assert result.state is ToolResultState.ERROR
    assert "text: expected at least 1 character" in result.content
    bad = await toolkit.call_tool(call("echo", {"text": "x", "extra": 1}))
    assert bad.state is ToolResultState.ERROR
    # The server's schema is draft 7: its `dependencies` is read as draft 7 has it.
    dependent = await toolkit.call_tool(call("echo", {"text": "x", "times": 2}))
    assert dependent.state is ToolResultState.ERROR
    assert "sep" in dependent.content
    assert not [m for m in received(log) if m.get("method") == "tools/call"]


async def test_enable_overrides_disable_and_groups_are_checked_first() -> None:
    toolkit = Toolkit()
    with pytest.raises(RegistrationError, match="Tool group 'nope' does not exist"):
        await register_mcp(toolkit, raw(), group="nope")  # never connects
    toolkit.create_group("remote", "Remote tools")
    client = raw()
    with anyio.fail_after(20):
        tools = await register_mcp(
            toolkit, client, group="remote", enable=["echo", "add"], disable=["echo"]
        )
    try:
        assert [tool.spec.name for tool in tools] == ["mcp__raw__echo", "mcp__raw__add"]
        assert toolkit.group_of("mcp__raw__echo") == frozenset({"remote"})
        other = Toolkit()
        with anyio.fail_after(20):
            kept = await register_mcp(other, client, disable=["echo", "die", "wipe"])
        assert "mcp__raw__echo" not in {tool.spec.name for tool in kept}
        assert len(kept) == len(client.tools) - 3
    finally:
        await client.close()


async def test_presets_are_hidden_from_the_schema_and_sent() -> None:
    toolkit = Toolkit()
    client = raw()
    with anyio.fail_after(20):
        await register_mcp(toolkit, client, presets={"add": {"b": 40}}, enable=["add"], trust=True)
    try:
        spec = toolkit.get_spec("mcp__raw__add")
        assert spec is not None
        properties = spec.parameters_schema()["properties"]
        assert isinstance(properties, dict)
        assert "b" not in properties
        result = await toolkit.call_tool(call("add", {"a": 2}))
        assert result.structured == {"sum": 42}
    finally:
        await client.close()


async def test_remove_mcp_removes_the_tools_and_closes_the_client(
    kit: tuple[Toolkit, McpClient, Path],
) -> None:
    toolkit, client, _ = kit
    removed = await remove_mcp(toolkit, "raw")
    assert len(removed) == 13
    assert len(toolkit) == 0
    assert not client.is_initialized
    assert await remove_mcp(toolkit, "raw") == ()
    assert await remove_mcp(toolkit, "never-registered") == ()


async def test_remove_mcp_with_removal_disabled_is_a_logged_no_op(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toolkit = Toolkit(ToolkitConfig(allow_removal=False))
    client = raw()
    with anyio.fail_after(20):
        await register_mcp(toolkit, client, enable=["add"], trust=True)
    try:
        with caplog.at_level(logging.WARNING, logger="ferrotool.mcp"):
            assert await remove_mcp(toolkit, "raw") == ()
        assert toolkit.names() == ("mcp__raw__add",)
        assert client.is_initialized
        assert "MCP server 'raw' not removed: removal is disabled" in caplog.text
        assert (await toolkit.call_tool(call("add", {"a": 2, "b": 3}))).structured == {"sum": 5}
    finally:
        await client.close()


async def test_list_changed_refreshes_the_tools(kit: tuple[Toolkit, McpClient, Path]) -> None:
    toolkit, _, _ = kit
    before = toolkit.snapshot()
    assert (await toolkit.call_tool(call("grow"))).content == "grown"
    with anyio.fail_after(10):
        while "mcp__raw__extra0" not in toolkit:
            await anyio.sleep(0.01)
    assert "mcp__raw__extra0" not in before  # a snapshot never changes
    assert (await toolkit.call_tool(call("extra0"))).content == "extra0"


# - results -


async def test_every_content_kind_becomes_a_block(kit: tuple[Toolkit, McpClient, Path]) -> None:
    toolkit, _, _ = kit
    result = await toolkit.call_tool(call("media"))
    assert result.state is ToolResultState.SUCCESS
    text, image, audio, resource_text, blob, link = result.output
    assert text == TextBlock("hello")
    assert image == ImageBlock(media_type="image/png", data="aW1n")
    assert audio == JsonBlock({"type": "audio", "data": "c25k", "mimeType": "audio/wav"})
    assert resource_text == TextBlock("A")
    resource: dict[str, JsonValue] = {"uri": "file:///b.bin", "mimeType": "x/bin", "blob": "AAE="}
    assert blob == JsonBlock({"type": "resource", "resource": resource})
    assert link == JsonBlock({"type": "resource_link", "uri": "file:///c.md", "name": "c"})


async def test_structured_content_is_checked_against_the_output_schema(
    kit: tuple[Toolkit, McpClient, Path],
) -> None:
    toolkit, _, _ = kit
    good = await toolkit.call_tool(call("add", {"a": 2, "b": 3}))
    assert (good.content, good.structured) == ("5", {"sum": 5})
    spec = toolkit.get_spec("mcp__raw__add")
    assert spec is not None
    assert spec.output_schema_json is not None
    bad = await toolkit.call_tool(call("wrong_output"))
    assert bad.state is ToolResultState.ERROR
    assert "is not of type 'integer'" in bad.content


async def test_is_error_becomes_an_error_with_the_texts(
    kit: tuple[Toolkit, McpClient, Path],
) -> None:
    toolkit, _, _ = kit
    result = await toolkit.call_tool(call("fail"))
    assert (result.state, result.content) == (ToolResultState.ERROR, "Error: it broke")


async def test_progress_reaches_the_emitter(kit: tuple[Toolkit, McpClient, Path]) -> None:
    toolkit, _, _ = kit
    chunks: list[ToolProgress] = []
    result = await toolkit.call_tool(call("progress", id="p1"), on_progress=chunks.append)
    assert result.content == "done"
    assert [(chunk.progress, chunk.total, chunk.chunk) for chunk in chunks] == [
        (1.0, 2.0, TextBlock("step 1")),
        (2.0, 2.0, TextBlock("step 2")),
    ]
    assert {chunk.call_id for chunk in chunks} == {"p1"}


async def test_meta_comes_from_the_runtime_context(kit: tuple[Toolkit, McpClient, Path]) -> None:
    toolkit, _, _ = kit
    with_meta = await toolkit.call_tool(call("meta"), RuntimeContext.of(McpMeta({"trace": "t1"})))
    assert json.loads(with_meta.content)["trace"] == "t1"
    without = await toolkit.call_tool(call("meta"), RuntimeContext.of(McpMeta()))
    assert "trace" not in json.loads(without.content)


async def test_a_cancelled_call_sends_notifications_cancelled(
    kit: tuple[Toolkit, McpClient, Path],
) -> None:
    toolkit, _, log = kit
    with anyio.move_on_after(0.5):
        await toolkit.call_tool(call("slow", {"seconds": 5}))
    with anyio.fail_after(10):
        while not [m for m in received(log) if m.get("method") == "notifications/cancelled"]:
            await anyio.sleep(0.02)
    slow = next(m for m in received(log) if m.get("method") == "tools/call")
    cancel = next(m for m in received(log) if m.get("method") == "notifications/cancelled")
    assert cancel["params"]["requestId"] == slow["id"]  # type: ignore[index]


# - real servers, both eras, every transport -


async def test_mcp_server_time_over_stdio() -> None:
    command = str(Path(sys.executable).with_name("mcp-server-time"))
    client = McpClient.stdio("time", command, ["--local-timezone", "UTC"])
    toolkit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(toolkit, client, trust=True)
        try:
            assert "mcp__time__get_current_time" in toolkit
            result = await toolkit.call_tool(
                ToolUseBlock("t", "mcp__time__get_current_time", '{"timezone": "Europe/Paris"}')
            )
            assert result.state is ToolResultState.SUCCESS
            assert "Europe/Paris" in result.content
            bad = await toolkit.call_tool(ToolUseBlock("t", "mcp__time__get_current_time", "{}"))
            assert bad.state is ToolResultState.ERROR
            assert "timezone" in bad.content
        finally:
            await client.close()


async def test_a_stdio_server_starts_when_sys_stderr_has_no_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A notebook's (or a capture's) sys.stderr has no file descriptor for the child's stderr.
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    client = McpClient.stdio("sdk", PYTHON, [SDK])
    toolkit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(toolkit, client, trust=True)
        try:
            result = await toolkit.call_tool(ToolUseBlock("e", "mcp__sdk__echo", '{"text": "hi"}'))
            assert result.content == "hi"
        finally:
            await client.close()


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_both_protocol_eras_over_stdio(mode: str, version: str) -> None:
    client = McpClient.stdio("sdk", PYTHON, [SDK], mode=mode)
    toolkit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(toolkit, client, trust=True)
        try:
            assert client.protocol_version == version
            result = await toolkit.call_tool(ToolUseBlock("a", "mcp__sdk__add", '{"a": 1, "b": 2}'))
            assert (result.content, result.structured) == ("3", {"result": 3})
            chunks: list[ToolProgress] = []
            await toolkit.call_tool(
                ToolUseBlock("p", "mcp__sdk__progress", "{}"), on_progress=chunks.append
            )
            assert len(chunks) == 2
        finally:
            await client.close()


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_streamable_http_sends_each_users_headers(
    sdk_http: int, mode: str, version: str
) -> None:
    client = McpClient.streamable_http(
        "sdk",
        f"http://127.0.0.1:{sdk_http}/mcp",
        mode=mode,
        request_headers=lambda context: {"Authorization": f"Bearer {context.user_id}"},
    )
    toolkit = Toolkit()
    seen: dict[str, str] = {}

    async def whoami(user: str) -> None:
        result = await toolkit.call_tool(
            ToolUseBlock(user, "mcp__sdk__whoami", "{}"), RuntimeContext(user_id=user)
        )
        seen[user] = result.content

    with anyio.fail_after(30):
        await register_mcp(toolkit, client, trust=True)
        try:
            assert client.protocol_version == version
            async with anyio.create_task_group() as group:
                for user in ("alice", "bob", "carol"):
                    group.start_soon(whoami, user)
        finally:
            await client.close()
    assert seen == {user: f"Bearer {user}" for user in ("alice", "bob", "carol")}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sse_with_fixed_headers(sdk_sse: int, mode: str) -> None:
    client = McpClient.sse(
        "sdk", f"http://127.0.0.1:{sdk_sse}/sse", headers={"Authorization": "Bearer k"}, mode=mode
    )
    toolkit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(toolkit, client, trust=True)
        try:
            result = await toolkit.call_tool(ToolUseBlock("w", "mcp__sdk__whoami", "{}"))
            assert result.content == "Bearer k"
        finally:
            await client.close()
