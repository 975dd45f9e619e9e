"""``execute_shell_command``: run one command, without a shell.

The command text is split into arguments (POSIX quoting) and the program is started directly:
no shell ever reads the text, so nothing in it can chain, redirect, substitute or expand.
Shell operators (``;``, ``|``, ``&``, ``<``, ``>``, parentheses) outside quotes are refused
with a message saying so, rather than passed as odd arguments.

Permission reads the command the way the kernel will run it (`ferrotool.builtins._command`):
wrappers are unwrapped (``env``, ``nice``, ``timeout``, ``xargs``, ``sudo``, ``busybox``
applets...), so every check sees the program that really runs as well as the literal text.

1. The **deny list** denies when any view matches: the literal command, any wrapper layer, the
   real program, a ``find -exec`` command (``deny=["rm"]`` stops ``env rm x``, ``busybox rm x``
   and ``unlink x``: `ALIASES` makes ``unlink`` and ``rmdir`` spellings of ``rm`` for rules).
2. A command matching one of `DANGEROUS_COMMANDS` in any view, or with a concern the reader
   cannot see through (inline code such as ``sh -c`` or ``python -c``, a git key that runs a
   program, ``LD_PRELOAD``..., wrappers nested more than 16 deep), asks with a safety reason,
   which no mode or allow rule overrides. Inline code alone runs unasked only when the tool's
   own allow list names the interpreter's option (``allow=["python3 -c"]``): the operator's
   explicit choice, which no session rule can make.
3. The **allow list** allows only when a pattern names the real program: matched against the
   real command, or against a wrapper layer when the pattern's fixed words reach the real
   program (``env FOO=1 make`` allows ``env FOO=1 make all``; ``env *`` allows ``env`` alone
   but not ``env rm x``). Every ``find -exec`` command must be allowed too. A shell or
   interpreter running a script needs a pattern naming it (``bash *``), never a bare ``*``.
4. A session allow rule that matches the command only the way a deny rule would (a wrapper,
   or a bare ``*`` over a script) would allow more than it names: the command asks with a
   safety reason instead.
5. Any other command asks through the permission engine, whose rules match by command prefix
   (a rule ``git status`` allows ``git status -s``; ``git *`` every git command) in the same
   views as the lists: `match_rule` matches if any view does.

``git``'s global options (``-C``, ``-c``, ``--git-dir``, ``--work-tree``, ``--no-pager``...) are
read before its sub-command, so ``deny=["git push"]`` stops ``git -C . push``, ``git-push`` and
(by `SUBCOMMAND_ALIASES`) ``git send-pack`` and ``git http-push``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import platform
import posixpath
import re
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

from ferrotool._permissions.confine import is_inside, real
from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from ferrotool._permissions.state import PermissionContext
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock, ToolResultState
from ferrotool._values.content import TextBlock
from ferrotool._values.json import JsonValue
from ferrotool.builtins import _sandbox
from ferrotool.builtins._command import (
    ALIASES,
    DISK_WRITERS,
    PRIVILEGED,
    SUBCOMMAND_ALIASES,
    Reading,
    base,
    read,
)
from ferrotool.builtins._sandbox import Sandbox, SandboxWarning

SHELL_TOOL: Final = "execute_shell_command"
"""The tool's name."""

