"""Reading a command the way the kernel will run it, for ``execute_shell_command``'s policy.

`read` takes the argument vector the tool will start and follows it through the programs that
only start another one: wrappers (``env``, ``nice``, ``ionice``, ``timeout``, ``nohup``,
``stdbuf``, ``setsid``, ``time``, ``command``, ``exec``, ``sudo``/``doas``/``pkexec``/
``runuser``, ``xargs``, ``busybox``/``toybox`` applets, ``chroot``, ``flock``, ``unshare``,
``nsenter``, ``strace``, ``ltrace``, ``taskset``, ``fakeroot``, ``watch -x``...), each with its
own options, ``env``'s ``VAR=value`` words and ``env -S`` strings (split again and read). What
comes out is a `Reading`: every layer from the literal command down to the program that really
runs, plus the commands ``find -exec`` starts, plus *concerns*: what no reading can see through,
for which the policy asks with a safety reason (no mode or allow rule overrides it):

- **inline code**: a shell or an interpreter given code in an argument (``sh -c``, ``bash -lc``,
  ``python -c``, ``perl -e``/``-ne``, ``ruby -e``, ``node -e``/``-p``, ``php -r``, ``lua -e``,
  ``osascript -e``, ``pwsh -c``, ``Rscript -e``, ``vim -c``, ``gdb -ex``, ``flock -c``,
  ``su -c``, ``watch`` without ``-x``, ``sg``), an ``awk`` program that calls ``system``, pipes
  or loads an extension, GNU ``sed``'s ``e`` command and ``s///e`` flag, ``sqlite3``
  dot-commands that run a shell, and options of ordinary programs that run a command
  (``tar --to-command``, ``rsync -e``, ``ssh -o ProxyCommand``, ``sort --compress-program``...).
  An allow rule ``python *`` therefore never lets ``python -c '...'`` through silently (only
  the tool's own allow list can, with a pattern that names the option: ``python3 -c``);
- **git**: a ``-c``/``--config-env`` key that makes git run a program (aliases, pagers, editors,
  ``core.sshCommand``, ``core.fsmonitor``, ``core.hooksPath``, filters, diff drivers,
  ``include.path``, ``protocol.*.allow``...), ``--exec-path=``, ``git config`` setting such a
  key, and sub-command options that run a command (``rebase --exec``, ``--upload-pack``...);
- **the environment**: ``env``/``sudo`` assignments that change which program runs or what it
  loads (``PATH``, ``LD_PRELOAD``, ``BASH_ENV``, ``GIT_SSH_COMMAND``, ``PYTHONPATH``...);
- **what cannot be read**: wrappers nested deeper than `MAX_DEPTH`, an ``env -S`` string that
  does not split or holds variables, comments or escapes, a sed script over 1,024 characters.

Options are read the way getopt reads them: clustered (``-n5``, ``-iS'...'``), attached or
apart, long ones by any unambiguous prefix (``timeout --sig KILL``, ``rm --rec``).

A program the reader does not know is taken for the program that runs: an unknown wrapper
cannot be recognised in general, so it is simply a program that is not on the allow list (and
asks). A shell or interpreter given a script (a file, a module, stdin) is marked `Reading.script`:
it asks plainly, and only an allow pattern naming it (``bash *``, never a bare ``*``) allows it.

Reading costs time linear in the command's size: each layer is a slice of the previous one
(or one ``env -S`` split), the layers are bounded by `MAX_DEPTH`, and no pattern backtracks.

Not read (the OS sandbox under the shell is the answer to these): a program copied or linked
under another name, a script's contents, a ``Makefile``, ``npm``/``npx`` scripts, git aliases
and ``help.autocorrect`` set in a config file, commands ``ssh`` runs on another host.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

MAX_DEPTH: Final = 16
"""Wrappers (and ``find -exec`` levels) read before the command asks as unreadable."""

PRIVILEGED: Final = frozenset({"sudo", "doas", "su", "pkexec", "runuser", "run0", "sudoedit"})
"""Programs that run a command as another user (each is the dangerous command ``sudo``)."""

ALIASES: Final = {"unlink": "rm", "rmdir": "rm"}
"""Programs a rule names by another program's name: a rule ``rm *`` covers ``unlink x`` and
``rmdir x`` (each removes files the way ``rm`` does)."""


def base(token: str) -> str:
    """The program's name as a rule names it: the base name of its path."""
    return posixpath.basename(token)


