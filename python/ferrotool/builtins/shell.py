"""``execute_shell_command``: run one command, without a shell.

The command text is split into arguments (POSIX quoting) and the program is started directly:
no shell ever reads the text, so nothing in it can chain, redirect, substitute or expand.
Shell operators (``;``, ``|``, ``&``, ``<``, ``>``, parentheses) outside quotes are refused
with a message saying so, rather than passed as odd arguments.

Permission: the deny list denies; a command matching one of `DANGEROUS_COMMANDS` asks with a
safety reason (which no mode or allow rule overrides); a command on the allow list runs; any
other asks through the permission engine, whose allow rules match by command prefix (a rule
``git status`` allows ``git status -s``; ``git *`` every git command).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, final

import anyio
import anyio.abc

from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionDecision,
    PermissionRule,
)
from ferrotool._permissions.state import PermissionContext
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock, ToolResultState
from ferrotool._values.content import TextBlock
from ferrotool._values.json import JsonValue
from ferrotool.builtins import _sandbox
from ferrotool.builtins._confine import is_inside, real
from ferrotool.builtins._sandbox import Sandbox, SandboxWarning

SHELL_TOOL: Final = "execute_shell_command"
"""The tool's name."""

DANGEROUS_COMMANDS: Final[tuple[str, ...]] = (
    "rm -rf",
    "sudo rm",
    "dd",
    "mkfs",
    "fdisk",
    "format",
    "chmod 777",
    "chmod -R 777",
    "chown -R",
    "kill -9",
    "> /dev/",
)
"""Commands that always ask first (flags match in any order or spelling: ``rm -fr``,
``rm -r -f`` and ``rm --recursive --force`` are ``rm -rf``)."""

DEFAULT_TIMEOUT: Final = 300
"""Seconds a command may run by default."""
MAX_TIMEOUT: Final = 3600
"""The longest timeout a model may ask for (it never exceeds the operator's either)."""
DEFAULT_MAX_OUTPUT: Final = 64 * 1024
"""Bytes of stdout, and of stderr, kept (the rest is read and dropped)."""
DRAIN_GRACE: Final = 1.0
"""Seconds the output is still read once the command has ended (what it left holding the
pipes open without a sandbox is not waited for longer)."""
DEFAULT_CHARSET: Final = "utf-8"
"""How the output is decoded when the model names no charset, or one that is not a text
encoding."""
MAX_COMMAND: Final = 16 * 1024
"""Characters a command may hold."""

_OPERATORS: Final = frozenset("();<>|&")
_LONG_FLAGS: Final = {"--recursive": "r", "--force": "f", "--kill": "9"}
_KILL_NAMES: Final = frozenset({"-kill", "-sigkill", "-s kill", "-s sigkill"})
_DESCRIPTION: Final = (
    "Run one command and return its exit code, stdout and stderr. The command is not run "
    "by a shell: pipes, redirections, ';', '&&', variables and globs do not work; run one "
    "program per call, quoting arguments as in a POSIX shell."
)
_SCHEMA: Final[Mapping[str, JsonValue]] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "description": "The command: a program and its arguments.",
            "maxLength": MAX_COMMAND,
        },
        "timeout": {
            "type": "integer",
            "description": f"Seconds the command may run (default and most: {DEFAULT_TIMEOUT}).",
        },
        "charset": {
            "type": "string",
            "description": "How the output is decoded (default utf-8).",
        },
    },
    "required": ["command"],
}


class CommandError(ValueError):
    """A command that cannot run here (the message says why, for the model)."""


def split_command(command: str) -> list[str]:
    """The arguments of ``command``.

    Raises:
        CommandError: Empty, unbalanced quotes, or a shell operator outside quotes.
    """
    if "\x00" in command:
        raise CommandError("the command holds a NUL character")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as error:
        raise CommandError(f"cannot parse the command: {error}") from None
    for token in tokens:
        if token and set(token) <= _OPERATORS:
            raise CommandError(
                f"shell operator {token!r} is not supported: the command runs without a "
                "shell; run one program per call"
            )
    if not tokens:
        raise CommandError("the command is empty")
    return tokens


def _flags(args: Sequence[str]) -> set[str]:
    out: set[str] = set()
    previous = ""
    for arg in args:
        lowered = arg.lower()
        if lowered in _LONG_FLAGS:
            out.add(_LONG_FLAGS[lowered])
        elif lowered in _KILL_NAMES or f"{previous} {lowered}" in _KILL_NAMES:
            out.add("9")
        elif arg.startswith("-") and not arg.startswith("--"):
            out.update(lowered[1:])
        previous = lowered
    return out


