"""Reading a command the way the kernel will run it, for ``execute_shell_command``'s policy.

`read` takes the argument vector the tool will start and follows it through the programs that
only start another one: wrappers (``env``, ``nice``, ``ionice``, ``timeout``, ``nohup``,
``stdbuf``, ``setsid``, ``time``, ``command``, ``exec``, ``sudo``/``doas``/``pkexec``/
``runuser``, ``xargs``, ``busybox``/``toybox`` applets, ``chroot``, ``flock``, ``unshare``,
``nsenter``, ``strace``, ``ltrace``, ``taskset``, ``fakeroot``, ``watch -x``, ``setarch``,
``prlimit``, ``ssh-agent``, ``numactl``, ``firejail``, ``systemd-run``, ``faketime``,
``valgrind``, the dynamic loader ``ld.so``, ``entr``, ``rlwrap``, ``torsocks``...), each with its
own options, ``env``'s ``VAR=value`` words (and such words before a program) and ``env -S``
strings (split again and read); a ``git-<sub>`` program is ``git <sub>``. What comes out is
a `Reading`: every layer from the literal command down to the program that really runs, plus
the commands ``find -exec`` starts, plus *concerns*: what no reading can see through, for which
the policy asks with a safety reason (no mode or allow rule overrides it):

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

A program the reader does not know is taken for the program that runs, but it fails closed: the
first argument naming an interpreter, a wrapper or a program that removes or overwrites is read
as a command it may run (``frob rm -rf /`` is dangerous, ``mywrap bash x`` a concern), unless the
program's arguments are data (``grep``, ``echo``...). ``xargs`` giving unread arguments to a
program that arguments can make run code (an interpreter, a wrapper, ``git``, ``find``...) is a
concern. A shell or interpreter given a script (a file, a module, stdin) is marked
`Reading.script`: it asks plainly, and only an allow pattern naming it (``bash *``, never a bare
``*``) allows it; ``python -m`` and ``find -fprint`` (``-fprint0``, ``-fprintf``, ``-fls``) are
allowed only by a pattern that reaches the module or the file (`Reading.explicit_at`).

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
        explicit_at: A word of `real` an allow pattern must reach to allow it (``python -m``'s
            module, ``find -fprint``'s file): a wider pattern leaves the command asking.
    """

    layers: tuple[tuple[str, ...], ...]
    starts: tuple[int | None, ...] = ()
    open_tail: bool = False
    subcommands: tuple[Reading, ...] = ()
    concerns: tuple[str, ...] = ()
    script: bool = False
    inline_at: int | None = None
    find_deletes: bool = False
    explicit_at: int | None = None

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
    runs: frozenset[str] = frozenset()  # options naming a program or library it runs or loads
    lead: int = 0  # words before the options (setarch's architecture)
    shell: bool = False  # the command runs through a shell (``sg``, ``parallel``, ``watch``)
    exec_flag: frozenset[str] = frozenset()  # options that run the command without a shell


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
    runs: str = "",
    lead: int = 0,
    shell: bool = False,
    exec_flag: str = "",
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
        runs=frozenset(runs.split()),
        lead=lead,
        shell=shell,
        exec_flag=frozenset(exec_flag.split()),
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
    "watch": _spec("nd", "--interval", shell=True, exec_flag="-x --exec"),
    "sg": _spec(operands=1, shell=True),
    "parallel": _spec(shell=True),
    "setarch": _spec(lead=1, stop="--list"),
    "linux32": _spec(),
    "linux64": _spec(),
    "i386": _spec(),
    "x86_64": _spec(),
    "prlimit": _spec("po", "--pid --output", optional="acdefilmnqrstuvxy", stop="-p --pid"),
    "ssh-agent": _spec("aEOPt", stop="-k"),
    "dbus-run-session": _spec("", "--config-file --dbus-daemon", runs="--dbus-daemon"),
    "numactl": _spec(
        "ipPmNCwu",
        "--interleave --preferred --preferred-many --membind --cpunodebind --physcpubind "
        "--weighted-interleave",
        stop="-s -H --show --hardware",
    ),
    "firejail": _spec(stop="--list --tree --top --version --help"),
    "systemd-run": _spec(
        "upEHMd",
        "--unit --property --description --slice --setenv --host --machine --uid --gid "
        "--nice --working-directory --on-active --on-boot --on-startup --on-unit-active "
        "--on-unit-inactive --on-calendar --on-clock-change --on-timezone-change "
        "--timer-property --path-property --socket-property --service-type --json",
    ),
    "faketime": _spec("p", "--date-prog", operands=1, runs="--date-prog"),
    "valgrind": _spec(runs="--db-command"),
    "ld.so": _spec(
        "",
        "--library-path --preload --audit --argv0 --inhibit-rpath --glibc-hwcaps-prepend "
        "--glibc-hwcaps-mask",
        stop="--list --verify --help --version --list-tunables --list-diagnostics",
        runs="--library-path --preload --audit",
    ),
    "entr": _spec(inline="-s"),
    "rlwrap": _spec(
        "bCDefFgHlMOPqsStwz",
        "--break-chars --command-name --history-filename --file --logfile --filter "
        "--histsize --prompt-colour --pre-given --substitute-prompt --wait-before-prompt",
        optional="admop",
        runs="-z --filter",
    ),
    "torsocks": _spec("upaP", "--user --pass --address --port"),
    "proxychains": _spec("f"),
    "proxychains4": _spec("f"),
    "script": _spec(
        "cEoIOTB",
        "--command --echo --output-limit --log-in --log-out --log-timing --log-io",
        inline="-c --command",
    ),
}
"""Programs that run the command after their options, and how their options are written."""