@dataclass(frozen=True, slots=True)
class Reading:
    """A command read through its wrappers (see the module).

    Attributes:
        layers: The literal argument vector first, then each command the previous one runs;
            the last is the program that really runs (`real`).
        starts: For each layer but the last, where the next one begins in it (``None`` when
            the next one is not a slice of it: an ``env -S`` split).
        open_tail: The real command gets more arguments than these (``xargs``).
        subcommands: The commands it starts besides (``find -exec``), read the same way.
        concerns: Why it must ask with a safety reason, in words for the model.
        script: A shell or interpreter runs a script (a file, a module or stdin).
        inline_at: Where in `real` the option giving an interpreter inline code sits, when
            that is the only concern (an allow pattern reaching that word names it).
        find_deletes: The real command is ``find ... -delete``.
    """

    layers: tuple[tuple[str, ...], ...]
    starts: tuple[int | None, ...] = ()
    open_tail: bool = False
    subcommands: tuple[Reading, ...] = ()
    concerns: tuple[str, ...] = ()
    script: bool = False
    inline_at: int | None = None
    find_deletes: bool = False

    @property
    def real(self) -> tuple[str, ...]:
        """The command that really runs."""
        return self.layers[-1]

    @property
    def program(self) -> str:
        """The base name of the program that really runs."""
        return base(self.real[0]) if self.real else ""

    def position(self, layer: int) -> int | None:
        """Where the real program's name sits in ``layers[layer]`` (``None``: nowhere)."""
        total = 0
        for start in self.starts[layer:]:
            if start is None:
                return None
            total += start
        return total

    def walk(self) -> Iterator[Reading]:
        """This reading and every sub-command's, depth first."""
        yield self
        for sub in self.subcommands:
            yield from sub.walk()

    def all_concerns(self) -> tuple[str, ...]:
        """The concerns of this reading and of its sub-commands."""
        return tuple(concern for reading in self.walk() for concern in reading.concerns)


@dataclass(frozen=True, slots=True)
class _Spec:
    """How a wrapper's options are written."""

    value: str = ""  # short options that take a value (attached or the next word)
    optional: str = ""  # short options whose value is only attached (``xargs -i{}``)
    long_value: frozenset[str] = frozenset()  # long options that take the next word
    operands: int = 0  # words before the command (timeout's duration, chroot's root)
    assignments: bool = False  # ``VAR=value`` words before the command
    digits: bool = False  # ``-N`` is an option (``nice -5``)
    dash: bool = False  # a lone ``-`` is an option (``env -``)
    stop: frozenset[str] = frozenset()  # options after which no command follows
    inline: frozenset[str] = frozenset()  # options whose value is shell code


def _spec(
    value: str = "",
    long_value: str = "",
    *,
    optional: str = "",
    operands: int = 0,
    assignments: bool = False,
    digits: bool = False,
    dash: bool = False,
    stop: str = "",
    inline: str = "",
) -> _Spec:
    return _Spec(
        value=value,
        optional=optional,
        long_value=frozenset(long_value.split()),
        operands=operands,
        assignments=assignments,
        digits=digits,
        dash=dash,
        stop=frozenset(stop.split()),
        inline=frozenset(inline.split()),
    )