DANGEROUS_COMMANDS: Final[tuple[str, ...]] = (
    "rm -rf",
    "rm -r /",
    "rm --no-preserve-root",
    "sudo",
    "dd",
    "mkfs",
    *DISK_WRITERS,
    "format",
    "chmod o+w",
    "chmod u+s",
    "chmod g+s",
    "chown -R",
    "kill -9",
    "pkill",
    "killall",
    "find -delete",
    "find -exec rm",
    "reboot",
    "shutdown",
    "halt",
    "poweroff",
    "init 0",
    "init 6",
    "systemctl poweroff",
    "systemctl reboot",
    "systemctl halt",
    "systemctl kexec",
    "crontab -r",
    "iptables -F",
    "iptables --flush",
    "nft flush",
    "> /dev/",
    "/dev/sd*",
    "/dev/nvme*",
    "/dev/hd*",
    "/dev/vd*",
    "/dev/xvd*",
    "/dev/mmcblk*",
    "/dev/dm-*",
    "/dev/md*",
    "/dev/loop*",
    "/dev/mapper/*",
    "/dev/disk/*",
    "/dev/block/*",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/proc/sysrq-trigger",
)
"""Commands that always ask first, matched against every layer of the command (``nice rm -rf``
is ``rm -rf``). A pattern's words are read this way:

- the first word is the program, by base name and family: ``mkfs`` covers ``mkfs.ext4``,
  ``sudo`` every program that runs a command as another user (``doas``, ``su``, ``pkexec``,
  ``runuser``, ``run0``), ``iptables`` ``ip6tables``, ``init`` ``telinit``;
- a flag of one or two letters matches in any order or spelling (``rm -fr``, ``rm -r -f``,
  ``rm --recursive --force`` and ``rm -Rf`` are ``rm -rf``; ``kill -KILL``, ``kill -s KILL``,
  ``kill -SIGKILL``, ``kill --signal=kill`` and ``kill -n 9`` are ``kill -9``); a longer one
  (``--flush``, ``-delete``) must be present; any other word must be an argument;
- ``chmod`` modes are read numerically and symbolically: ``chmod o+w`` matches every mode that
  grants write to others (``777``, ``0777``, ``1777``, ``666``, ``a+rwx``, ``ugo+rwx``, ``+w``:
  a mode without ``u``/``g``/``o``/``a`` is taken for ``a``), ``chmod u+s``/``g+s`` setuid and
  setgid (``4755``, ``2755``); ``--reference`` (a mode not written) matches every one;
- ``rm -r /`` matches a recursive removal of ``/``, a top-level folder (``/usr``), ``~``,
  ``.``, ``..`` or ``*`` (no shell expands them here, but the intent is read as written);
- ``find -delete`` and ``find -exec rm`` (``-execdir``, ``-ok``, ``-okdir``; ``unlink`` and
  ``rmdir`` count as ``rm``); every other ``-exec`` command is read like a command of its own;
- a pattern starting with ``/`` is a path (``fnmatch``): any argument, or value after ``=``,
  naming it (``dd of=/dev/sda``, ``tee /dev/sda``, ``cp x /dev/nvme0n1``) matches, unless
  the program only looks at it (``ls``, ``stat``, ``lsblk``, ``blkid``, ``file``...);
- a pattern starting with ``>`` matches that text in the raw command (no shell runs it, so
  such a command is refused anyway);
- after ``xargs`` the program's arguments are unknown, so its name alone matches.

``unlink`` and ``rmdir`` are not dangerous (one file or an empty folder); ``pkill`` and
``killall`` are, with any signal (a name pattern can reach any process, the host's included).
Extra entries given to the tool add to these."""

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
_KILL_NAMES: Final = frozenset(
    {
        f"{option}{separator}{name}"
        for option, separators in (("-s", " "), ("-n", " "), ("--signal", " ="))
        for separator in separators
        for name in ("9", "kill", "sigkill")
    }
    | {"-kill", "-sigkill"}
)
_SIGKILL: Final = frozenset({"9", "kill", "sigkill"})
_FAMILIES: Final = {
    **dict.fromkeys(PRIVILEGED, "sudo"),
    "mkdosfs": "mkfs",
    "mkntfs": "mkfs",
    "ip6tables": "iptables",
    "iptables-legacy": "iptables",
    "iptables-nft": "iptables",
    "ip6tables-legacy": "iptables",
    "ip6tables-nft": "iptables",
    "telinit": "init",
    "killall5": "killall",
}
_LOOKS_ONLY: Final = frozenset(
    {
        "ls",
        "stat",
        "lsblk",
        "blkid",
        "file",
        "readlink",
        "realpath",
        "udevadm",
        "df",
        "findmnt",
        "test",
        "[",
        "du",
        "basename",
        "dirname",
        "echo",
        "printf",
        "namei",
    }
)
_ROOTISH: Final = frozenset(
    {"~", "~/", "*", "/*", ".", "..", "./", "../", "./*", "$HOME", "${HOME}"}
)
_MODE: Final = re.compile(r"^[ugoa]*(?:[-+=](?:[rwxXst]*|[ugo]))+$")
_WHO: Final = {"u": 0o4700, "g": 0o2070, "o": 0o1007, "a": 0o7777}
_PERMS: Final = {"r": 0o444, "w": 0o222, "x": 0o111, "X": 0o111, "s": 0o6000, "t": 0o1000}
_MESSAGE_LENGTH: Final = 200
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
    r"""The arguments of ``command``, split as a POSIX shell splits words.

    Quotes and backslashes work as in ``sh``: ``'...'`` is literal, ``"..."`` honours a
    backslash before ``$``, a backquote, ``"``, a backslash and a newline, and a backslash
    outside quotes escapes the next character. There is no shell: ``$``, globs and ``~`` stay
    as written. A shell operator (``;``, ``|``, ``&``, ``<``, ``>``, ``(``, ``)``, a newline
    between words) outside quotes is refused; quoted or escaped it is an ordinary character
    (``find ... -exec grep x {} \;``). One pass over the text: time in proportion to its
    length.

    Raises:
        CommandError: Empty, a NUL, unbalanced quotes, a trailing backslash, or a shell
            operator outside quotes.
    """
    if "\x00" in command:
        raise CommandError("the command holds a NUL character")
    words: list[str] = []
    word: list[str] = []
    in_word = False
    at, end = 0, len(command)
    last = len(command.rstrip(" \t\r\n"))  # past the last character that is not blank
    while at < end:
        char = command[at]
        if char in _BLANKS:
            if char == "\n" and (in_word or words) and at < last:
                raise CommandError(
                    "a newline between words separates commands in a shell, and the command "
                    "runs without one: run one program per call"
                )
            if in_word:
                words.append("".join(word))
                word.clear()
                in_word = False
            at += 1
            continue
        in_word = True
        if char == "'":
            close = command.find("'", at + 1)
            if close < 0:
                raise CommandError("cannot parse the command: No closing quotation")
            word.append(command[at + 1 : close])
            at = close + 1
        elif char == '"':
            at = _double_quoted(command, at + 1, word)
        elif char == "\\":
            if at + 1 >= end:
                raise CommandError("cannot parse the command: No escaped character")
            if command[at + 1] != "\n":  # a backslash-newline joins lines
                word.append(command[at + 1])
            at += 2
        elif char in _OPERATORS:
            stop = at
            while stop < end and command[stop] in _OPERATORS:
                stop += 1
            raise CommandError(
                f"shell operator {command[at:stop]!r} is not supported: the command runs "
                "without a shell; run one program per call (quote the character to pass it "
                "as an argument)"
            )
        else:
            word.append(char)
            at += 1
    if in_word:
        words.append("".join(word))
    if not words:
        raise CommandError("the command is empty")
    return words