_APPLETS: Final = frozenset({"busybox", "toybox"})
DISK_WRITERS: Final[tuple[str, ...]] = (
    "mke2fs",
    "mkswap",
    "fdisk",
    "sfdisk",
    "parted",
    "wipefs",
    "blkdiscard",
    "shred",
    "truncate",
)
"""Programs that format, partition, wipe or cut storage: dangerous whatever their arguments."""
_NAMED_RISK: Final = frozenset(
    {
        *ALIASES,
        "rm",
        "dd",
        *DISK_WRITERS,
        "chmod",
        "chown",
        "kill",
        "pkill",
        "killall",
        "reboot",
        "shutdown",
        "halt",
        "poweroff",
        "init",
        "telinit",
        "systemctl",
        "crontab",
        "iptables",
        "ip6tables",
        "nft",
        "curl",
        "wget",
        "tar",
        "cp",
        "mv",
        "tee",
    }
)
"""Programs that remove, overwrite or fetch: an unknown program naming one may run it."""
_DATA: Final = frozenset(
    {
        "ls",
        "cat",
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "head",
        "tail",
        "wc",
        "which",
        "whereis",
        "type",
        "file",
        "stat",
        "apropos",
        "whatis",
        "info",
        "touch",
        "mkdir",
        "rmdir",
        "rm",
        "unlink",
        "cp",
        "mv",
        "ln",
        "install",
        "chmod",
        "chown",
        "chgrp",
        "du",
        "df",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "diff",
        "cmp",
        "comm",
        "cut",
        "tr",
        "uniq",
        "tee",
        "test",
        "[",
        "true",
        "false",
        "pgrep",
        "pkill",
        "killall",
        "kill",
        "ps",
        "pidof",
        "apt",
        "apt-get",
        "apt-cache",
        "dpkg",
        "rpm",
        "yum",
        "dnf",
        "pacman",
        "brew",
        "pip",
        "pip3",
        "npm",
        "yarn",
        "pnpm",
        "cargo",
        "go",
        "gem",
        "jq",
        "yq",
        "curl",
        "wget",
        "base64",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "tree",
        "id",
        "whoami",
        "date",
        "sleep",
        "seq",
        "locate",
        "fd",
        "fdfind",
        "dig",
        "host",
        "nslookup",
        "ping",
        "shred",
        "truncate",
        "dd",
        "mkswap",
        "wipefs",
        "tldr",
        "pwd",
        "uname",
        "hostname",
        "lsblk",
        "blkid",
        "namei",
        "nl",
        "fold",
        "fmt",
        "paste",
        "join",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "column",
        "rev",
        "tac",
        "shuf",
        "gzip",
        "gunzip",
        "bzip2",
        "xz",
        "zstd",
        "unzip",
        "patch",
        "crontab",
        "systemctl",
        "journalctl",
        "pytest",
        "ruff",
        "mypy",
        "black",
        "isort",
        "flake8",
        "pylint",
    }
)
"""Programs whose arguments are data (files, patterns, text, package names): their
arguments are not read for a command they might run (``grep -r python .``, ``echo rm``)."""
_LOADER: Final = re.compile(r"^ld(?:-linux[-\w.]*|-musl-[-\w]+)?\.so(?:\.[0-9]+)*$")
_ASSIGNMENT: Final = re.compile(r"^[^=]+=")
_PREFIX_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