_WRAPPERS: Final[dict[str, _Spec]] = {
    "env": _spec(
        "uCSP",
        "--unset --chdir --split-string",
        assignments=True,
        dash=True,
    ),
    "nice": _spec("n", "--adjustment", digits=True),
    "ionice": _spec(
        "cnpPu", "--class --classdata --pid --pgid --uid", stop="-p -P -u --pid --pgid --uid"
    ),
    "timeout": _spec("sk", "--signal --kill-after", operands=1),
    "nohup": _spec(),
    "catchsegv": _spec(),
    "stdbuf": _spec("ioe", "--input --output --error"),
    "setsid": _spec(),
    "time": _spec("fo", "--format --output"),
    "command": _spec(stop="-v -V"),
    "exec": _spec("a"),
    "sudo": _spec(
        "ugpCDRTUrt",
        "--user --group --prompt --close-from --chdir --role --type --command-timeout "
        "--other-user --chroot --host",
        assignments=True,
        stop="-e -l -v -k -K -V --edit --list --validate --remove-timestamp --version",
    ),
    "sudoedit": _spec(stop="-e"),
    "doas": _spec("uC", stop="-L"),
    "pkexec": _spec("", "--user"),
    "run0": _spec("uDgM", "--user --chdir --group --machine --setenv --unit --property"),
    "runuser": _spec(
        "ugGcsw", "--user --group --supp-group --command --shell", inline="-c --command"
    ),
    "su": _spec(
        "cgGsw",
        "--command --session-command --group --supp-group --shell",
        inline="-c --command --session-command",
    ),
    "xargs": _spec(
        "adEILnPs",
        "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var",
        optional="eil",
    ),
    "chroot": _spec("", "--userspec --groups", operands=1),
    "flock": _spec(
        "wEc", "--timeout --conflict-exit-code --command", operands=1, inline="-c --command"
    ),
    "unshare": _spec(
        "SGRwl",
        "--setuid --setgid --root --wd --propagation --setgroups --map-user --map-group "
        "--map-users --map-groups --load-interp",
    ),
    "nsenter": _spec("tSG", "--target --setuid --setgid --env"),
    "strace": _spec(
        "eopsuEPabIOSXU",
        "--output --signal --trace --user --env --string-limit",
        stop="-p --attach",
    ),
    "ltrace": _spec("eopsunaADFlLx", "--output --user --indent --align", stop="-p"),
    "taskset": _spec("", "", operands=1, stop="-p --pid"),
    "chrt": _spec(
        "T", "--sched-runtime --sched-period --sched-deadline", operands=1, stop="-p --pid -m --max"
    ),
    "fakeroot": _spec("lsi", "--lib --faked"),
    "watch": _spec("n", "--interval"),
    "sg": _spec(operands=1),
    "script": _spec(
        "cEoIOTB",
        "--command --echo --output-limit --log-in --log-out --log-timing --log-io",
        inline="-c --command",
    ),
}
"""Programs that run the command after their options, and how their options are written."""

_APPLETS: Final = frozenset({"busybox", "toybox"})

_PYTHON: Final = re.compile(r"^(python|pypy|pythonw)[0-9.]*w?$")


@dataclass(frozen=True, slots=True)
class _Interp:
    """How an interpreter is told to run inline code (a concern) rather than a script."""

    inline: str = ""  # short options whose letter means inline code (``-c``, ``-e``)
    attached: str = ""  # short options that take the rest of their word (``perl -Mstrict``)
    valued: str = ""  # short options that take a value, attached or the next word
    module: str = ""  # short options that run a named module or file (a script)
    digits: str = ""  # short options followed by optional digits (``perl -l0 -0777``)
    long_inline: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()


def _interp(
    inline: str = "",
    attached: str = "",
    valued: str = "",
    module: str = "",
    long_inline: str = "",
    long_valued: str = "",
    digits: str = "",
) -> _Interp:
    return _Interp(
        inline,
        attached,
        valued,
        module,
        digits,
        frozenset(long_inline.split()),
        frozenset(long_valued.split()),
    )


_SHELL: Final = _interp(
    "c", valued="oO", long_inline="--command --init-command", long_valued="--rcfile --init-file"
)
_INTERPRETERS: Final[dict[str, _Interp]] = {
    "python": _interp("c", valued="WX", module="m"),
    "perl": _interp("eE", attached="MmxidDC", valued="I", digits="l0"),
    "ruby": _interp("e", attached="xWTKF", valued="IrEC", digits="0"),
    "node": _interp(
        "ep",
        valued="rC",
        long_inline="--eval --print",
        long_valued="--require --import --loader --conditions",
    ),
    "bun": _interp("ep", valued="r", long_inline="--eval --print", long_valued="--preload"),
    "php": _interp("rBRE", valued="cdztS", module="fF"),
    "lua": _interp("e", valued="l"),
    "luajit": _interp("e", valued="ljb"),
    "osascript": _interp("e", valued="ls"),
    "Rscript": _interp("e"),
    "R": _interp("e", valued="fg"),
    "julia": _interp(
        "eE", valued="LJCtp", long_inline="--eval --print", long_valued="--project --load"
    ),
    "expect": _interp("c"),
    "tclsh": _interp(),
    "wish": _interp(),
    "gdb": _interp(
        long_inline="-ex --ex -eval-command --eval-command -iex --init-eval-command -x --command"
    ),
    "vim": _interp("c", long_inline="--cmd"),
    "emacs": _interp(long_inline="--eval -eval --execute -execute -f --funcall"),
}
for _name in (
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "pdksh",
    "ash",
    "csh",
    "tcsh",
    "rbash",
    "yash",
    "posh",
    "oksh",
    "loksh",
):
    _INTERPRETERS[_name] = _SHELL
