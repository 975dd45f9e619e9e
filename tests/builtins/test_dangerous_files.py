"""Dangerous files, per mode: every one asks for safety, whatever the mode and the allow rules.

For each permission mode (with an allow rule for every file tool, so that only the safety check
stands in the way) a write, an insert and a read of each dangerous path is decided by the
engine and then called through a view: the decision is a safety ask, the call does not run and
the file is untouched. The same table shows that ordinary files next to them are decided by the
mode and the rules as usual.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ferrotool import (
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionMode,
    PermissionRule,
    ToolContextState,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    WorkingDirectory,
)
from ferrotool._permissions.engine import decide
from ferrotool._permissions.paths import is_dangerous_path
from ferrotool.builtins.files import (
    INSERT_TEXT_FILE,
    VIEW_TEXT_FILE,
    WRITE_TEXT_FILE,
    FileToolBase,
    file_tools,
)

DANGEROUS = (
    # shell start-up files
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".inputrc",
    ".envrc",
    ".config/fish/config.fish",
    ".config/fish/functions/ls.fish",
    # git, hooks, CI, agents' own configuration
    ".gitconfig",
    ".gitmodules",
    ".git-credentials",
    ".config/git/config",
    ".git/config",
    ".git/hooks/pre-commit",
    "sub/.git/config",
    ".husky/pre-commit",
    ".github/workflows/ci.yml",
    ".pre-commit-config.yaml",
    ".gitlab-ci.yml",
    ".vscode/tasks.json",
    ".idea/workspace.xml",
    ".mcp.json",
    ".claude/settings.json",
    ".github/actions/setup/action.yml",
    ".circleci/config.yml",
    ".gitlab/ci/build.yml",
    ".travis.yml",
    "Jenkinsfile",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    ".woodpecker.yml",
    ".woodpecker/build.yml",
    ".buildkite/pipeline.yml",
    ".devcontainer/devcontainer.json",
    ".ripgreprc",
    ".cargo/config.toml",
    ".cargo/config",
    ".config/pip/pip.conf",
    ".cursor/mcp.json",
    ".cursorrules",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".windsurf/rules.md",
    ".claude.json",
    # credentials
    ".aws/credentials",
    ".aws/config",
    ".docker/config.json",
    ".kube/config",
    ".gnupg/pubring.kbx",
    ".pgpass",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".ssh/config",
    ".ssh/authorized_keys",
    ".ssh/known_hosts",
    "id_rsa",
    "keys/id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "server.pem",
    ".env",
    ".env.prod",
    ".env.local",
    ".ENV.Production",
    "sub/.Bashrc",
)
"""Paths below the base that are dangerous (every file named as missed, and the rest)."""

ORDINARY = (
    "notes.txt",
    "src/env.py",
    "environment.md",
    "id_rsa_notes.txt",
    ".github/README.md",
    ".config/other.conf",
    "docs/bashrc.md",
    ".github/CODEOWNERS",
    "ci/Jenkinsfile.md",
    "src/cargo/config.rs",
    "AGENTS.md",
)
"""Paths below the base that are not."""

MODES = (
    PermissionMode.DEFAULT,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.BYPASS,
    PermissionMode.DONT_ASK,
    PermissionMode.EXPLORE,
)
WRITERS = (WRITE_TEXT_FILE, INSERT_TEXT_FILE)


def _state(mode: PermissionMode, base: Path) -> PermissionContextState:
    """``mode``, every file tool allowed by a rule, the base a working folder."""
    rules = {
        name: (PermissionRule(tool_name=name, behavior=PermissionBehavior.ALLOW, rule_content="*"),)
        for name in (VIEW_TEXT_FILE, WRITE_TEXT_FILE, INSERT_TEXT_FILE)
    }
    return PermissionContextState(mode=mode, allow_rules=rules).with_working_directory(
        "base", WorkingDirectory(str(base))
    )


def _arguments(name: str, path: str) -> dict[str, object]:
    if name == VIEW_TEXT_FILE:
        return {"file_path": path}
    if name == INSERT_TEXT_FILE:
        return {"file_path": path, "content": "evil", "line_number": 1}
    return {"file_path": path, "content": "evil"}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "base"
    for path in (*DANGEROUS, *ORDINARY):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("original\n")
    return root


def _tools(base: Path) -> dict[str, FileToolBase]:
    return {tool.name: tool for tool in file_tools(base)}


def test_every_listed_path_is_dangerous_and_the_others_are_not(base: Path) -> None:
    assert [path for path in DANGEROUS if not is_dangerous_path(base / path)] == []
    assert [path for path in ORDINARY if is_dangerous_path(base / path)] == []


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
async def test_dangerous_paths_ask_in_every_mode(base: Path, mode: PermissionMode) -> None:
    tools = _tools(base)
    context = PermissionContext(state=_state(mode, base))
    wrong: list[str] = []
    for name in (VIEW_TEXT_FILE, *WRITERS):
        for path in DANGEROUS:
            decision = await decide(tools[name], _arguments(name, path), context, own_check=True)
            if decision.behavior is not PermissionBehavior.ASK or not (
                decision.reason or ""
            ).startswith("safety:"):
                wrong.append(f"{name} {path}: {decision.behavior.value} ({decision.reason})")
    assert wrong == []


# What the engine decides for an ordinary path, per mode, with the allow rules above.
ORDINARY_DECISIONS = {
    PermissionMode.DEFAULT: (PermissionBehavior.ALLOW, PermissionBehavior.ALLOW),
    PermissionMode.ACCEPT_EDITS: (PermissionBehavior.ALLOW, PermissionBehavior.ALLOW),
    PermissionMode.BYPASS: (PermissionBehavior.ALLOW, PermissionBehavior.ALLOW),
    PermissionMode.DONT_ASK: (PermissionBehavior.ALLOW, PermissionBehavior.ALLOW),
    PermissionMode.EXPLORE: (PermissionBehavior.ALLOW, PermissionBehavior.DENY),
}
"""(read, write) of an ordinary file."""


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
async def test_ordinary_paths_follow_the_mode_and_rules(base: Path, mode: PermissionMode) -> None:
    tools = _tools(base)
    context = PermissionContext(state=_state(mode, base))
    read, write = ORDINARY_DECISIONS[mode]
    for path in ORDINARY:
        viewed = await decide(
            tools[VIEW_TEXT_FILE], _arguments(VIEW_TEXT_FILE, path), context, own_check=True
        )
        assert viewed.behavior is read, (path, viewed)
        for name in WRITERS:
            decision = await decide(tools[name], _arguments(name, path), context, own_check=True)
            assert decision.behavior is write, (name, path, decision)


@pytest.mark.parametrize("mode", [None, *MODES], ids=lambda mode: mode.value if mode else "none")
async def test_calls_on_dangerous_paths_do_not_run(base: Path, mode: PermissionMode | None) -> None:
    toolkit = Toolkit()
    for tool in file_tools(base):
        toolkit.register(tool)
    state = PermissionContextState() if mode is None else _state(mode, base)
    view = toolkit.snapshot().view(ToolContextState(permissions=state))
    ran: list[str] = []
    outcomes: set[tuple[bool, str]] = set()
    for name in (VIEW_TEXT_FILE, *WRITERS):
        for index, path in enumerate(DANGEROUS):
            call = ToolUseBlock.of(f"{name}-{index}", name, _arguments(name, path))  # type: ignore[arg-type]
            result = await view.call_tool(call)
            if result.state is ToolResultState.SUCCESS or "original" in result.content:
                ran.append(f"{name} {path}")
            outcomes.add((result.needs_approval, result.state.value))
    # It waits for approval; with nobody there to ask (``dont_ask``) it may be refused instead.
    expected = {(True, "running")} if mode is not PermissionMode.DONT_ASK else None
    assert expected is None or outcomes <= expected, outcomes
    assert ran == []
    assert all((base / path).read_text() == "original\n" for path in DANGEROUS)


async def test_ordinary_writes_run_under_bypass(base: Path) -> None:
    toolkit = Toolkit()
    for tool in file_tools(base):
        toolkit.register(tool)
    view = toolkit.snapshot().view(
        ToolContextState(permissions=_state(PermissionMode.BYPASS, base))
    )
    for index, path in enumerate(ORDINARY):
        call = ToolUseBlock.of(f"w{index}", WRITE_TEXT_FILE, {"file_path": path, "content": "new"})
        result = await view.call_tool(call)
        assert result.state is ToolResultState.SUCCESS, (path, result.content)
        assert (base / path).read_text() == "new"


def test_a_symlink_to_a_dangerous_file_is_dangerous(base: Path) -> None:
    os.symlink(base / ".aws" / "credentials", base / "harmless.txt")
    assert is_dangerous_path(base / "harmless.txt")


@pytest.mark.parametrize(
    "path",
    ["a" * 300, "x/" + "a" * 300 + "/.bashrc", "\ud800/.env", "a\x00b", "/".join(["d"] * 3000)],
    ids=["long-name", "long-dangerous", "surrogate", "nul", "deep"],
)
def test_the_check_never_raises(path: str) -> None:
    assert is_dangerous_path(path) == path.endswith((".bashrc", ".env"))