_PYTHON: Final = re.compile(r"^(python|pypy|pythonw)[0-9.]*w?$")


@dataclass(frozen=True, slots=True)
class _Interp:
    """How an interpreter is told to run inline code (a concern) rather than a script."""

    inline: str = ""  # short options whose letter means inline code (``-c``, ``-e``)
    attached: str = ""  # short options that take the rest of their word (``perl -Mstrict``)
    valued: str = ""  # short options that take a value, attached or the next word
    module: str = ""  # short options that run a named module or file (a script)
    digits: str = ""  # short options followed by optional digits (``perl -l0 -0777``)
    named: str = ""  # of `module`, those whose value a pattern must name (``python -m``)
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
    named: str = "",
) -> _Interp:
    return _Interp(
        inline,
        attached,
        valued,
        module,
        digits,
        named,
        frozenset(long_inline.split()),
        frozenset(long_valued.split()),
    )


_SHELL: Final = _interp(
    "c", valued="oO", long_inline="--command --init-command", long_valued="--rcfile --init-file"
)
_INTERPRETERS: Final[dict[str, _Interp]] = {
    "python": _interp("c", valued="WX", module="m", named="m"),
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
    "guile": _interp("c", valued="lLCx", long_valued="--use-srfi --language"),
    "racket": _interp("e", valued="ftlrpkmiu", long_inline="--eval --load"),
    "elixir": _interp("e", valued="r", long_inline="--eval --rpc-eval", long_valued="--require"),
    "erl": _interp(long_inline="-eval -s -run"),
    "sbcl": _interp(long_inline="--eval --load"),
    "clisp": _interp("x", valued="iIMLBcl"),
    "groovy": _interp("e"),
    "scala": _interp("e"),
    "jrunscript": _interp("e", valued="l", long_inline="-e"),
    "gnuplot": _interp("e", long_inline="--e"),
    "octave": _interp(long_inline="--eval"),
    "ghc": _interp("e"),
    "pike": _interp("e"),
    "jshell": _interp(),
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
_VERSIONED: Final = re.compile(r"^([A-Za-z]+?)[-_]?[0-9][0-9.]*$")
_VIM: Final = frozenset({"vim", "vi", "nvim", "ex", "view", "vimdiff"})

_POWERSHELL: Final = frozenset({"pwsh", "powershell", "powershell.exe", "pwsh.exe"})
_AWK: Final = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_RISK: Final = re.compile(r"system|\||@load")


@dataclass(frozen=True, slots=True)
class _Runs:
    """Options of an ordinary program that make it run a command (or read one from a file)."""

    short: str = ""  # short options that run something (``tar -I``), read in clusters
    valued: str = ""  # other short options that take a value (they end a cluster)
    long: frozenset[str] = frozenset()  # long ones, by any prefix getopt_long would take
    exact: frozenset[str] = frozenset()  # long options that are prefixes of those
    words: tuple[str, ...] = ()  # options of several letters after one dash (``zip -TT``)
    only: tuple[tuple[str, re.Pattern[str]], ...] = ()  # ...only when the value matches
    bundled: bool = False  # the first word may be a cluster without a dash (``tar xIf``)
    assigns: frozenset[str] = frozenset()  # ``VAR=value`` operands that run something
    plus: re.Pattern[str] | None = None  # a ``+command`` operand matching this runs one


def _runs(
    short: str = "",
    long: str = "",
    *,
    valued: str = "",
    exact: str = "",
    words: str = "",
    only: dict[str, str] | None = None,
    bundled: bool = False,
    assigns: str = "",
    plus: str = "",
) -> _Runs:
    return _Runs(
        short=short,
        valued=valued,
        long=frozenset(long.split()),
        exact=frozenset(exact.split()),
        words=tuple(words.split()),
        only=tuple((option, re.compile(value, re.I)) for option, value in (only or {}).items()),
        bundled=bundled,
        assigns=frozenset(assigns.split()),
        plus=re.compile(plus) if plus else None,
    )


_SSH_RISKY: Final = (
    r"^\s*(?:proxycommand|localcommand|permitlocalcommand|knownhostscommand|remotecommand"
    r"|include|securitykeyprovider|pkcs11provider|match)"
)
_DEVICE_FILE: Final = r"^(?:/dev/|/proc/|-$)"
_RUNS: Final[dict[str, _Runs]] = {
    "tar": _runs(
        "IF",
        "--to-command --use-compress-program --info-script --new-volume-script --rsh-command "
        "--rmt-command --checkpoint-action",
        valued="bCfgHKLNTVX",
        exact="--checkpoint",
        only={"--checkpoint-action": "exec"},
        bundled=True,
    ),
    "rsync": _runs("eM", "--rsh --rsync-path --remote-option", valued="BfT@", exact="--rsync"),
    "ssh": _runs("oF", valued="BbcDEeIiJLlmOpQRSWw", only={"-o": _SSH_RISKY}),
    "scp": _runs("SFo", valued="cDiJlPX", only={"-o": _SSH_RISKY}),
    "sftp": _runs("SDFbo", valued="BcilPRsX", only={"-o": _SSH_RISKY}),
    "zip": _runs("", "--unzip-command", words="-TT"),
    "sort": _runs("", "--compress-program"),
    "split": _runs("", "--filter"),
    "man": _runs("PH", "--pager --html", valued="CELMmpRrSseXT"),
    "make": _runs(
        "Ef",
        "--eval --file --makefile",
        valued="CIoW",
        only={"-f": _DEVICE_FILE, "--file": _DEVICE_FILE, "--makefile": _DEVICE_FILE},
        assigns="SHELL .SHELLFLAGS MAKEFLAGS MFLAGS MAKEFILES MAKESHELL",
    ),
    "less": _runs("", plus=r"[!|v]"),
}
"""Ordinary programs with options that run a command, and how those are written: any of them
is a concern (the command they run is never read)."""
_RUNS["gmake"] = _RUNS["make"]
_ARGUMENTS_RUN: Final = frozenset(
    {*_AWK, "git", "find", "sed", "gsed", "sqlite3", "sqlite", "vim", "cmd", "cmd.exe"}
)
"""Programs besides interpreters and wrappers that some arguments make run code (``xargs``
giving them unread arguments is a concern)."""

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
        "gpg",
        "credential",
        "sendemail",
        "include",
        "hook",
    }
)
_GIT_SUFFIXES: Final = (
    "cmd",
    "command",
    "hook",
    "program",
    "pager",
    "editor",
    "helper",
    "tool",
    "askpass",
    "proxy",
    "textconv",
    "driver",
    ".clean",
    ".smudge",
    ".process",
    ".uploadpack",
    ".receivepack",
    ".path",
)
"""Endings of keys that name a program, whatever their section (``core.sshCommand``,
``diff.<driver>.textconv``, ``uploadpack.packObjectsHook``): matched by pattern, so a key
this list does not spell still asks."""
# git sub-commands' options that run a command
_GIT_RUNS: Final[dict[str, _Runs]] = {
    "grep": _runs("O", "--open-files-in-pager", valued="efABCm"),
    "rebase": _runs("x", "--exec", valued="sXC"),
    "difftool": _runs("xt", "--extcmd --tool"),
    "mergetool": _runs("t", "--tool"),
    "fetch": _runs("", "--upload-pack"),
    "pull": _runs("", "--upload-pack"),
    "clone": _runs("uc", "--upload-pack --template --config", valued="objs"),
    "ls-remote": _runs("", "--upload-pack"),
    "push": _runs("", "--receive-pack --exec"),
    "send-pack": _runs("", "--receive-pack --exec"),
    "archive": _runs("", "--exec"),
    "send-email": _runs("", "--smtp-server --to-cmd --cc-cmd --sendmail-cmd"),
    "init": _runs("", "--template"),
    "bisect": _runs(words="run"),
    "submodule": _runs(words="foreach"),
}
_GIT_ALWAYS: Final = frozenset({"filter-branch", "daemon", "instaweb", "credential"})
"""git sub-commands that run commands whatever their options."""
SUBCOMMAND_ALIASES: Final = {"git": {"send-pack": "push", "http-push": "push"}}
"""Sub-commands a rule names by another's name: ``deny=["git push"]`` stops ``git send-pack``
and ``git http-push`` (each pushes the way ``git push`` does)."""

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
        self.explicit_at: int | None = None
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
            explicit_at=self.explicit_at,
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
        if _PREFIX_ASSIGNMENT.match(current[0]):
            after = _assignments(current[0][:40], current, 0, builder)
            if after >= len(current):
                break
            builder.push(current[after:], after)
            current = builder.layers[-1]
            continue
        if name.startswith("git-") and len(name) > 4:  # git-push is git push
            builder.push(("git", name[4:], *current[1:]), 0)
            current = builder.layers[-1]
            break
        name = _wrapper_name(name)
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
        if builder.open_tail and _runs_by_arguments(base(current[0])):
            builder.concern(
                f"'xargs' gives '{base(current[0])}' arguments the policy cannot read, and "
                "they may make it run code"
            )
        _inspect(current, builder)
    return builder.reading()