_INTERPRETERS["fish"] = _interp("cC", valued="o", long_inline="--command --init-command")
for _name in ("elvish", "nu", "xonsh"):
    _INTERPRETERS[_name] = _interp("c", long_inline="--command")
_INTERPRETERS["nodejs"] = _INTERPRETERS["node"]
for _name in ("vi", "nvim", "ex", "view", "vimdiff"):
    _INTERPRETERS[_name] = _INTERPRETERS["vim"]
for _name in ("lua5.1", "lua5.2", "lua5.3", "lua5.4"):
    _INTERPRETERS[_name] = _INTERPRETERS["lua"]
_PERL: Final = re.compile(r"^perl[0-9.]*$")
_VIM: Final = frozenset({"vim", "vi", "nvim", "ex", "view", "vimdiff"})

_POWERSHELL: Final = frozenset({"pwsh", "powershell", "powershell.exe", "pwsh.exe"})
_AWK: Final = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_RISK: Final = re.compile(r"system|\||@load")

# ordinary programs with options that run a command
_COMMAND_OPTIONS: Final[dict[str, tuple[str, ...]]] = {
    "tar": (
        "--to-command",
        "--checkpoint-action",
        "--use-compress-program",
        "-I",
        "--info-script",
        "--new-volume-script",
        "-F",
        "--rsh-command",
    ),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "ssh": (),  # -o ProxyCommand and the like (_SSH_RISKY)
    "scp": ("-S",),
    "sftp": ("-S",),
    "zip": ("-TT", "--unzip-command"),
    "sort": ("--compress-program",),
    "split": ("--filter",),
    "man": ("-P", "--pager", "-H", "--html"),
}
_SSH_RISKY: Final = (
    "proxycommand",
    "localcommand",
    "permitlocalcommand",
    "knownhostscommand",
    "remotecommand",
)

# git's global options (before the sub-command)
_GIT_VALUE: Final = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--list-cmds",
        "--attr-source",
    }
)
_GIT_KEYS: Final = frozenset(
    {
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.fsmonitor",
        "core.hookspath",
        "core.askpass",
        "core.gitproxy",
        "core.alternaterefscommand",
        "credential.helper",
        "diff.external",
        "gpg.program",
        "sequence.editor",
        "uploadpack.packobjectshook",
        "init.templatedir",
        "include.path",
        "web.browser",
        "sendemail.smtpserver",
        "interactive.difffilter",
        "receive.procreceiverefs",
        "uploadarchive.allowunreachable",
        "merge.tool",
        "diff.tool",
        "instaweb.httpd",
        "ssh.variant",
        "core.worktree",
        "help.autocorrect",
    }
)
_GIT_SECTIONS: Final = frozenset(
    {
        "alias",
        "pager",
        "includeif",
        "filter",
        "mergetool",
        "difftool",
        "browser",
        "man",
        "guitool",
        "protocol",
    }
)
_GIT_SUFFIXES: Final = (
    ".helper",
    ".textconv",
    ".command",
    ".driver",
    ".clean",
    ".smudge",
    ".process",
    ".program",
    ".cmd",
    ".uploadpack",
    ".receivepack",
    ".proxycommand",
    ".path",
)
# git sub-commands' options that run a command
_GIT_RUNS: Final[dict[str, tuple[str, ...]]] = {
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd", "-t", "--tool"),
    "mergetool": ("-t", "--tool"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "clone": ("-u", "--upload-pack", "--template", "-c", "--config"),
    "ls-remote": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
    "send-email": ("--smtp-server", "--to-cmd", "--cc-cmd", "--sendmail-cmd"),
    "init": ("--template",),
    "bisect": ("run",),
    "submodule": ("foreach",),
    "filter-branch": ("",),
    "daemon": ("",),
    "instaweb": ("",),
    "credential": ("",),
}

# environment variables that change which program runs or what it loads
_ENV_EXACT: Final = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "IFS",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "RUBYOPT",
        "RUBYLIB",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "BROWSER",
        "TAR_OPTIONS",
        "ZDOTDIR",
        "HOSTALIASES",
        "GCONV_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "GIT_EXEC_PATH",
        "GIT_PROXY_COMMAND",
        "GIT_TEMPLATE_DIR",
        "GIT_DIR",
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
    }
)
_ENV_PREFIXES: Final = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