def _program(token: str) -> str:
    return os.path.basename(token)


def dangerous_match(argv: Sequence[str], raw: str, patterns: Iterable[str]) -> str | None:
    """The dangerous pattern ``argv`` matches, if any (see `DANGEROUS_COMMANDS`)."""
    for pattern in patterns:
        if pattern.startswith(">"):
            target = pattern[1:].strip()
            if ">" in raw and target in raw:
                return pattern
            continue
        words = pattern.split()
        if not words or _program(argv[0]) != words[0]:
            continue
        args = argv[1:]
        flags = _flags(args)
        rest = [arg for arg in args if not arg.startswith("-")]
        if all(
            set(word[1:].lower()) <= flags if word.startswith("-") else word in rest
            for word in words[1:]
        ):
            return pattern
    return None


def prefix_match(pattern: str, argv: Sequence[str]) -> bool:
    """Whether ``argv`` starts with the words of ``pattern`` (a last ``*`` matches the rest).

    The program matches by its base name when the pattern's has no slash.
    """
    try:
        words = shlex.split(pattern)
    except ValueError:
        return False
    if not words:
        return True
    wildcard = words[-1] == "*"
    if wildcard:
        words = words[:-1]
    if len(argv) < len(words) or (not wildcard and not words):
        return False
    for index, word in enumerate(words):
        token = argv[index]
        if index == 0 and "/" not in word:
            token = _program(token)
        if token != word:
            return False
    return True


