"""MCP tools by their hints, an operator's trust, and listings that hold bad tools.

The servers are real processes over stdio: ``raw_stdio.py`` lists hand-made definitions
(``RAW_TOOLS``), so every combination of hints, and definitions no SDK server would send, reach
the client exactly as written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp_support import PYTHON, RAW

from ferrotool import (
    EMPTY_PERMISSIONS,
    PermissionBehavior,
    PermissionMode,
    PermissionRule,
    ToolContextState,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._permissions.state import PermissionContextState
from ferrotool.mcp import McpClient, McpTool, RejectedTool, register_mcp, tool_name
from ferrotool.mcp.tool import mcp_tools

OBJECT: dict[str, object] = {"type": "object", "properties": {"n": {"type": "integer"}}}
HINTS: dict[str, bool | None] = {"t": True, "f": False, "m": None}
"""A hint's three spellings in a tool's name: true, false, missing."""


def hinted(read_only: bool | None, destructive: bool | None) -> dict[str, object]:
    annotations: dict[str, object] = {}
    if read_only is not None:
        annotations["readOnlyHint"] = read_only
    if destructive is not None:
        annotations["destructiveHint"] = destructive
    if destructive is False:  # idempotentHint makes the tool idempotent; openWorldHint nothing
        annotations.update(idempotentHint=True, openWorldHint=False)
    letter = {True: "t", False: "f", None: "m"}
    return {
        "name": f"ro_{letter[read_only]}_de_{letter[destructive]}",
        "description": "A tool with these hints.",
        "inputSchema": OBJECT,
        "annotations": annotations,
    }


HINT_TABLE = [hinted(ro, de) for ro in HINTS.values() for de in HINTS.values()]


def server(
    tmp_path: Path,
    tools: list[dict[str, object]],
    more: list[dict[str, object]] | None = None,
) -> McpClient:
    listing = tmp_path / "tools.json"
    listing.write_text(json.dumps(tools), encoding="utf-8")
    env = {"RAW_TOOLS": str(listing)}
    if more is not None:
        added = tmp_path / "more-tools.json"
        added.write_text(json.dumps(more), encoding="utf-8")
        env["RAW_MORE_TOOLS"] = str(added)
    return McpClient.stdio("raw", PYTHON, [RAW], env=env, request_timeout=5)


def use(remote: str, arguments: Mapping[str, object] | None = None) -> ToolUseBlock:
    return ToolUseBlock(f"c-{remote}", tool_name("raw", remote), json.dumps(arguments or {}))


@pytest.fixture
async def hinted_server(tmp_path: Path) -> AsyncIterator[McpClient]:
    client = server(tmp_path, HINT_TABLE)
    with anyio.fail_after(20):
        await client.initialize()
    yield client
    with anyio.fail_after(20):
        await client.close()


# - the hint table -

UNRELATED = PermissionRule(tool_name="unrelated", behavior=PermissionBehavior.ALLOW)
STATES: dict[str, PermissionContextState | None] = {
    "no rules": None,  # the light path of a session with nothing set
    "default": EMPTY_PERMISSIONS.with_rules([UNRELATED]),
    "accept_edits": EMPTY_PERMISSIONS.with_mode(PermissionMode.ACCEPT_EDITS),
    "explore": EMPTY_PERMISSIONS.with_mode(PermissionMode.EXPLORE),
    "bypass": EMPTY_PERMISSIONS.with_mode(PermissionMode.BYPASS),
    "dont_ask": EMPTY_PERMISSIONS.with_mode(PermissionMode.DONT_ASK),
}


def expected(state: str, read_only: bool, trusted: bool) -> str:
    """``ran``, ``asked`` or ``denied``: the decision table this module checks."""
    if read_only:
        return "ran"  # readOnlyHint: true runs without asking, in every mode
    if state == "explore":
        return "denied"  # explore mode is read-only, trust or not
    if trusted or state == "bypass":
        return "ran"
    if state == "dont_ask":
        return "denied"
    return "asked"  # not readOnlyHint: true, whatever destructiveHint says


def outcome(result: ToolResultBlock) -> str:
    if result.needs_approval:
        return "asked"
    if result.state is ToolResultState.DENIED:
        return "denied"
    assert result.state is ToolResultState.SUCCESS, result.content
    return "ran"


async def decisions(
    toolkit: Toolkit, state: PermissionContextState | None
) -> dict[str, ToolResultBlock]:
    caller = toolkit if state is None else toolkit.view(ToolContextState(permissions=state))
    results = {}
    for tool in HINT_TABLE:
        remote = str(tool["name"])
        results[remote] = await caller.call_tool(use(remote, {"n": 1}))
    return results


TRUST: dict[str, tuple[bool | tuple[str, ...], Callable[[str], bool]]] = {
    "hints": (False, lambda name: False),
    "whole server": (True, lambda name: True),
    "two tools": (("ro_f_de_m", "ro_m_de_t"), lambda name: name in ("ro_f_de_m", "ro_m_de_t")),
}


@pytest.mark.parametrize("trust", list(TRUST))
async def test_hint_table_by_mode_and_trust(hinted_server: McpClient, trust: str) -> None:
    given, trusted = TRUST[trust]
    toolkit = Toolkit()
    with anyio.fail_after(20):
        await register_mcp(toolkit, hinted_server, trust=given)
        table = {state: await decisions(toolkit, value) for state, value in STATES.items()}
    for state, results in table.items():
        for remote, result in results.items():
            read_only = remote.startswith("ro_t")
            want = expected(state, read_only, trusted(remote))
            assert outcome(result) == want, (state, remote, result.content)


async def test_an_ask_names_the_hint_it_comes_from(hinted_server: McpClient) -> None:
    toolkit = Toolkit()
    with anyio.fail_after(20):
        await register_mcp(toolkit, hinted_server)
        results = await decisions(toolkit, None)
    for remote, result in results.items():
        if remote.startswith("ro_t"):
            continue
        reason = json.dumps(dict(result.metadata))
        if remote.endswith("de_f"):
            assert "not read-only" in reason
            assert "destructiveHint: false" in reason
        elif remote.endswith("de_m"):
            assert "destructiveHint missing" in reason
        else:
            assert "destructiveHint" in reason


async def test_the_flags_follow_the_spec_defaults(hinted_server: McpClient) -> None:
    toolkit = Toolkit()
    with anyio.fail_after(20):
        await register_mcp(toolkit, hinted_server, trust=("ro_f_de_f",))
    for tool in HINT_TABLE:
        remote = str(tool["name"])
        found = toolkit.get_tool(tool_name("raw", remote))
        assert isinstance(found, McpTool)
        read_only = remote.startswith("ro_t")
        assert (found.spec.read_only, found.spec.concurrency_safe) == (read_only, read_only)
        # Idempotent when read-only or so hinted (the de_f tools say idempotentHint: true).
        assert found.spec.idempotent == (read_only or remote.endswith("de_f"))
        # A missing destructiveHint is destructive (the spec's default); a read-only tool never is.
        assert found.destructive == (not read_only and not remote.endswith("de_f"))
        assert found.trusted == (remote == "ro_f_de_f")


async def test_trust_never_beats_a_deny_rule_or_an_ask_rule(hinted_server: McpClient) -> None:
    toolkit = Toolkit()
    with anyio.fail_after(20):
        await register_mcp(toolkit, hinted_server, trust=True)
    deny = PermissionRule(tool_name=tool_name("raw", "ro_m_de_m"), behavior=PermissionBehavior.DENY)
    ask = PermissionRule(tool_name=tool_name("raw", "ro_f_de_f"), behavior=PermissionBehavior.ASK)
    for mode in (PermissionMode.DEFAULT, PermissionMode.BYPASS, PermissionMode.DONT_ASK):
        state = EMPTY_PERMISSIONS.with_mode(mode).with_rules([deny, ask])
        view = toolkit.view(ToolContextState(permissions=state))
        with anyio.fail_after(20):
            denied = await view.call_tool(use("ro_m_de_m"))
            asked = await view.call_tool(use("ro_f_de_f"))
            ran = await view.call_tool(use("ro_t_de_t"))
        assert denied.state is ToolResultState.DENIED
        # the ask rule stands (in DONT_ASK mode, whoever handles asks may deny it instead)
        assert asked.needs_approval or (
            mode is PermissionMode.DONT_ASK and asked.state is ToolResultState.DENIED
        )
        assert ran.state is ToolResultState.SUCCESS


async def test_an_allow_rule_lets_one_untrusted_tool_run(hinted_server: McpClient) -> None:
    toolkit = Toolkit()
    with anyio.fail_after(20):
        await register_mcp(toolkit, hinted_server)
    allow = PermissionRule(
        tool_name=tool_name("raw", "ro_m_de_m"), behavior=PermissionBehavior.ALLOW
    )
    view = toolkit.view(ToolContextState(permissions=EMPTY_PERMISSIONS.with_rules([allow])))
    with anyio.fail_after(20):
        assert (await view.call_tool(use("ro_m_de_m"))).state is ToolResultState.SUCCESS
        assert (await view.call_tool(use("ro_m_de_f"))).needs_approval


@pytest.mark.parametrize("bad", ["echo", ["a", 1], 3])
async def test_trust_takes_a_flag_or_a_collection_of_names(bad: object) -> None:
    client = McpClient.stdio("never", PYTHON, [RAW])
    with pytest.raises(TypeError, match="trust"):
        await register_mcp(Toolkit(), client, trust=bad)  # type: ignore[arg-type]
    assert not client.is_initialized  # refused before connecting


# - bad tools in a listing -

CYCLE: dict[str, object] = {
    "type": "object",
    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    "properties": {"x": {"$ref": "#/$defs/a"}},
}
BAD_LISTING: list[dict[str, object]] = [
    {"name": "good_read", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "cyclic", "inputSchema": CYCLE},
    {"name": "twice", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "good_write", "inputSchema": OBJECT},
    {"name": "twice", "inputSchema": OBJECT, "annotations": {"destructiveHint": True}},
    {
        "name": "bad_keyword",
        "inputSchema": {"type": "object", "properties": {"x": {"minLength": "5"}}},
    },
    {
        "name": "bad_pattern",
        "inputSchema": {"type": "object", "properties": {"x": {"pattern": "("}}},
    },
    {"name": "", "inputSchema": OBJECT},
    {"name": "bell\u0007name", "inputSchema": OBJECT},
    {"name": "odd.name/with spaces", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {
        "name": "huge_number",
        "inputSchema": OBJECT,
        "outputSchema": {"type": "object", "maximum": 2**70},
    },
    {"name": "not_an_object", "inputSchema": {"type": "string"}},
    {"name": "no_schema"},
    {"name": 7, "inputSchema": OBJECT},
    {"inputSchema": OBJECT},
]
GOOD = ["good_read", "good_write", "odd.name/with spaces"]
BAD = ["cyclic", "twice", "bad_keyword", "bad_pattern", "", "bell\u0007name"]
BAD += ["huge_number", "not_an_object", "no_schema", "7", "#2 of its page"]


async def test_bad_tools_are_left_out_and_named_the_good_ones_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    client = server(tmp_path, BAD_LISTING)
    toolkit = Toolkit()
    caplog.set_level(logging.WARNING, logger="ferrotool.mcp")
    try:
        with anyio.fail_after(20):
            registered = await register_mcp(toolkit, client, trust=("good_write",))
        names = [tool.spec.name for tool in registered]
        assert names == [tool_name("raw", name) for name in GOOD]
        rejected = client.rejected_tools
        assert sorted(item.name for item in rejected) == sorted(set(BAD))
        reasons = {item.name: item.reason for item in rejected}
        assert "cycle" in reasons["cyclic"]
        assert "2 tools" in reasons["twice"]
        assert "minLength" in reasons["bad_keyword"]
        assert "empty" in reasons[""]
        assert "the MCP SDK refuses its definition" in reasons["not_an_object"]
        assert "inputSchema" in reasons["no_schema"]
        assert "control character" in reasons["bell\u0007name"]
        logged = "\n".join(record.getMessage() for record in caplog.records)
        for name in set(BAD):
            assert f"MCP server 'raw' tool {name!r} is left out" in logged
        with anyio.fail_after(20):
            read = await toolkit.call_tool(use("good_read", {"n": 2}))
            write = await toolkit.call_tool(use("good_write", {"n": 3}))
            odd = await toolkit.call_tool(use("odd.name/with spaces"))
            twice = await toolkit.call_tool(use("twice"))
        assert json.loads(read.content) == {"tool": "good_read", "arguments": {"n": 2}}
        assert json.loads(write.content) == {"tool": "good_write", "arguments": {"n": 3}}
        assert json.loads(odd.content)["tool"] == "odd.name/with spaces"
        assert twice.state is ToolResultState.ERROR  # never registered
    finally:
        with anyio.fail_after(20):
            await client.close()


async def test_a_changed_listing_with_a_bad_tool_keeps_the_good_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first: list[dict[str, object]] = [{"name": "relist", "inputSchema": OBJECT}, BAD_LISTING[0]]
    more: list[dict[str, object]] = [
        {"name": "later", "inputSchema": OBJECT},
        BAD_LISTING[1],
        BAD_LISTING[1],
    ]
    client = server(tmp_path, first, more)
    toolkit = Toolkit()
    caplog.set_level(logging.WARNING, logger="ferrotool.mcp")
    try:
        with anyio.fail_after(20):
            await register_mcp(toolkit, client, trust=("relist",))
            assert not client.rejected_tools
            assert (await toolkit.call_tool(use("relist"))).content == "relisted"
            while tool_name("raw", "later") not in toolkit:
                await anyio.sleep(0.01)
        assert tool_name("raw", "good_read") in toolkit
        assert tool_name("raw", "cyclic") not in toolkit
        assert [item.name for item in client.rejected_tools] == ["cyclic"]
        assert "2 tools" in client.rejected_tools[0].reason  # listed twice, and cyclic
        logged = "\n".join(record.getMessage() for record in caplog.records)
        assert "MCP server 'raw' tool 'cyclic' is left out" in logged
        with anyio.fail_after(20):
            later = await toolkit.call_tool(use("later"))
        assert later.needs_approval  # a new tool is not trusted: "relist" was
    finally:
        with anyio.fail_after(20):
            await client.close()


def test_a_clean_listing_rejects_nothing() -> None:
    client = McpClient.stdio("s", PYTHON, [RAW])
    listing = tuple(types.Tool.model_validate(tool) for tool in HINT_TABLE)
    tools, rejected = mcp_tools(client, listing)
    assert len(tools) == len(HINT_TABLE)
    assert rejected == ()


def test_duplicates_are_found_among_the_enabled_tools_only() -> None:
    client = McpClient.stdio("s", PYTHON, [RAW])
    listing = tuple(types.Tool.model_validate(tool) for tool in BAD_LISTING[:5])
    tools, rejected = mcp_tools(client, listing, enable=frozenset({"good_read", "twice"}))
    assert [tool.remote_name for tool in tools] == ["good_read"]
    assert rejected == (RejectedTool("twice", rejected[0].reason),)
    assert "2 tools" in rejected[0].reason


def test_an_input_schema_that_is_not_an_object_schema_is_rejected() -> None:
    # The SDK refuses such a definition, and the listing leaves it out (see above); one that
    # reaches the conversion another way is still checked alone.
    client = McpClient.stdio("s", PYTHON, [RAW])
    listing = (
        types.Tool.model_validate({"name": "text", "inputSchema": {"type": "string"}}),
        types.Tool.model_validate({"name": "fine", "inputSchema": OBJECT}),
    )
    tools, rejected = mcp_tools(client, listing)
    assert [tool.remote_name for tool in tools] == ["fine"]
    assert [item.name for item in rejected] == ["text"]
    assert "not an object schema" in rejected[0].reason