class _Builder:
    """Collects one reading's layers and concerns."""

    def __init__(self, argv: tuple[str, ...], depth: int) -> None:
        self.layers: list[tuple[str, ...]] = [argv]
        self.starts: list[int | None] = []
        self.open_tail = False
        self.subcommands: list[Reading] = []
        self.concerns: list[str] = []
        self.script = False
        self.inline_at: int | None = None
        self.find_deletes = False
        self.depth = depth

    def push(self, argv: Sequence[str], start: int | None) -> None:
        self.layers.append(tuple(argv))
        self.starts.append(start)

    def concern(self, text: str) -> None:
        if text not in self.concerns:
            self.concerns.append(text)

    def inline(self, name: str, index: int, word: str) -> None:
        """``argv[index]`` (``word``) gives the interpreter ``name`` inline code."""
        self.concern(f"'{name} {word[:20]}' runs code given inline")
        self.inline_at = index

    def reading(self) -> Reading:
        return Reading(
            layers=tuple(self.layers),
            starts=tuple(self.starts),
            open_tail=self.open_tail,
            subcommands=tuple(self.subcommands),
            concerns=tuple(self.concerns),
            script=self.script,
            inline_at=self.inline_at if len(self.concerns) == 1 else None,
            find_deletes=self.find_deletes,
        )


def read(argv: Sequence[str], depth: int = 0) -> Reading:
    """Read ``argv`` the way the kernel will run it (see the module).

    Never raises; what cannot be read becomes a concern.
    """
    builder = _Builder(tuple(argv), depth)
    current = builder.layers[0]
    while current:
        if depth + len(builder.layers) > MAX_DEPTH:
            builder.concern(f"the command nests more than {MAX_DEPTH} wrappers: it cannot be read")
            break
        name = base(current[0])
        if name in _APPLETS:
            if len(current) > 1 and not current[1].startswith("-"):
                builder.push(current[1:], 1)
                current = builder.layers[-1]
                continue
            break
        spec = _WRAPPERS.get(name)
        if spec is None:
            break
        nxt = _unwrap(name, spec, current, builder)
        if nxt is None:
            break
        rest, start = nxt
        if not rest:
            break
        builder.push(rest, start)
        current = builder.layers[-1]
    if current and depth + len(builder.layers) <= MAX_DEPTH:
        _inspect(current, builder)
    return builder.reading()


def _unwrap(
    name: str, spec: _Spec, argv: tuple[str, ...], builder: _Builder
) -> tuple[tuple[str, ...], int | None] | None:
    """The command a wrapper runs and where it starts in ``argv`` (``None``: no command)."""
    index, options = _options(spec, argv)
    split: str | None = None
    splits = 0
    exec_flag = False
    for option, value in options:
        if option in spec.stop:
            return None
        if option in spec.inline:
            builder.concern(f"'{name} {option}' runs shell code given inline")
        if name == "env" and option in ("-S", "--split-string"):
            split = value or ""
            splits += 1
        if name == "watch" and option in ("-x", "--exec"):
            exec_flag = True
    if name == "flock" and index < len(argv):
        # flock [options] file -c command
        for word in argv[index + 1 : index + 2]:
            if word in ("-c", "--command") or word.startswith("--command="):
                builder.concern("'flock -c' runs shell code given inline")
                return None
    index += min(spec.operands, max(0, len(argv) - index))
    if spec.assignments:
        while index < len(argv) and "=" in argv[index] and not argv[index].startswith("="):
            variable = argv[index].split("=", 1)[0]
            if variable in _ENV_EXACT or variable.startswith(_ENV_PREFIXES):
                builder.concern(
                    f"'{name}' sets {variable}, which changes what the command runs or loads"
                )
            index += 1
    if split is not None:
        if splits > 1 or "$" in split or "#" in split or re.search(r"\\[^_]", split):
            builder.concern(
                "'env -S' holds variables, comments or escapes the policy does not read"
            )
            return None
        try:
            words = shlex.split(split.replace("\\_", " "), posix=True)
        except ValueError:
            builder.concern("the 'env -S' string does not split: it cannot be read")
            return None
        return ("env", *words, *argv[index:]), None
    if name == "watch" and not exec_flag:
        if index < len(argv):
            builder.concern("'watch' runs its command through a shell (without -x)")
        return None
    if name == "sg":
        if index < len(argv):
            builder.concern("'sg' runs its command through a shell")
        return None
    if name in ("su", "script") or (
        name == "runuser" and not any(option in ("-u", "--user") for option, _ in options)
    ):
        return None
    if name == "xargs":
        builder.open_tail = True
    return argv[index:], index