_BLANKS: Final = frozenset(" \t\r\n")
_DOUBLE_ESCAPES: Final = frozenset('$`"\\\n')


def _double_quoted(command: str, at: int, word: list[str]) -> int:
    """Read a double-quoted part starting after its ``"`` into ``word``; the index past it."""
    end = len(command)
    while at < end:
        char = command[at]
        if char == '"':
            return at + 1
        if char == "\\" and at + 1 < end and command[at + 1] in _DOUBLE_ESCAPES:
            if command[at + 1] != "\n":
                word.append(command[at + 1])
            at += 2
            continue
        word.append(char)
        at += 1
    raise CommandError("cannot parse the command: No closing quotation")


def _flags(args: Sequence[str]) -> set[str]:
    out: set[str] = set()
    previous = ""
    for arg in args:
        lowered = arg.lower()
        long_flag = _long_flag(lowered)
        if long_flag:
            out.add(long_flag)
        elif _kills(lowered, previous):
            out.add("9")
        elif arg.startswith("-") and not arg.startswith("--"):
            out.update(lowered[1:])
        previous = lowered
    return out


def _long_flag(arg: str) -> str:
    """The letter of a long flag, by any unambiguous prefix (``--rec`` is ``--recursive``).

    ``--interactive=never`` (``no``, ``none``, any prefix, the option by any prefix too) is
    ``-f``: rm removes without asking either way.
    """
    if not arg.startswith("--") or len(arg) < 3:
        return ""
    name, equals, value = arg.partition("=")
    if equals and len(name) > 3 and "--interactive".startswith(name):
        never = value and any(word.startswith(value) for word in ("never", "no", "none"))
        return "f" if never else ""
    matches = {letter for name, letter in _LONG_FLAGS.items() if name.startswith(arg)}
    return matches.pop() if len(matches) == 1 else ""


