"""execute_shell_command: no shell, allow and deny lists, dangerous commands, output format."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import (
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionMode,
    PermissionRule,
    RuntimeContext,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool.builtins.shell import (
    DANGEROUS_COMMANDS,
    SHELL_TOOL,
    CommandError,
    ShellCommandTool,
    dangerous_match,
    prefix_match,
    split_command,
)

PY = sys.executable


async def _run(tool: ShellCommandTool, command: str, **extra: object) -> ToolResultBlock:
    toolkit = Toolkit()
    toolkit.register(tool)
    return await toolkit.call_tool(ToolUseBlock.of("c", SHELL_TOOL, {"command": command, **extra}))  # type: ignore[dict-item]


def test_dangerous_commands_list() -> None:
    assert isinstance(DANGEROUS_COMMANDS, tuple)
    assert len(set(DANGEROUS_COMMANDS)) == len(DANGEROUS_COMMANDS)
    for entry in ("rm -rf", "sudo", "mkfs", "chmod o+w", "find -delete", "pkill", "> /dev/"):
        assert entry in DANGEROUS_COMMANDS


def test_flags_are_honest() -> None:
    spec = ShellCommandTool().spec
    assert (spec.read_only, spec.concurrency_safe) == (False, False)


async def test_output_format_and_states(tmp_path: Path) -> None:
    tool = ShellCommandTool(allow=[PY, f"{PY} -c"], cwd=tmp_path)
    ok = await _run(tool, f"{PY} -c \"print('out')\"")
    assert ok.state is ToolResultState.SUCCESS
    assert ok.content == "<returncode>0</returncode><stdout>out\n</stdout><stderr></stderr>"
    bad = await _run(tool, f"{PY} -c \"import sys; sys.stderr.write('oops'); sys.exit(4)\"")
    assert bad.state is ToolResultState.ERROR
    assert bad.content == "<returncode>4</returncode><stdout></stdout><stderr>oops</stderr>"
    assert bad.structured == {"returncode": 4, "stdout": "", "stderr": "oops", "timed_out": False}
    where = await _run(tool, f'{PY} -c "import os; print(os.getcwd())"')
    assert str(tmp_path) in where.content


async def test_nothing_is_interpreted_by_a_shell(tmp_path: Path) -> None:
    tool = ShellCommandTool(allow=["echo"], cwd=tmp_path)
    result = await _run(tool, "echo `touch pwned2` $HOME * ~")
    assert result.content == (
        "<returncode>0</returncode><stdout>`touch pwned2` $HOME * ~\n</stdout><stderr></stderr>"
    )
    substitution = await _run(tool, "echo $(touch pwned)")
    assert "shell operator '('" in substitution.content
    assert not (tmp_path / "pwned").exists()
    assert not (tmp_path / "pwned2").exists()


@pytest.mark.parametrize(
    "command", ["ls; rm x", "echo a | sh", "echo a && touch b", "echo a > f", "echo a &", "(ls)"]
)
async def test_shell_operators_are_refused(command: str, tmp_path: Path) -> None:
    result = await _run(ShellCommandTool(allow=["echo", "ls"], cwd=tmp_path), command)
    assert result.state is ToolResultState.ERROR
    assert result.content.startswith("<returncode>-1</returncode><stdout></stdout><stderr>Error:")
    assert "without a shell" in result.content
    assert list(tmp_path.iterdir()) == []


async def test_quoted_operators_are_plain_arguments(tmp_path: Path) -> None:
    result = await _run(ShellCommandTool(allow=["echo"], cwd=tmp_path), "echo 'a;b' \"c|d\"")
    assert "<stdout>a;b c|d\n</stdout>" in result.content


async def test_relative_program_must_stay_in_the_folder(tmp_path: Path) -> None:
    inner = tmp_path / "work"
    inner.mkdir()
    result = await _run(ShellCommandTool(cwd=inner), "./../x")
    assert "outside the working folder" in result.content
    assert result.state is ToolResultState.ERROR


async def test_missing_program() -> None:
    result = await _run(ShellCommandTool(allow=["no-such-program-x"]), "no-such-program-x")
    assert result.content.startswith("<returncode>-1</returncode><stdout></stdout><stderr>Error:")


async def test_timeout_keeps_partial_output() -> None:
    code = "import time, sys; print('early', flush=True); time.sleep(30)"
    result = await _run(ShellCommandTool(allow=[PY, f"{PY} -c"]), f'{PY} -c "{code}"', timeout=3)
    assert result.content == (
        "<returncode>-1</returncode><stdout>early\n</stdout><stderr>TimeoutError: The command "
        "execution exceeded the timeout of 3 seconds.</stderr>"
    )
    assert isinstance(result.structured, dict)
    assert result.structured["timed_out"] is True


async def test_output_is_capped() -> None:
    tool = ShellCommandTool(allow=[PY, f"{PY} -c"], max_output=100)
    result = await _run(tool, f"{PY} -c \"print('x' * 5000)\"")
    assert "x" * 100 + "\n[output truncated: 4901 more bytes]" in result.content


async def test_charset() -> None:
    tool = ShellCommandTool(allow=[PY, f"{PY} -c"])
    code = "import sys; sys.stdout.buffer.write('é'.encode('latin-1'))"
    latin = await _run(tool, f'{PY} -c "{code}"', charset="latin-1")
    assert "<stdout>é</stdout>" in latin.content
    fallback = await _run(tool, f'{PY} -c "{code}"', charset="no-such-charset")
    assert "<stdout>\ufffd</stdout>" in fallback.content


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("rm -rf /tmp/x", "rm -rf"),
        ("rm -fr x", "rm -rf"),
        ("rm -r -f x", "rm -rf"),
        ("/bin/rm --recursive --force x", "rm -rf"),
        ("sudo rm x", "sudo"),
        ("dd if=/dev/zero of=x", "dd"),
        ("mkfs /dev/sda", "mkfs"),
        ("chmod 777 f", "chmod o+w"),
        ("chmod -R 777 d", "chmod o+w"),
        ("chown -R a d", "chown -R"),
        ("kill -9 1", "kill -9"),
        ("kill -KILL 1", "kill -9"),
        ("echo x > /dev/sda", "> /dev/"),
    ],
)
def test_dangerous_commands_match(command: str, pattern: str) -> None:
    try:
        argv = split_command(command)
    except CommandError:
        argv = command.split()
    assert dangerous_match(argv, command, DANGEROUS_COMMANDS) == pattern


@pytest.mark.parametrize("command", ["rm x", "rm -r x", "ls -rf", "chmod 644 f", "kill 1"])
def test_safe_commands_do_not_match(command: str) -> None:
    assert dangerous_match(split_command(command), command, DANGEROUS_COMMANDS) is None


async def _decide(tool: ShellCommandTool, command: str, state: PermissionContextState) -> object:
    return await tool.check_permissions({"command": command}, PermissionContext(state=state))


async def test_permissions() -> None:
    tool = ShellCommandTool(allow=["git status", "ls"], deny=["curl"])
    trivial = PermissionContextState()
    allowed = await tool.check_permissions({"command": "ls -la"}, PermissionContext())
    assert allowed.behavior is PermissionBehavior.ALLOW
    denied = await tool.check_permissions({"command": "curl x"}, PermissionContext())
    assert denied.behavior is PermissionBehavior.DENY
    asked = await tool.check_permissions({"command": "git push"}, PermissionContext())
    assert asked.behavior is PermissionBehavior.ASK
    assert "safety" not in (asked.reason or "")
    danger = await tool.check_permissions({"command": "rm -rf x"}, PermissionContext(state=trivial))
    assert danger.behavior is PermissionBehavior.ASK
    assert (danger.reason or "").startswith("safety:")
    rule = tool.generate_suggestions({"command": "git push origin"})[0]
    assert rule.rule_content == "git push *"
    assert tool.match_rule("git push *", {"command": "git push origin main"})
    assert tool.match_rule("git push", {"command": "git push"})
    assert not tool.match_rule("git push", {"command": "git pull"})


async def test_through_the_engine_asks_unless_allowed() -> None:
    toolkit = Toolkit()
    toolkit.register(ShellCommandTool(allow=["echo"]))
    store = InMemorySessionStore()
    context = RuntimeContext(user_id="u", session_id="s")
    view = await toolkit.snapshot().open_view(context, store)
    runs = await view.call_tool(ToolUseBlock.of("1", SHELL_TOOL, {"command": "echo hi"}), context)
    assert runs.state is ToolResultState.SUCCESS
    waits = await view.call_tool(ToolUseBlock.of("2", SHELL_TOOL, {"command": "date"}), context)
    assert waits.needs_approval
    # a session that allows by rule runs it; a dangerous command still asks, even in bypass
    bypass = PermissionContextState(mode=PermissionMode.BYPASS).with_rules(
        [
            PermissionRule(
                tool_name=SHELL_TOOL, behavior=PermissionBehavior.ALLOW, rule_content="rm *"
            )
        ]
    )
    view = toolkit.snapshot().view(view.state.with_permissions(bypass))
    danger = await view.call_tool(ToolUseBlock.of("3", SHELL_TOOL, {"command": "rm -rf /nope"}))
    assert danger.needs_approval


@settings(max_examples=60)
@given(text=st.text(min_size=1, max_size=40))
def test_split_never_invokes_a_shell_and_never_raises_other_errors(text: str) -> None:
    try:
        argv = split_command(text)
    except CommandError:
        return
    assert argv
    assert all(isinstance(token, str) for token in argv)


@settings(max_examples=200)
@given(words=st.lists(st.text(st.characters(exclude_characters="\x00"), max_size=12), min_size=1))
def test_quoted_words_split_back_into_themselves(words: list[str]) -> None:
    assert split_command(shlex.join(words)) == words


# Characters bash gives a meaning beyond quoting and splitting (expansions, globs, comments,
# history) are left out, so bash's own word splitting is the oracle.
_WORDY = "ab ;|&<>()'\"\\\t\n=-"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle")
@settings(max_examples=150, deadline=None)
@given(text=st.text(st.sampled_from(_WORDY), min_size=1, max_size=16))
def test_words_split_as_bash_splits_them(text: str) -> None:
    try:
        argv = split_command(text)
    except CommandError:
        return
    shown = subprocess.run(
        # Blanks before the first word are nothing to split_command; after `printf` a leading
        # newline would end bash's command.
        ["bash", "-c", f"printf '%s\\0' {text.lstrip()}"],
        capture_output=True,
        check=True,
    ).stdout
    assert argv == shown.decode().split("\x00")[:-1]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("find . -exec grep x {} \\;", ["find", ".", "-exec", "grep", "x", "{}", ";"]),
        ("find . -exec grep x {} ';'", ["find", ".", "-exec", "grep", "x", "{}", ";"]),
        ("echo \"a|b\" 'c>d' e\\&f", ["echo", "a|b", "c>d", "e&f"]),
        ('printf "\\$HOME \\\\ \\x"', ["printf", "$HOME \\ \\x"]),
        ("echo ''", ["echo", ""]),
    ],
)
def test_quoted_operators_are_arguments(command: str, argv: list[str]) -> None:
    assert split_command(command) == argv


@pytest.mark.parametrize(
    "command", ["echo a; rm x", "echo a|sh", "a && b", "cat <x", "(ls)", "echo a\nrm -rf x"]
)
def test_unquoted_operators_are_refused(command: str) -> None:
    with pytest.raises(CommandError, match=r"shell operator|newline"):
        split_command(command)


def test_prefix_match() -> None:
    assert prefix_match("git *", ["/usr/bin/git", "log"])
    assert prefix_match("*", ["anything"])
    assert not prefix_match("git status", ["git"])
    assert not prefix_match("'unbalanced", ["x"])


async def test_a_cancelled_call_kills_the_command(tmp_path: Path) -> None:
    import uuid

    import anyio

    # The command's pid may be its sandbox's own: it is found by a unique argument instead.
    token = f"ferrotool-{uuid.uuid4().hex}"
    started = tmp_path / "started"
    code = f"import time; open({str(started)!r}, 'w').write('1'); time.sleep(60)"
    tool = ShellCommandTool(allow=[PY, f"{PY} -c"], cwd=tmp_path)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(_run, tool, f'{PY} -c "{code}" {token}')
            while not (started.exists() and started.read_text()):
                await anyio.sleep(0.02)
            group.cancel_scope.cancel()

    def running() -> bool:
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    if token.encode() in cmdline.read():
                        return True
            except OSError:
                continue
        return False

    for _ in range(50):
        if not running():
            break
        await anyio.sleep(0.02)
    assert not running()