def _long_name(name: str, known: frozenset[str]) -> str:
    """A long option's full name, by any unambiguous prefix (``--sig`` is ``--signal``).

    getopt takes such prefixes; an ambiguous one makes the program refuse to run.
    """
    if name in known or len(name) < 3:
        return name
    matches = sorted(option for option in known if option.startswith(name))
    return matches[0] if matches else name


def _options(spec: _Spec, argv: Sequence[str]) -> tuple[int, list[tuple[str, str | None]]]:
    """Where a wrapper's options end, and the options (name, value) read on the way."""
    seen: list[tuple[str, str | None]] = []
    count = len(argv)
    index = 1
    while index < count:
        arg = argv[index]
        if arg == "--":
            return index + 1, seen
        if arg == "-":
            if not spec.dash:
                break
            seen.append(("-i", None))
            index += 1
            continue
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            name = _long_name(name, spec.long_value)
            if equals:
                seen.append((name, value))
            elif name in spec.long_value:
                seen.append((name, argv[index + 1] if index + 1 < count else None))
                index += 1
            else:
                seen.append((name, None))
            index += 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            if spec.digits and arg[1:].isdigit():
                seen.append(("-n", arg[1:]))
                index += 1
                continue
            position = 1
            while position < len(arg):
                letter = arg[position]
                option = f"-{letter}"
                if letter in spec.value:
                    value = arg[position + 1 :]
                    if not value and index + 1 < count:
                        index += 1
                        value = argv[index]
                    seen.append((option, value))
                    break
                if letter in spec.optional:
                    seen.append((option, arg[position + 1 :]))
                    break
                seen.append((option, None))
                position += 1
            index += 1
            continue
        break
    return index, seen


def _inspect(argv: tuple[str, ...], builder: _Builder) -> None:
    """Concerns of the real program: inline code, git, find, awk, command-running options."""
    name = base(argv[0])
    args = argv[1:]
    interp = _INTERPRETERS.get(name)
    if interp is None and _PYTHON.match(name):
        interp = _INTERPRETERS["python"]
    elif interp is None and _PERL.match(name):
        interp = _INTERPRETERS["perl"]
    if interp is not None:
        _interpreter(name, interp, args, builder)
    elif name in _POWERSHELL or name in ("cmd", "cmd.exe"):
        where = next((i for i, arg in enumerate(args, start=1) if _powershell_inline(arg)), None)
        if where is not None:
            builder.inline(name, where, argv[where])
        else:
            builder.script = True
    elif name == "deno" and args and args[0] in ("eval", "repl"):
        builder.inline(name, 1, args[0])
    elif name in _AWK:
        _awk(name, args, builder)
    elif name == "git":
        _git(argv, builder)
    elif name == "find":
        _find(argv, builder)
    elif name in ("sed", "gsed"):
        _sed(name, args, builder)
    elif name in ("sqlite3", "sqlite"):
        if any(
            arg.lstrip().startswith((".sh", ".system", ".output", ".once", ".load"))
            or arg == "-cmd"
            for arg in args
        ):
            builder.concern("'sqlite3' dot-commands run a shell or write files")
    elif name in _COMMAND_OPTIONS:
        _command_options(name, args, builder)