def _kills(arg: str, previous: str) -> bool:
    """Whether ``arg`` (after ``previous``) names SIGKILL.

    ``-9``, ``-KILL``, ``-SIGKILL``, ``-s KILL``, ``-sKILL``, ``-n 9``, ``--signal=kill`` and
    ``--sig KILL`` all do.
    """
    if arg in _KILL_NAMES or f"{previous} {arg}" in _KILL_NAMES:
        return True
    if arg[:2] in ("-s", "-n") and arg[2:] in _SIGKILL:
        return True
    name, equals, value = arg.partition("=")
    if len(name) > 2 and "--signal".startswith(name):
        return equals == "=" and value in _SIGKILL
    return len(previous) > 2 and "--signal".startswith(previous) and arg in _SIGKILL


def _program(token: str) -> str:
    return base(token)


def _family(program: str) -> str:
    if program.startswith("mkfs."):
        return "mkfs"
    return _FAMILIES.get(program, program)


def _mode_bits(mode: str) -> int | None:
    """The permission bits a ``chmod`` mode grants (``None``: not a mode)."""
    if mode.isdigit():
        return int(mode, 8) & 0o7777 if set(mode) <= set("01234567") else None
    granted = 0
    for clause in mode.split(","):
        if not _MODE.match(clause):
            return None
        who_end = len(clause) - len(clause.lstrip("ugoa"))
        mask = 0
        for letter in clause[:who_end] or "a":
            mask |= _WHO[letter]
        for action in re.findall(r"[-+=][rwxXstugo]*", clause[who_end:]):
            if action[0] == "-":
                continue
            for letter in action[1:]:
                # copying another class's bits ("g=u") may copy anything
                granted |= (_PERMS.get(letter, 0o777)) & mask
    return granted


def _rm_targets(args: Sequence[str]) -> list[str]:
    """``rm``'s operands, with every root-like target read as ``/``."""
    out: list[str] = []
    for arg in args:
        if arg.startswith("-"):
            continue
        if arg in _ROOTISH or (
            arg.startswith("/") and len([p for p in posixpath.normpath(arg).split("/") if p]) <= 1
        ):
            out.append("/")
        else:
            out.append(arg)
    return out


def _paths(reading: Reading) -> tuple[str, ...]:
    """The absolute paths the real command names, normalised, each once.

    Arguments, values after ``=`` and after ``-o`` count; none do when the program only looks
    at them (`_LOOKS_ONLY`).
    """
    if reading.program in _LOOKS_ONLY:
        return ()
    out: dict[str, None] = {}
    for arg in reading.real[1:]:
        values = (
            arg,
            arg.split("=", 1)[-1] if "=" in arg else "",
            arg[2:] if arg[:2] in ("-o", "-O") else "",
        )
        out.update(
            dict.fromkeys(
                "/" + posixpath.normpath(value).lstrip("/")
                for value in values
                if value.startswith("/")
            )
        )
    return tuple(out)


def _layer_dangerous(
    words: Sequence[str], layer: Sequence[str], last: bool, reading: Reading
) -> bool:
    tail = last and reading.open_tail
    program = _program(layer[0])
    if words[0] not in (program, _family(program)):
        return False
    if len(words) == 1 or tail:
        return True
    args = layer[1:]
    if _family(program) == "find" and last:
        if words[1] == "-delete":
            return reading.find_deletes
        if words[1] in ("-exec", "-execdir", "-ok", "-okdir") and len(words) > 2:
            return any(
                words[2] in (sub.program, ALIASES.get(sub.program), _family(sub.program))
                for sub in reading.subcommands
            )
    flags = _flags(args)
    lowered = [arg.lower() for arg in args]
    rest = (
        _rm_targets(args) if program == "rm" else [arg for arg in args if not arg.startswith("-")]
    )
    for word in words[1:]:
        if (
            program == "chmod"
            and not word.startswith("-")
            and (bits := _mode_bits(word)) is not None
        ):
            if any(_names_option(arg, "--reference") for arg in lowered):
                continue
            modes = (_mode_bits(arg) for arg in rest)
            if not any(mode is not None and mode & bits == bits for mode in modes):
                return False
        elif word.startswith("-") and (word.startswith("--") or len(word) > 3):
            if not any(_names_option(arg, word.lower()) for arg in lowered):
                return False
        elif word.startswith("-"):
            if not set(word[1:].lower()) <= flags:
                return False
        elif word not in rest:
            return False
    return True