def _wrapper_name(name: str) -> str:
    """The `_WRAPPERS` entry a program goes by (the dynamic loader has many names)."""
    return "ld.so" if _LOADER.match(name) else name


def _runs_by_arguments(name: str) -> bool:
    """Whether arguments alone can make ``name`` run code (``xargs`` supplies unread ones)."""
    return (
        _interpreter_of(name) is not None
        or _wrapper_name(name) in _WRAPPERS
        or name in _APPLETS
        or name in _ARGUMENTS_RUN
        or name in _RUNS
        or name in _POWERSHELL
    )


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
        if option in spec.runs:
            builder.concern(f"'{name} {option}' names a program or library it runs or loads")
        if name == "env" and option in ("-S", "--split-string"):
            split = value or ""
            splits += 1
        exec_flag = exec_flag or option in spec.exec_flag
    if name == "flock" and index < len(argv):
        # flock [options] file -c command
        for word in argv[index + 1 : index + 2]:
            if word in ("-c", "--command") or word.startswith("--command="):
                builder.concern("'flock -c' runs shell code given inline")
                return None
    index += min(spec.operands, max(0, len(argv) - index))
    if spec.assignments:
        index = _assignments(name, argv, index, builder)
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
    if spec.shell and not exec_flag:
        if index < len(argv):
            builder.concern(f"'{name}' runs its command through a shell")
        return None
    if name in ("su", "script") or (
        name == "runuser" and not any(option in ("-u", "--user") for option, _ in options)
    ):
        return None
    if name == "xargs":
        builder.open_tail = True
    return argv[index:], index