def _interpreter(name: str, spec: _Interp, args: Sequence[str], builder: _Builder) -> None:
    """Inline code is a concern; anything else runs a script (a file, a module or stdin)."""
    skip = False
    for index, arg in enumerate(args, start=1):
        if skip:
            skip = False
            continue
        option = arg.split("=", 1)[0]
        if option in spec.long_inline:
            builder.inline(name, index, option)
            return
        if option in spec.long_valued:
            skip = "=" not in arg
            continue
        if name in _VIM and arg.startswith("+") and len(arg) > 1:
            builder.inline(name, index, arg)
            return
        if arg == "--" or arg in ("-", "+") or not arg.startswith(("-", "+")):
            break
        if arg.startswith("--"):
            continue
        letters = arg[1:]
        if spec.digits:  # digits after -l or -0 are the option's value, not letters
            letters = re.sub(f"([{spec.digits}])[0-9a-fA-Fx]*", r"\1", letters)
        for position, letter in enumerate(letters, start=1):
            if letter in spec.inline:
                builder.inline(name, index, arg)
                return
            if letter in spec.module:
                builder.script = True
                return
            if letter in spec.attached:
                break
            if letter in spec.valued:
                skip = position == len(letters)
                break
    builder.script = True


def _powershell_inline(arg: str) -> bool:
    lowered = arg.lower()
    if not lowered.startswith(("-", "/")):
        return False
    word = lowered.lstrip("-/")
    return word in ("c", "e", "ec", "enc", "cwa") or word.startswith(("comm", "encod"))


def _awk(name: str, args: Sequence[str], builder: _Builder) -> None:
    index = 0
    program_given = False
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        option, equals, value = (
            arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        )
        takes = option in (
            "-f",
            "-v",
            "-F",
            "-e",
            "-E",
            "-i",
            "-l",
            "--file",
            "--assign",
            "--field-separator",
            "--source",
            "--include",
            "--load",
            "--exec",
        )
        if takes and not value and not equals:
            index += 1
            value = args[index] if index < len(args) else ""
        if option in ("-f", "--file", "-E", "--exec", "-i", "--include"):
            builder.script = True
            program_given = True
        elif option in ("-l", "--load"):
            builder.concern(f"'{name} {option}' loads a compiled extension")
        elif option in ("-e", "--source"):
            program_given = True
            if _AWK_RISK.search(value):
                builder.concern(f"the {name} program runs commands (system, pipes or @load)")
        index += 1
    if not program_given and index < len(args) and _AWK_RISK.search(args[index]):
        builder.concern(f"the {name} program runs commands (system, pipes or @load)")


# possessive quantifiers: no backtracking, so a search costs time linear in the script
_SED_EXECUTE: Final = re.compile(
    r"(?:^|[;{}\n])\s*+(?:[0-9$]++|/(?:[^/\\\n;]|\\.)*+/)?+"
    r"(?:,\s*+(?:[0-9$]++|/(?:[^/\\\n;]|\\.)*+/))?+\s*+!?+\s*+e(?:\s|;|}|$)"
    r"|s([^\\\n])(?:(?!\1)[^\\\n]|\\.)*+\1(?:(?!\1)[^\\\n]|\\.)*+\1[gpiImMw0-9]*+e"
)
_SED_LONGEST: Final = 1024
"""Characters of a sed script the policy reads; a longer script asks."""


def _sed(name: str, args: Sequence[str], builder: _Builder) -> None:
    """GNU sed's ``e`` command and ``s///e`` flag run a shell command."""
    scripts: list[str] = []
    index = 0
    given = False
    while index < len(args):
        arg = args[index]
        if arg in ("-e", "--expression") and index + 1 < len(args):
            scripts.append(args[index + 1])
            given = True
            index += 2
            continue
        if arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
            given = True
        elif arg.startswith("-e") and len(arg) > 2:
            scripts.append(arg[2:])
            given = True
        elif arg in ("-f", "--file") or arg.startswith(("--file=", "-f")):
            given = True
        elif not arg.startswith("-") and not given:
            scripts.append(arg)
            given = True
        index += 1
    if any(len(script) > _SED_LONGEST for script in scripts):
        builder.concern(f"the {name} script is too long for the policy to read")
    elif any(_SED_EXECUTE.search(script) for script in scripts):
        builder.concern(f"the {name} script runs a shell command (the e command or flag)")