@final
class ShellCommandTool(ToolBase[dict[str, JsonValue]]):
    """The ``execute_shell_command`` tool (see the module).

    Commands run in a sandbox on Linux (see `Sandbox`): the file system read-only but for the
    working folder (and ``Sandbox.writable``), no network, their own PID namespace and resource
    limits. Where no sandbox can start (not Linux, no bubblewrap, or bubblewrap fails its
    probe), construction warns with a `SandboxWarning` naming the reason and every command asks
    first (a safety ask, which no mode or allow rule overrides), unless the operator passes
    ``sandbox=False``.

    Args:
        allow: Command prefixes that run without asking (``"git status"``, ``"ls"``).
        deny: Command prefixes that are refused.
        cwd: The working folder (default: the process's); a program named by a relative path
            must lie inside it. Commands may write inside it.
        timeout: Seconds a command may run: the default, and the most a model may ask for.
        max_output: Bytes kept of stdout and of stderr each.
        env: Variables set for every command, over the host's allowed ones (the host's
            environment itself is not passed: see ``inherit_env``).
        inherit_env: Names of host variables passed through besides `ENV_ALLOW` (a name may
            end in ``*``: ``"AWS_*"``; ``"*"`` passes the whole host environment).
        dangerous_commands: Commands that ask first (default `DANGEROUS_COMMANDS`; extra
            entries add to them).
        sandbox: The sandbox (default ``Sandbox()``); ``False`` or ``None`` runs commands
            without one.
    """

    def __init__(
        self,
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        cwd: str | os.PathLike[str] | None = None,
        timeout: int = DEFAULT_TIMEOUT,
        max_output: int = DEFAULT_MAX_OUTPUT,
        env: Mapping[str, str] | None = None,
        inherit_env: Iterable[str] = (),
        dangerous_commands: Iterable[str] = (),
        sandbox: Sandbox | bool | None = True,
    ) -> None:
        if timeout <= 0 or max_output <= 0:
            raise ValueError("timeout and max_output must be positive")
        self.allow = tuple(allow)
        self.deny = tuple(deny)
        self.cwd = Path(cwd).absolute() if cwd is not None else None
        self.default_timeout = timeout
        self.max_output = max_output
        self.inherit_env = tuple(inherit_env)
        self.env = dict(env or {})
        _sandbox.check_env(self.env, self.inherit_env)
        self.dangerous_commands = (
            *DANGEROUS_COMMANDS,
            *(c for c in dangerous_commands if c not in DANGEROUS_COMMANDS),
        )
        self.sandbox = _sandbox.sandbox_of(sandbox)
        self.sandbox_problem = (
            None if self.sandbox is None else _sandbox.sandbox_problem(self.sandbox)
        )
        if self.sandbox_problem is not None:
            warnings.warn(
                f"{SHELL_TOOL}: no sandbox ({self.sandbox_problem}); every command will ask "
                "before it runs (pass sandbox=False to run commands without a sandbox)",
                SandboxWarning,
                stacklevel=2,
            )
        super().__init__(
            name=SHELL_TOOL,
            description=_DESCRIPTION,
            input_schema=_schema(timeout),
            read_only=False,
            concurrency_safe=False,  # a command may change what another one reads
            # the pipeline's deadline stays behind the command's own, which reports it
            timeout=float(timeout + DRAIN_GRACE + 30),
        )

    # - permission -

    @_sandbox.asks_without_sandbox
    async def check_permissions(
        self, tool_input: dict[str, JsonValue], context: PermissionContext
    ) -> PermissionDecision:
        """Deny list, then dangerous commands (a safety ask), then the allow list, else ask."""
        command = str(tool_input.get("command", ""))
        try:
            argv = self._argv(command)
        except CommandError as error:
            return PermissionDecision.allow(f"nothing will run: {error}")
        for pattern in self.deny:
            if prefix_match(pattern, argv):
                return PermissionDecision.deny(
                    f"The command is denied by the rule '{pattern}'", reason=f"deny list: {pattern}"
                )
        danger = dangerous_match(argv, command, self.dangerous_commands)
        if danger is not None:
            return PermissionDecision.ask(
                f"'{command}' is a dangerous command ({danger}): approve it explicitly",
                reason=f"safety: dangerous command '{danger}'",
            )
        for pattern in self.allow:
            if prefix_match(pattern, argv):
                return PermissionDecision.allow(f"allowed by '{pattern}'")
        return PermissionDecision.ask(
            f"Run the command '{command}'?", reason="the command is not on the allow list"
        )

    def match_rule(self, rule_content: str | None, tool_input: dict[str, JsonValue]) -> bool:
        """A rule's content is a command prefix (``git status``, ``npm *``)."""
        if not rule_content:
            return True
        try:
            argv = split_command(str(tool_input.get("command", "")))
        except CommandError:
            return False
        return prefix_match(rule_content, argv)

    def generate_suggestions(self, tool_input: dict[str, JsonValue]) -> tuple[PermissionRule, ...]:
        """Allow this program (with its subcommand, if it has one)."""
        try:
            argv = split_command(str(tool_input.get("command", "")))
        except CommandError:
            return ()
        words = [_program(argv[0])]
        if len(argv) > 1 and not argv[1].startswith("-") and "/" not in argv[1]:
            words.append(argv[1])
        return (
            PermissionRule(
                tool_name=self.name,
                behavior=PermissionBehavior.ALLOW,
                rule_content=shlex.join([*words, "*"]).replace("'*'", "*"),
                source="suggested",
            ),
        )

    def _argv(self, command: str) -> list[str]:
        argv = split_command(command)
        program = argv[0]
        if "/" in program and not os.path.isabs(program):
            base = real(self.cwd or os.getcwd())
            if not is_inside(real(os.path.join(base, program)), base):
                raise CommandError(f"'{program}' is outside the working folder")
        return argv

    # - running -

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> ToolResultBlock:
        """Run the command and report its exit code and output."""
        command = str(param.input.get("command", ""))
        try:
            argv = self._argv(command)
        except CommandError as error:
            return _result(-1, "", f"Error: {error}")
        timeout = self.default_timeout
        requested = param.input.get("timeout")
        if isinstance(requested, int) and not isinstance(requested, bool) and requested > 0:
            timeout = min(requested, timeout, MAX_TIMEOUT)  # the model can only shorten it
        return await self._run(argv, timeout, _charset(param.input.get("charset")))

    async def _run(self, argv: list[str], timeout: int, charset: str) -> ToolResultBlock:
        cwd = self.cwd or Path.cwd()
        env = _sandbox.command_env(self.inherit_env, self.env)
        launch = None
        if self.sandbox is not None and self.sandbox_problem is None:
            if _find_program(argv[0], cwd, env) is None:
                return _result(-1, "", f"Error: No such file or directory: {argv[0]!r}")
            launch = _sandbox.launch(self.sandbox, argv, cwd, env)
            argv, env = launch.argv, launch.env
        try:
            try:
                process = await anyio.open_process(
                    argv,
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as error:
                return _result(-1, "", f"Error: {error.strerror or error}")
            return await self._wait(process, timeout, charset)
        finally:
            if launch is not None:
                with anyio.CancelScope(shield=True):
                    await launch.close()

    async def _wait(
        self, process: anyio.abc.Process, timeout: int, charset: str
    ) -> ToolResultBlock:
        out = _Capture(self.max_output)
        err = _Capture(self.max_output)
        timed_out = False
        try:
            with anyio.move_on_after(timeout) as deadline:
                async with anyio.create_task_group() as group:
                    group.start_soon(out.drain, process.stdout)
                    group.start_soon(err.drain, process.stderr)
                    await process.wait()
                    # What the command left behind in its process group ends with it; what
                    # still holds its pipes open (only possible without a sandbox, whose PID
                    # namespace is gone by now) is not waited for long.
                    _kill(process)
                    group.cancel_scope.deadline = min(
                        group.cancel_scope.deadline, anyio.current_time() + DRAIN_GRACE
                    )
            timed_out = deadline.cancelled_caught
        finally:  # also when the caller is cancelled: the command never outlives its call
            with anyio.CancelScope(shield=True):
                _kill(process)
                if process.returncode is None:
                    await process.wait()
                await process.aclose()
        stdout, stderr = out.text(charset), err.text(charset)
        if timed_out:
            note = f"TimeoutError: The command execution exceeded the timeout of {timeout} seconds."
            return _result(-1, stdout, f"{stderr}\n{note}" if stderr else note, timed_out=True)
        return _result(process.returncode or 0, stdout, stderr)


def _schema(timeout: int) -> Mapping[str, JsonValue]:
    """The input schema, its timeout described with the operator's."""
    properties = _SCHEMA["properties"]
    assert isinstance(properties, Mapping)
    described: JsonValue = {
        "type": "integer",
        "description": f"Seconds the command may run (default and most: {timeout}).",
    }
    return {**_SCHEMA, "properties": {**properties, "timeout": described}}


def _charset(name: JsonValue) -> str:
    """``name`` if it is a text encoding, else `DEFAULT_CHARSET` (checked before anything runs).

    ``codecs.lookup`` also knows bytes-to-bytes and str-to-str codecs (``base64``, ``rot13``);
    ``bytes.decode`` refuses those.
    """
    if not isinstance(name, str) or not name:
        return DEFAULT_CHARSET
    try:
        b"".decode(name, "replace")
    except (LookupError, ValueError, TypeError):
        return DEFAULT_CHARSET
    return name


def _find_program(program: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Where ``program`` is, as the sandbox (which sees the host's file system) will find it."""
    if "/" in program:
        path = os.path.join(cwd, program)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(program, path=env.get("PATH", os.defpath))


class _Capture:
    """Keeps the first bytes of a stream and counts the rest (which it drops)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    async def drain(self, stream: anyio.abc.ByteReceiveStream | None) -> None:
        if stream is None:
            return
        async for chunk in stream:
            room = self.limit - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self, charset: str) -> str:
        """The kept bytes decoded (with utf-8 if ``charset`` fails: the output is never lost)."""
        data = bytes(self.kept)
        try:
            text = data.decode(charset, errors="replace")
        except (LookupError, ValueError, TypeError):  # e.g. idna, which only decodes strictly
            text = data.decode(DEFAULT_CHARSET, errors="replace")
        if self.dropped:
            text += f"\n[output truncated: {self.dropped} more bytes]"
        return text


def _kill(process: anyio.abc.Process) -> None:
    """Kill the command's process group (the command and what it started, bar ``setsid`` ones).

    In the sandbox the group is bubblewrap's, and its ``--die-with-parent`` ends the PID
    namespace, and so every process of the command, ``setsid`` ones included.
    """
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError, OSError):
        if process.returncode is None:
            process.kill()


def _result(
    returncode: int, stdout: str, stderr: str, *, timed_out: bool = False
) -> ToolResultBlock:
    text = (
        f"<returncode>{returncode}</returncode><stdout>{stdout}</stdout><stderr>{stderr}</stderr>"
    )
    return ToolResultBlock(
        output=(TextBlock(text),),
        state=ToolResultState.SUCCESS if returncode == 0 else ToolResultState.ERROR,
        structured={
            "returncode": returncode,
            "stdout": stdout,
            "stderr": stderr,
            "timed_out": timed_out,
        },
    )


__all__ = [
    "DANGEROUS_COMMANDS",
    "DEFAULT_CHARSET",
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "SHELL_TOOL",
    "CommandError",
    "ShellCommandTool",
    "dangerous_match",
    "prefix_match",
    "split_command",
]