def _assignments(name: str, argv: Sequence[str], index: int, builder: _Builder) -> int:
    """Where ``VAR=value`` words from ``index`` end.

    A variable that changes what runs is a concern (``env GIT_PAGER=x git log``,
    ``LD_PRELOAD=x ls``, and the same words before a program).
    """
    while index < len(argv) and _ASSIGNMENT.match(argv[index]):
        variable = argv[index].split("=", 1)[0]
        if variable in _ENV_EXACT or variable.startswith(_ENV_PREFIXES):
            builder.concern(
                f"'{name}' sets {variable}, which changes what the command runs or loads"
            )
        index += 1
    return index


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
    if spec.lead and count > 1 and not argv[1].startswith("-"):
        index += min(spec.lead, count - 1)
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
    interp = _interpreter_of(name)
    if interp is not None:
        _interpreter(name, interp, args, builder)
        if name == "gdb":  # ``gdb --args prog ...`` runs prog (given ``run``, in any script)
            at = next((i for i, arg in enumerate(args) if arg in ("--args", "-args")), None)
            if at is not None and at + 1 < len(args):
                builder.subcommands.append(
                    read(args[at + 1 :], builder.depth + len(builder.layers))
                )
    elif name in _POWERSHELL or name in ("cmd", "cmd.exe"):
        where = next((i for i, arg in enumerate(args, start=1) if _powershell_inline(arg)), None)
        if where is not None:
            builder.inline(name, where, argv[where])
        else:
            builder.script = True
    elif name in ("deno", "bun") and args and args[0] in ("eval", "repl", "-e", "--eval"):
        builder.inline(name, 1, args[0])
    elif name in ("deno", "bun"):
        builder.script = True
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
    elif name in _RUNS:
        _command_options(name, args, builder)
    elif name not in _DATA:
        _unknown(argv, builder)


def _unknown(argv: tuple[str, ...], builder: _Builder) -> None:
    """A program the reader does not know may be a wrapper: it fails closed.

    The first argument naming an interpreter, a wrapper or a program that removes, overwrites
    or fetches is read as a command it runs (a sub-command, so the lists and the dangerous
    commands see it), and an interpreter so named is a concern (``frob rm -rf /``,
    ``mywrap bash -c x``). Programs whose arguments are data (`_DATA`) are not read so.
    """
    for index in range(1, len(argv)):
        name = base(argv[index])
        if argv[index].startswith("-") or not (
            _interpreter_of(name) is not None
            or _wrapper_name(name) in _WRAPPERS
            or name in _APPLETS
            or name in _ARGUMENTS_RUN
            or name in _RUNS
            or name in _POWERSHELL
            or name in _NAMED_RISK
            or name in PRIVILEGED
            or name.startswith("mkfs")
        ):
            continue
        sub = read(argv[index:], builder.depth + len(builder.layers))
        builder.subcommands.append(sub)
        if _interpreter_of(sub.program) is not None or sub.program in _POWERSHELL:
            builder.concern(
                f"'{base(argv[0])}' names the interpreter '{sub.program}': it may run it"
            )
        return