def _command_options(name: str, args: Sequence[str], builder: _Builder) -> None:
    options = _COMMAND_OPTIONS[name]
    for index, arg in enumerate(args):
        lowered = arg.lower()
        if name in ("ssh", "scp", "sftp"):
            value = ""
            if lowered == "-o" and index + 1 < len(args):
                value = args[index + 1].lower()
            elif lowered.startswith("-o"):
                value = lowered[2:]
            if value.lstrip().startswith(_SSH_RISKY):
                builder.concern(
                    f"'{name} -o {value.split('=')[0].split()[0]}' runs a local command"
                )
                return
            if name != "ssh" and arg == "-S":
                builder.concern(f"'{name} -S' runs a program of its choosing")
                return
            continue
        option = arg.split("=", 1)[0]
        if option in options or (
            len(option) > 2 and not option.startswith("--") and option[:2] in options
        ):
            if name == "tar" and option == "--checkpoint-action" and "exec" not in arg:
                continue
            builder.concern(f"'{name} {option}' runs a command")
            return


def _git(argv: tuple[str, ...], builder: _Builder) -> None:
    """Read git's global options before its sub-command (a layer without them)."""
    index = 1
    count = len(argv)
    while index < count:
        arg = argv[index]
        if not arg.startswith("-") or arg == "--":
            break
        option, equals, value = arg.partition("=")
        if arg.startswith("-c") and len(arg) > 2:  # git refuses it; read it anyway
            option, value = "-c", arg[2:]
        elif option in ("-C", "-c") or (option in _GIT_VALUE and not equals):
            if index + 1 < count:
                index += 1
                value = argv[index]
            else:
                value = ""
        if option == "-c" or option == "--config-env":
            if _git_key_runs(value):
                builder.concern(
                    f"'git {option} {value.split('=')[0]}' sets a key that makes git run a program"
                )
        elif option == "--exec-path" and equals:
            builder.concern("'git --exec-path=' makes git run programs from another folder")
        elif (
            option == "--exec-path"
            and index + 1 < count
            and not argv[index + 1].startswith("-")
            and "/" in argv[index + 1]
        ):
            builder.concern("'git --exec-path' makes git run programs from another folder")
            index += 1
        index += 1
    if index < count and argv[index] == "--":
        index += 1
    rest = argv[index:]
    if index > 1:
        builder.push(("git", *rest), 0)
    if not rest:
        return
    sub = rest[0]
    runs = _GIT_RUNS.get(sub)
    if runs is not None:
        for arg in rest[1:]:
            option = arg.split("=", 1)[0]
            if option.startswith("--") and len(option) > 3:
                option = _long_name(option, frozenset(run for run in runs if run.startswith("--")))
            if (
                "" in runs
                or option in runs
                or (option[:2] in runs and not option.startswith("--") and len(option) > 2)
            ):
                builder.concern(f"'git {sub} {option}' runs a command".replace("  ", " "))
                return
        if "" in runs:
            builder.concern(f"'git {sub}' runs commands")
    if sub == "config":
        for arg in rest[1:]:
            if _git_key_runs(arg):
                builder.concern(f"'git config {arg}' sets a key that makes git run a program")
                return


def _git_key_runs(setting: str) -> bool:
    key = setting.split("=", 1)[0].strip().lower()
    if key in _GIT_KEYS:
        return True
    section = key.split(".", 1)[0]
    return section in _GIT_SECTIONS or key.endswith(_GIT_SUFFIXES)


def _find(argv: tuple[str, ...], builder: _Builder) -> None:
    """``find -delete`` is marked; each ``-exec``/``-execdir``/``-ok``/``-okdir`` is read."""
    index = 1
    count = len(argv)
    while index < count:
        arg = argv[index]
        if arg == "-delete":
            builder.find_deletes = True
        elif arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < count and argv[end] not in (";", "+"):
                end += 1
            if end > index + 1:
                builder.subcommands.append(
                    read(argv[index + 1 : end], builder.depth + len(builder.layers))
                )
            index = end
        index += 1


__all__ = ["ALIASES", "MAX_DEPTH", "PRIVILEGED", "Reading", "base", "read"]