def _names_option(arg: str, option: str) -> bool:
    """Whether ``arg`` spells ``option``: whole, with ``=value``, or by a long prefix."""
    name = arg.split("=", 1)[0]
    if name == option:
        return True
    return option.startswith("--") and len(name) > 3 and option.startswith(name)


def _reading_dangerous(pattern: str, reading: Reading, paths: Sequence[str]) -> bool:
    words = pattern.split()
    if not words:
        return False
    if words[0].startswith("/"):
        return any(fnmatch.fnmatchcase(path, words[0]) for path in paths)
    last = len(reading.layers) - 1
    return any(
        _layer_dangerous(words, layer, index == last, reading)
        for index, layer in enumerate(reading.layers)
        if layer
    )


def dangerous_match(argv: Sequence[str], raw: str, patterns: Iterable[str]) -> str | None:
    """The dangerous pattern ``argv`` matches in any view, if any (see `DANGEROUS_COMMANDS`)."""
    return _dangerous(read(argv), raw, patterns)


def _dangerous(reading: Reading, raw: str, patterns: Iterable[str]) -> str | None:
    readings = [(one, _paths(one)) for one in reading.walk()]
    for pattern in patterns:
        if pattern.startswith(">"):
            target = pattern[1:].strip()
            if ">" in raw and target in raw:
                return pattern
            continue
        if any(_reading_dangerous(pattern, one, paths) for one, paths in readings):
            return pattern
    return None


def _pattern_words(pattern: str) -> list[str] | None:
    try:
        return shlex.split(pattern)
    except ValueError:
        return None


def _prefix(words: Sequence[str], argv: Sequence[str], *, tail: bool = False) -> bool:
    """``prefix_match`` on split words; the program also matches by its `ALIASES` name.

    With ``tail`` (``xargs``: more arguments follow), words past ``argv`` may still match.
    """
    if not words:
        return True
    wildcard = words[-1] == "*"
    if wildcard:
        words = words[:-1]
    if not wildcard and not words:
        return False
    if len(argv) < len(words) and not (tail and argv):
        return False
    for index, (word, token) in enumerate(zip(words, argv, strict=False)):
        if index == 0 and "/" not in word:
            program = _program(token)
            if word not in (program, ALIASES.get(program)):
                return False
        elif token != word and (
            index != 1 or SUBCOMMAND_ALIASES.get(_program(argv[0]), {}).get(token) != word
        ):
            return False
    return True


def prefix_match(pattern: str, argv: Sequence[str]) -> bool:
    """Whether ``argv`` starts with the words of ``pattern`` (a last ``*`` matches the rest).

    The program matches by its base name when the pattern's has no slash.
    """
    words = _pattern_words(pattern)
    if words is None:
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


def _any_view(words: Sequence[str], reading: Reading) -> bool:
    """Whether a rule's words match any view of the command (the deny and ask side)."""
    for one in reading.walk():
        last = len(one.layers) - 1
        for index, layer in enumerate(one.layers):
            if layer and _prefix(words, layer, tail=one.open_tail and index == last):
                return True
    return False


def _names_real(words: Sequence[str], reading: Reading) -> bool:
    """Whether a pattern's words allow the program that really runs (the allow side)."""
    fixed = len(words) - (1 if words and words[-1] == "*" else 0)
    if reading.script and not fixed:
        return False  # a script runs only where a pattern names its interpreter
    # a word the pattern must reach (python -m's module, find -fprint's file), else 0
    explicit = 0 if reading.explicit_at is None else reading.explicit_at
    if fixed > explicit and _prefix(words, reading.real):
        return True
    for index in range(len(reading.layers) - 1):
        position = reading.position(index)
        if (
            position is not None
            and fixed > position + explicit
            and _prefix(words, reading.layers[index])
        ):
            return True
    return False


def _allowed_by(patterns: Iterable[str], reading: Reading) -> str | None:
    """The pattern allowing the command, when every command it runs is allowed by one."""
    split = [(pattern, words) for pattern in patterns if (words := _pattern_words(pattern))]
    first: str | None = None
    for index, one in enumerate(reading.walk()):
        found = next((pattern for pattern, words in split if _names_real(words, one)), None)
        if found is None:
            return None
        if index == 0:
            first = found
    return first