def _interpreter_of(name: str) -> _Interp | None:
    """How the interpreter ``name`` takes inline code, by its family.

    A version after the name (``python3.11``, ``pypy3``, ``perl5.36``, ``ruby3.1``,
    ``node18``, ``php8.2``, ``lua5.4``, ``tclsh8.6``, ``luajit-2.1``) is the same interpreter.
    """
    found = _INTERPRETERS.get(name)
    if found is not None:
        return found
    if _PYTHON.match(name):
        return _INTERPRETERS["python"]
    family = _VERSIONED.match(name)
    return _INTERPRETERS.get(family.group(1)) if family else None


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
                if letter in spec.named:  # the module is the rest of the word or the next one
                    builder.explicit_at = index + (position == len(letters))
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
            "-W",
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
    option = _running_option(_RUNS[name], args)
    if option is not None:
        builder.concern(f"'{name} {option}' runs a command")


def _running_option(spec: _Runs, args: Sequence[str]) -> str | None:
    """The first of ``args`` (a program's arguments) that makes it run a command, if any.

    Read as `spec` spells them: short options in clusters (``-xI cmd``,
    ``-vo ProxyCommand=x``), long ones by any prefix getopt_long takes (``--to-comm=``), with
    their value attached or next.
    """
    for index, arg in enumerate(args):
        if arg == "--":
            break
        following = args[index + 1] if index + 1 < len(args) else ""
        for word in spec.words:
            if arg == word or (word.startswith("-") and arg.startswith(word)):
                return word
        if spec.plus is not None and arg.startswith("+") and spec.plus.search(arg[1:]):
            return arg[:12]
        if "=" in arg and arg.split("=", 1)[0] in spec.assigns:
            return arg.split("=", 1)[0] + "="
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            full = _long_option(name, spec)
            if full is not None and _counts(spec, full, value if equals else following):
                return full
            continue
        if arg.startswith("-"):
            letters = arg[1:]
        elif index == 0 and spec.bundled and arg.isalpha():
            letters = arg  # ``tar xIf prog a.tar``: the values follow, in order
        else:
            continue
        for position, letter in enumerate(letters):
            if letter in spec.short:
                value = letters[position + 1 :] or following
                if _counts(spec, f"-{letter}", value):
                    return f"-{letter}"
                break
            if letter in spec.valued:
                break
    return None


def _long_option(name: str, spec: _Runs) -> str | None:
    """The long option of `spec` that ``name`` spells, whole or by a prefix (``--to-comm``).

    An ambiguous prefix makes getopt_long refuse to run, so any prefix of one is read as it,
    unless it is an option of its own (tar's ``--checkpoint``).
    """
    if name in spec.long:
        return name
    if name in spec.exact or len(name) < 3:
        return None
    return min((option for option in spec.long if option.startswith(name)), default=None)


def _counts(spec: _Runs, option: str, value: str) -> bool:
    """Whether ``option`` with ``value`` runs something (some do only with certain values)."""
    for name, pattern in spec.only:
        if name == option:
            return pattern.search(value) is not None
    return True


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
    if sub in _GIT_ALWAYS:
        builder.concern(f"'git {sub}' runs commands")
        return
    runs = _GIT_RUNS.get(sub)
    running = _running_option(runs, rest[1:]) if runs is not None else None
    if running is not None:
        builder.concern(f"'git {sub} {running}' runs a command")
        return
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


_FIND_WRITES: Final = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


def _find(argv: tuple[str, ...], builder: _Builder) -> None:
    """``find -delete`` is marked; each ``-exec``/``-execdir``/``-ok``/``-okdir`` is read."""
    index = 1
    count = len(argv)
    while index < count:
        arg = argv[index]
        if arg == "-delete":
            builder.find_deletes = True
        elif arg in _FIND_WRITES:  # writes a file anywhere: only a rule naming it allows it
            builder.explicit_at = min(index + 1, count - 1)
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
