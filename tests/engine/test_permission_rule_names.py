"""Rule tool names: ``*`` globs, and a rule that can never match is refused when it is made.

``*`` is the only special character: it matches any run (empty included) of the characters a
tool name has, and the pattern matches the whole name. Every other character of a pattern is a
tool-name character (letters, digits, ``_``, ``-``); there is no escaping, since no tool name
contains ``*``. A rule whose name no tool can have (empty, other characters, more than 64 of
them) raises `ValueError` naming the rule.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ferrotool import (
    JsonValue,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
    ToolBase,
    ToolCallParam,
    ToolContextState,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    tool,
)

ALLOW, DENY, ASK = PermissionBehavior.ALLOW, PermissionBehavior.DENY, PermissionBehavior.ASK


def rule(
    name: str, behavior: PermissionBehavior = DENY, content: str | None = None
) -> PermissionRule:
    return PermissionRule(tool_name=name, behavior=behavior, rule_content=content, source="test")


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("read_file", ["read_file"], ["read_files", "xread_file", "read_fil", "READ_FILE"]),
        ("read*", ["read", "read_file", "readme"], ["unread", "xread_file", "Read_file"]),
        ("read_*", ["read_", "read_file"], ["readme", "read", "unread_file"]),
        ("*_file", ["read_file", "_file"], ["read_files", "read_file_", "readfile"]),
        ("*", ["a", "read_file", "mcp__github__x", "-"], []),
        ("**", ["a", "read_file"], []),
        (
            "mcp__github__*",
            ["mcp__github__create_issue", "mcp__github__"],
            ["mcp__github_x", "mcp__githubx__create", "mcp__gitlab__create", "xmcp__github__a"],
        ),
        ("a*b*c", ["abc", "a_b_c", "aXbYc", "abbc"], ["ab", "acb", "abcd", "xabc"]),
        ("a-*", ["a-b", "a-"], ["a_b", "ab"]),
    ],
)
def test_a_pattern_matches_whole_names_and_nothing_more(
    pattern: str, matches: list[str], misses: list[str]
) -> None:
    made = rule(pattern)
    for name in matches:
        assert made.matches_tool(name), (pattern, name)
    for name in misses:
        assert not made.matches_tool(name), (pattern, name)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        ("read.file", repr(".")),  # a regex dot would match read_file: refused, not a wildcard
        ("read.*", repr(".")),
        ("read_fil?", repr("?")),
        ("read_[a-z]ile", repr("[")),
        ("read|write", repr("|")),
        ("(read)", repr("(")),
        ("read\\w*", repr("\\")),
        ("^read$", repr("^")),
        ("read+", repr("+")),
        ("read file", repr(" ")),
        ("read_file\n", repr("\n")),
        ("r\u00e9ad", repr("\u00e9")),
        ("x" * 65, "65 characters"),
        ("a" * 40 + "*" + "b" * 25, "65 characters"),
    ],
)
def test_a_rule_no_tool_name_can_match_is_refused_naming_it(name: str, why: str) -> None:
    with pytest.raises(ValueError, match="can never match") as refused:
        rule(name, DENY, "x")
    message = str(refused.value)
    assert repr(name) in message  # the rule is named
    assert "deny" in message
    assert why in message


def test_names_at_the_limits_are_accepted() -> None:
    assert rule("x" * 64).matches_tool("x" * 64)
    assert rule("x" * 64 + "*").matches_tool("x" * 64)  # '*' may match nothing
    assert rule("*" * 100).matches_tool("a")
    assert rule("-").matches_tool("-")


def test_a_non_string_content_is_refused() -> None:
    with pytest.raises(ValueError, match="rule_content"):
        PermissionRule(tool_name="x", behavior=DENY, rule_content=3)  # type: ignore[arg-type]


def test_reading_a_stored_rule_that_can_never_match_drops_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A session stored before rules were checked still loads; its dead rule decided nothing."""
    good = rule("read_*").to_dict()
    dead = {**good, "tool_name": "read.file"}
    raw = PermissionContextState().with_rules([rule("read_*")]).to_dict()
    raw["deny_rules"] = {"read_*": [good], "read.file": [dead]}
    with caplog.at_level(logging.WARNING, logger="ferrotool"):
        state = PermissionContextState.from_dict(raw)
    assert state.deny_rules == {"read_*": (rule("read_*"),)}
    assert "read.file" in caplog.text
    with pytest.raises(ValueError, match="can never match"):
        PermissionRule.from_dict(dead)