def _inline_allowed(patterns: Iterable[str], reading: Reading) -> str | None:
    """An allow pattern that names an interpreter's inline-code option itself (``python -c``).

    Only the tool's own allow list is read this way: the operator opted in for that
    interpreter; a session rule such as ``python *`` never reaches the option.
    """
    at = reading.inline_at
    if at is None or any(sub.all_concerns() for sub in reading.subcommands):
        return None
    for pattern in patterns:
        words = _pattern_words(pattern)
        if not words:
            continue
        fixed = len(words) - (1 if words[-1] == "*" else 0)
        if fixed > at and _prefix(words, reading.real):
            return pattern
    return None


def _short(command: str) -> str:
    """``command`` as a question shows it: whole, or its two ends and a digest of the whole.

    Two commands never show the same: an approval answers the question it was shown, so a
    long command edited in its middle must not ask the question of the one approved.
    """
    if len(command) <= _MESSAGE_LENGTH:
        return command
    half = _MESSAGE_LENGTH // 2
    digest = hashlib.sha256(command.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{command[:half]} ... {command[-half:]} (sha256 {digest}, {len(command)} characters)"


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
        self.allow: Final[tuple[str, ...]] = tuple(allow)
        self.deny: Final[tuple[str, ...]] = tuple(deny)
        self.cwd: Final[Path | None] = Path(cwd).absolute() if cwd is not None else None
        self.default_timeout = timeout
        self.max_output = max_output
        self.inherit_env: Final[tuple[str, ...]] = tuple(inherit_env)
        self.env: Final[dict[str, str]] = dict(env or {})
        _sandbox.check_env(self.env, self.inherit_env)
        self.dangerous_commands: Final[tuple[str, ...]] = (
            *DANGEROUS_COMMANDS,
            *(c for c in dangerous_commands if c not in DANGEROUS_COMMANDS),
        )
        self.sandbox: Sandbox | None = _sandbox.sandbox_of(sandbox)
        self.sandbox_problem: str | None = (
            None if self.sandbox is None else _sandbox.sandbox_problem(self.sandbox)
        )
        if self.sandbox_problem is not None:
            warnings.warn(
                f"{SHELL_TOOL}: no sandbox ({self.sandbox_problem}); every command will ask "
                "before it runs (pass sandbox=False to run commands without a sandbox)",
                SandboxWarning,
                stacklevel=2,
            )
        elif (
            self.sandbox is not None
            and not self.sandbox.unix_sockets
            and not _sandbox.unix_sockets_confined(self.sandbox)
        ):
            warnings.warn(
                f"{SHELL_TOOL}: the sandbox cannot keep commands from the host's Unix sockets on "
                f"this architecture ({platform.machine()}); commands may connect to them",
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
        """Deny list, dangerous commands and concerns, allow list, widening rules, else ask.

        Dangerous commands, concerns and session allow rules that would widen ask with a
        safety reason (see the module). Reading the command never raises.
        """
        command = str(tool_input.get("command", ""))
        try:
            argv = self._argv(command)
        except CommandError as error:
            return PermissionDecision.allow(f"nothing will run: {error}")
        try:
            return self._decide(command, read(argv), context)
        except Exception as error:  # reading never raises; if it ever does, the command asks
            return PermissionDecision.ask(
                f"'{_short(command)}' could not be read ({type(error).__name__}): approve it "
                "explicitly",
                reason="safety: the command could not be read",
            )

    def _decide(
        self, command: str, reading: Reading, context: PermissionContext
    ) -> PermissionDecision:
        shown = _short(command)
        for pattern in self.deny:
            words = _pattern_words(pattern)
            if words is not None and _any_view(words, reading):
                return PermissionDecision.deny(
                    f"The command is denied by the rule '{pattern}'", reason=f"deny list: {pattern}"
                )
        danger = _dangerous(reading, command, self.dangerous_commands)
        if danger is not None:
            return PermissionDecision.ask(
                f"'{shown}' is a dangerous command ({danger}): approve it explicitly",
                reason=f"safety: dangerous command '{danger}'",
            )
        concerns = reading.all_concerns()
        explicit = _inline_allowed(self.allow, reading)
        if explicit is not None and _allowed_by(self.allow, reading) is not None:
            return PermissionDecision.allow(f"inline code allowed by '{explicit}'")
        if concerns:
            return PermissionDecision.ask(
                f"'{shown}': {concerns[0]}; no rule can tell what it will do: approve it "
                "explicitly",
                reason=f"safety: {concerns[0]}",
            )
        allowed = _allowed_by(self.allow, reading)
        if allowed is not None:
            return PermissionDecision.allow(f"allowed by '{allowed}'")
        widening = self._widening_rule(reading, context)
        if widening is not None:
            return PermissionDecision.ask(
                f"The allow rule '{widening}' matches '{shown}' only by a wrapper or a wildcard: "
                f"the program that runs is '{reading.program}'; approve it explicitly or add a "
                "rule naming that program",
                reason=f"safety: the allow rule '{widening}' does not name '{reading.program}'",
            )
        if reading.script:
            return PermissionDecision.ask(
                f"Run the command '{shown}'? '{reading.program}' runs a script",
                reason="the command is not on the allow list",
            )
        return PermissionDecision.ask(
            f"Run the command '{shown}'?", reason="the command is not on the allow list"
        )

    def _widening_rule(self, reading: Reading, context: PermissionContext) -> str | None:
        """A session allow rule that `match_rule` matches but that does not name the program."""
        state = context.state
        if state.mode is PermissionMode.EXPLORE:
            return None  # explore mode denies the command anyway
        rules = state.rules_for(PermissionBehavior.ALLOW, self.name)
        contents = [rule.rule_content for rule in rules]
        if not contents or any(not content for content in contents):
            return None  # no rule, or one allowing the whole tool
        patterns = [content for content in contents if content]
        if _allowed_by(patterns, reading) is not None:
            return None
        for pattern in patterns:
            words = _pattern_words(pattern)
            if words is not None and _any_view(words, reading):
                return pattern
        return None

    def match_rule(self, rule_content: str | None, tool_input: dict[str, JsonValue]) -> bool:
        """A rule's content is a command prefix (``git status``, ``npm *``).

        It is matched against every view of the command: literal, each wrapper layer, the real
        program (with its `ALIASES`), and ``find -exec`` commands. An allow rule that matches
        only a wrapper is caught by `check_permissions` first.
        """
        if not rule_content:
            return True
        try:
            argv = split_command(str(tool_input.get("command", "")))
        except CommandError:
            return False  # nothing will run
        words = _pattern_words(rule_content)
        if words is None:
            return False
        try:
            return _any_view(words, read(argv))
        except Exception:  # never raises; if it did, a deny or ask rule must still hold
            return True

    def generate_suggestions(self, tool_input: dict[str, JsonValue]) -> tuple[PermissionRule, ...]:
        """Allow the program that really runs (with its sub-command, if it has one).

        Nothing is suggested for a command with inline code or another concern: no allow rule
        would stop it asking.
        """
        try:
            reading = read(split_command(str(tool_input.get("command", ""))))
        except CommandError:
            return ()
        except Exception:
            return ()
        if reading.all_concerns() or not reading.real:
            return ()
        argv = reading.real
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
        try:
            programs = [layer[0] for one in read(argv).walk() for layer in one.layers if layer]
            for program in programs:
                if "/" in program and not os.path.isabs(program):
                    base_dir = real(self.cwd or os.getcwd())
                    if not is_inside(real(os.path.join(base_dir, program)), base_dir):
                        raise CommandError(f"'{program}' is outside the working folder")
        except (OSError, ValueError) as error:
            if isinstance(error, CommandError):
                raise
            raise CommandError(f"cannot check the program's path: {error}") from None
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
            result = await self._wait(process, timeout, charset)
            return result if launch is None else _swept(result, launch.sweep())
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


def _swept(result: ToolResultBlock, moved: Sequence[tuple[str, str | None]]) -> ToolResultBlock:
    """``result`` saying which protected paths the sandbox moved aside (see `Sandbox.protected`).

    Such a path is one the host would run or obey later (a git hook, an editor's task): the
    command's result fails, so the model learns the change did not stand.
    """
    if not moved:
        return result
    lines = [
        f"Sandbox: {path} is protected; the command's change was moved to {to}"
        if to is not None
        else f"Sandbox: {path} is protected and the command changed it; it could not be moved"
        for path, to in moved
    ]
    out = result.structured
    assert isinstance(out, dict)
    stderr = str(out["stderr"])
    note = "\n".join(lines)
    returncode = out["returncode"]
    return _result(
        returncode if isinstance(returncode, int) and returncode != 0 else 1,
        str(out["stdout"]),
        f"{stderr}\n{note}" if stderr else note,
        timed_out=bool(out["timed_out"]),
    )


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