def test_rules_for_a_name_exact_first_then_patterns_in_order() -> None:
    exact = rule("read_file", DENY, "a")
    star = rule("*", DENY, "b")
    prefix = rule("read_*", DENY, "c")
    other = rule("write_*", DENY, "d")
    state = PermissionContextState().with_rules([star, prefix, exact, other])
    assert state.rules_for(DENY, "read_file") == (exact, star, prefix)
    assert state.rules_for(DENY, "write_x") == (star, other)
    assert state.rules_for(ALLOW, "read_file") == ()


class Probe(ToolBase[dict[str, Any]]):
    """Matches a rule's content against its ``path``."""

    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    def __init__(self, name: str) -> None:
        super().__init__(name=name)

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return rule_content is None or rule_content == tool_input.get("path")

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.passthrough("no opinion")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"{self.name} ran"


async def test_the_engine_applies_pattern_rules() -> None:
    kit = Toolkit()
    for name in ("read_file", "readme", "mcp__github__create_issue", "mcp__gitlab__create"):
        kit.register(Probe(name))
    rules = [
        rule("read_*", DENY),  # read_file, not readme
        rule("mcp__github__*", ASK),
        rule("*", ALLOW),
        rule("*", DENY, "/etc/shadow"),  # content still goes to each tool's match_rule
    ]
    state = ToolContextState(permissions=PermissionContextState().with_rules(rules))
    view = kit.snapshot().view(state)
    batch = await view.call_tools(
        [
            ToolUseBlock("a", "read_file", '{"path": "x"}'),
            ToolUseBlock("b", "readme", '{"path": "x"}'),
            ToolUseBlock("c", "mcp__github__create_issue", '{"path": "x"}'),
            ToolUseBlock("d", "mcp__gitlab__create", '{"path": "x"}'),
            ToolUseBlock("e", "readme", '{"path": "/etc/shadow"}'),
        ]
    )
    a, b, c, d, e = batch.results
    assert a.state is ToolResultState.DENIED
    assert "Rule: read_*" in str(a.metadata["permission"])
    assert (b.state, b.content) == (ToolResultState.SUCCESS, "readme ran")
    assert c.needs_approval
    assert (d.state, d.content) == (ToolResultState.SUCCESS, "mcp__gitlab__create ran")
    assert e.state is ToolResultState.DENIED


async def test_a_wildcard_allow_rule_does_not_widen_the_shell() -> None:
    """The shell's check that an allow rule names the program reads pattern rules too."""
    from ferrotool.builtins import ShellCommandTool

    shell = ShellCommandTool(sandbox=False)
    name = shell.name
    exact = PermissionContextState().with_rules([rule(name, ALLOW, "env *")])
    wild = PermissionContextState().with_rules([rule(name[:4] + "*", ALLOW, "env *")])
    command: dict[str, JsonValue] = {"command": "env curl x"}  # "env *" names env, not curl
    decisions = [
        await shell.check_permissions(command, PermissionContext(state=state))
        for state in (exact, wild)
    ]
    assert decisions[0] == decisions[1]
    assert decisions[0].behavior is ASK
    assert (decisions[0].reason or "").startswith("safety")


@tool
def plain() -> str:
    """No check of its own."""
    return "ran"


async def test_bypass_with_a_star_deny_rule_denies_everything() -> None:
    kit = Toolkit()
    kit.register(plain)
    bypass = PermissionContextState(mode=PermissionMode.BYPASS).with_rules([rule("*", DENY)])
    view = kit.snapshot().view(ToolContextState(permissions=bypass))
    result = await view.call_tool(ToolUseBlock("a", "plain", "{}"))
    assert result.state is ToolResultState.DENIED
