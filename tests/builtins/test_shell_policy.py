"""execute_shell_command's policy reads the command the way the kernel runs it.

Every row of the tables goes through the permission engine (`decide`) with the tool's own
check, in the default mode and in ``BYPASS``: a plain ask becomes an allow in ``BYPASS``, a
safety ask and a denial do not. The issue's spellings also go through a `Toolkit` in ``BYPASS``
and must not run.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
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
from ferrotool._permissions.engine import decide
from ferrotool.builtins.shell import SHELL_TOOL, ShellCommandTool

ALLOW, ASK, SAFETY, DENY = "allow", "ask", "safety", "deny"


async def _verdict(tool: ShellCommandTool, command: str, state: PermissionContextState) -> str:
    decision = await decide(
        tool, {"command": command}, PermissionContext(state=state), own_check=True
    )
    if decision.behavior is PermissionBehavior.ALLOW:
        return ALLOW
    if decision.behavior is PermissionBehavior.DENY:
        return DENY
    assert decision.behavior is PermissionBehavior.ASK
    assert decision.message  # a model (or a person) can act on it
    return SAFETY if "safety" in (decision.reason or "").lower() else ASK


def _rules(allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> list[PermissionRule]:
    return [
        *(
            PermissionRule(
                tool_name=SHELL_TOOL, behavior=PermissionBehavior.ALLOW, rule_content=rule
            )
            for rule in allow
        ),
        *(
            PermissionRule(
                tool_name=SHELL_TOOL, behavior=PermissionBehavior.DENY, rule_content=rule
            )
            for rule in deny
        ),
    ]


DEFAULT = PermissionContextState(mode=PermissionMode.DEFAULT)
BYPASS = PermissionContextState(mode=PermissionMode.BYPASS)

# The spellings named in the issue (each ran without asking in BYPASS before).
ISSUE: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("env rm -rf x", (), (), SAFETY),
    ("nice rm -rf x", (), (), SAFETY),
    ("timeout 5 rm -rf x", (), (), SAFETY),
    ("xargs rm -rf", (), (), SAFETY),
    ("busybox rm -rf x", (), (), SAFETY),
    ("sh -c 'rm -rf x'", (), (), SAFETY),
    ("bash -c 'echo hi'", (), (), SAFETY),
    ("chmod 0777 f", (), (), SAFETY),
    ("chmod a+rwx f", (), (), SAFETY),
    ("mkfs.ext4 /dev/sdb1", (), (), SAFETY),
    ("sudo /bin/rm x", (), (), SAFETY),
    ("git -C . push", ("git *",), ("git push",), DENY),
    ("git --no-pager push", ("git *",), ("git push",), DENY),
    ("git -c alias.p=push p", ("git *",), ("git push",), SAFETY),
]

WRAPPERS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("env -i FOO=1 rm -rf x", (), (), SAFETY),
    ("env -u HOME rm -rf x", (), (), SAFETY),
    ("env -uHOME -i -- rm -rf x", (), (), SAFETY),
    ("env -C /tmp rm -rf x", (), (), SAFETY),
    ("env --chdir=/tmp --unset=A rm -rf x", (), (), SAFETY),
    ("env -S 'rm -rf x'", (), (), SAFETY),
    ("env -S'rm -rf' x", (), (), SAFETY),
    ("env --split-string='nice rm -rf x'", (), (), SAFETY),
    ('env -S "\'rm -rf x"', (), (), SAFETY),
    ("/usr/bin/env rm -rf x", (), (), SAFETY),
    ("nice -n 5 rm -rf x", (), (), SAFETY),
    ("nice -n5 rm -rf x", (), (), SAFETY),
    ("nice -5 rm -rf x", (), (), SAFETY),
    ("nice --adjustment=5 rm -rf x", (), (), SAFETY),
    ("ionice -c 3 rm -rf x", (), (), SAFETY),
    ("ionice -c2 -n7 rm -rf x", (), (), SAFETY),
    ("ionice -t -c 3 rm -rf x", (), (), SAFETY),
    ("timeout -s KILL 5 rm -rf x", (), (), SAFETY),
    ("timeout -k 1 5s rm -rf x", (), (), SAFETY),
    ("timeout --signal=TERM --preserve-status 5 rm -rf x", (), (), SAFETY),
    ("nohup rm -rf x", (), (), SAFETY),
    ("stdbuf -o0 rm -rf x", (), (), SAFETY),
    ("stdbuf -i L -e 0 rm -rf x", (), (), SAFETY),
    ("setsid rm -rf x", (), (), SAFETY),
    ("setsid -f -w rm -rf x", (), (), SAFETY),
    ("time rm -rf x", (), (), SAFETY),
    ("time -p rm -rf x", (), (), SAFETY),
    ("time -f %e -o out rm -rf x", (), (), SAFETY),
    ("command rm -rf x", (), (), SAFETY),
    ("command -p rm -rf x", (), (), SAFETY),
    ("command -v rm", (), (), ASK),
    ("exec -a name rm -rf x", (), (), SAFETY),
    ("exec -c -l rm -rf x", (), (), SAFETY),
    ("sudo ls", ("ls",), (), SAFETY),
    ("sudo -u bob -E -n -H -- ls", ("ls",), (), SAFETY),
    ("doas -u root ls", ("ls",), (), SAFETY),
    ("doas rm x", (), (), SAFETY),
    ("xargs -0 -n1 rm -rf", (), (), SAFETY),
    ("xargs -I{} rm -rf {}", (), (), SAFETY),
    ("xargs rm", (), (), SAFETY),
    ("xargs -a list.txt chmod", (), (), SAFETY),
    ("xargs ls", ("ls",), (), ALLOW),
    ("xargs curl", ("xargs *",), (), ASK),
    ("toybox rm -rf x", (), (), SAFETY),
    ("/bin/busybox rm -rf x", (), (), SAFETY),
    ("busybox sh -c 'ls'", (), (), SAFETY),
    ("chroot / rm -rf x", (), (), SAFETY),
    ("flock /tmp/lock rm -rf x", (), (), SAFETY),
    ("flock -w 3 /tmp/lock -c 'ls'", (), (), SAFETY),
    ("unshare -r rm -rf x", (), (), SAFETY),
    ("nsenter -t 1 -m rm -rf x", (), (), SAFETY),
    ("strace -f -o log rm -rf x", (), (), SAFETY),
    ("ltrace rm -rf x", (), (), SAFETY),
    ("watch ls", (), (), SAFETY),
    ("watch -x -n 1 rm -rf x", (), (), SAFETY),
    ("nice timeout 5 env FOO=1 nohup setsid stdbuf -o0 rm -rf x", (), (), SAFETY),
    ("/bin/rm -rf x", (), (), SAFETY),
    ("\\rm -rf x", (), (), SAFETY),
    ("r\\m -rf x", (), (), SAFETY),
    ("'rm' -rf x", (), (), SAFETY),
    ('"/usr/bin/rm" -fr x', (), (), SAFETY),
    (" ".join(["nice"] * 20 + ["ls"]), ("ls",), (), SAFETY),
    (" ".join(["env"] * 20 + ["ls"]), ("ls",), (), SAFETY),
]

INTERPRETERS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("zsh -c 'ls'", (), (), SAFETY),
    ("dash -c 'ls'", (), (), SAFETY),
    ("ksh -c 'ls'", (), (), SAFETY),
    ("fish -c 'ls'", (), (), SAFETY),
    ("bash -lc 'ls'", ("bash *",), (), SAFETY),
    ("bash --norc -c 'ls'", ("bash *",), (), SAFETY),
    ("/bin/sh -c ls", ("sh *",), (), SAFETY),
    ("python -c 'import os'", ("python *",), (), SAFETY),
    ("python3 -c 'import os'", (), (), SAFETY),
    ("python3.12 -Ic 'import os'", (), (), SAFETY),
    ("perl -e 'print 1'", (), (), SAFETY),
    ("perl -E 'say 1'", (), (), SAFETY),
    ("perl -ne 'print' f", (), (), SAFETY),
    ("ruby -e 'p 1'", (), (), SAFETY),
    ("node -e '1'", (), (), SAFETY),
    ("node --eval '1'", (), (), SAFETY),
    ("node -p '1'", (), (), SAFETY),
    ("php -r 'echo 1;'", (), (), SAFETY),
    ("lua -e 'print(1)'", (), (), SAFETY),
    ("osascript -e 'beep'", (), (), SAFETY),
    ("pwsh -c 'ls'", (), (), SAFETY),
    ("pwsh -Command 'ls'", (), (), SAFETY),
    ("awk 'BEGIN { system(\"rm x\") }'", ("awk *",), (), SAFETY),
    ("awk '{ print | \"sh\" }' f", ("awk *",), (), SAFETY),
    ("awk '{ print $1 }' f", ("awk *",), (), ALLOW),
    ("env python -c 'x'", ("python *",), (), SAFETY),
    ("xargs sh -c 'rm x'", (), (), SAFETY),
    ("bash script.sh", (), (), ASK),
    ("bash script.sh", ("*",), (), ASK),
    ("bash script.sh", ("bash",), (), ALLOW),
    ("python tool.py --flag", ("python *",), (), ALLOW),
    ("python -m http.server", ("*",), (), ASK),
]

GIT: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    (command, ("git *",), ("git push",), expected)
    for command, expected in [
        ("git push", DENY),
        ("git status", ALLOW),
        ("git -C . status", ALLOW),
        ("git -C sub push origin main", DENY),
        ("git --git-dir=.git log", ALLOW),
        ("git --git-dir .git push", DENY),
        ("git --work-tree=. push", DENY),
        ("git --work-tree . push", DENY),
        ("git -p push", DENY),
        ("git --paginate push", DENY),
        ("git --bare push", DENY),
        ("git --namespace=x push", DENY),
        ("git --namespace x push", DENY),
        ("git --literal-pathspecs --no-optional-locks push", DENY),
        ("git -c core.pager=x push", DENY),
        ("git -c user.name=x commit -m m", ALLOW),
        ("git -c core.pager=less log", SAFETY),
        ("git -c core.sshCommand=evil fetch", SAFETY),
        ("git -c core.fsmonitor=evil status", SAFETY),
        ("git -c core.hooksPath=/tmp/h commit", SAFETY),
        ("git -c core.editor=evil commit", SAFETY),
        ("git -c include.path=/tmp/c status", SAFETY),
        ("git -c filter.x.clean=evil add f", SAFETY),
        ("git -c protocol.ext.allow=always fetch", SAFETY),
        ("git -c Alias.St=status st", SAFETY),
        ("git --config-env=core.pager=PAGER log", SAFETY),
        ("git --exec-path=/tmp status", SAFETY),
        ("git --exec-path /tmp status", SAFETY),
        ("git rebase -x 'rm x' main", SAFETY),
        ("git rebase --exec='rm x' main", SAFETY),
        ("git fetch --upload-pack=evil origin", SAFETY),
        ("git config core.pager evil", SAFETY),
        ("git config user.name me", ALLOW),
        ("env git push", DENY),
        ("/usr/bin/git push", DENY),
        ("nice -n 1 git --no-pager -C . push", DENY),
    ]
]

DANGEROUS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("rm -rf x", ("rm *",), (), SAFETY),
    ("rm -fr x", (), (), SAFETY),
    ("rm -r -f x", (), (), SAFETY),
    ("rm --recursive --force x", (), (), SAFETY),
    ("rm -Rf x", (), (), SAFETY),
    ("rm -r /", (), (), SAFETY),
    ("rm -r ~", (), (), SAFETY),
    ("rm -r '*'", (), (), SAFETY),
    ("rm -r .", (), (), SAFETY),
    ("rm -r /usr", (), (), SAFETY),
    ("rm --no-preserve-root x", (), (), SAFETY),
    ("rm -r build", ("rm *",), (), ALLOW),
    ("rm x", ("rm *",), (), ALLOW),
    ("unlink x", (), (), ASK),
    ("rmdir x", (), (), ASK),
    ("chmod 777 f", (), (), SAFETY),
    ("chmod 1777 d", (), (), SAFETY),
    ("chmod -R 777 d", (), (), SAFETY),
    ("chmod o+w f", (), (), SAFETY),
    ("chmod ugo+rwx f", (), (), SAFETY),
    ("chmod 666 /etc/passwd", (), (), SAFETY),
    ("chmod u=rwx,go=rwx f", (), (), SAFETY),
    ("chmod =rwx f", (), (), SAFETY),
    ("chmod +w f", (), (), SAFETY),
    ("chmod u+s f", (), (), SAFETY),
    ("chmod 4755 f", (), (), SAFETY),
    ("chmod g+s d", (), (), SAFETY),
    ("chmod 2755 d", (), (), SAFETY),
    ("chmod --reference=other f", (), (), SAFETY),
    ("chmod 644 f", ("chmod *",), (), ALLOW),
    ("chmod 755 f", ("chmod *",), (), ALLOW),
    ("chmod u+x f", ("chmod *",), (), ALLOW),
    ("chmod +x f", ("chmod *",), (), ALLOW),
    ("chmod go-w f", ("chmod *",), (), ALLOW),
    ("chmod o+r f", ("chmod *",), (), ALLOW),
    ("dd if=/dev/zero of=x", (), (), SAFETY),
    ("mkfs /dev/sdb", (), (), SAFETY),
    ("mkfs.xfs img", (), (), SAFETY),
    ("mke2fs img", (), (), SAFETY),
    ("mkswap img", (), (), SAFETY),
    ("fdisk -l", (), (), SAFETY),
    ("sfdisk img", (), (), SAFETY),
    ("parted img", (), (), SAFETY),
    ("wipefs -a img", (), (), SAFETY),
    ("shred f", (), (), SAFETY),
    ("truncate -s 0 f", (), (), SAFETY),
    ("find . -delete", ("find *",), (), SAFETY),
    ("find . -name '*.o' -exec rm {} +", ("find *",), (), SAFETY),
    ("find . -execdir rm {} +", ("find *",), (), SAFETY),
    ("find . -ok rm {} +", ("find *",), (), SAFETY),
    ("find . -exec sh -c 'x' +", ("find *",), (), SAFETY),
    ("find . -exec chmod 777 {} +", ("find *",), (), SAFETY),
    ("find . -exec grep x {} +", ("find *",), (), ASK),
    ("find . -exec grep x {} +", ("find *", "grep *"), (), ALLOW),
    ("find . -name x", ("find *",), (), ALLOW),
    ("chown -R a d", (), (), SAFETY),
    ("chown a f", ("chown *",), (), ALLOW),
    ("kill -9 1", (), (), SAFETY),
    ("kill -KILL 1", (), (), SAFETY),
    ("kill -s KILL 1", (), (), SAFETY),
    ("kill -SIGKILL 1", (), (), SAFETY),
    ("kill --signal=kill 1", (), (), SAFETY),
    ("kill -n 9 1", (), (), SAFETY),
    ("kill 1", ("kill *",), (), ALLOW),
    ("kill -TERM 1", ("kill *",), (), ALLOW),
    ("pkill x", (), (), SAFETY),
    ("pkill -9 x", (), (), SAFETY),
    ("killall x", (), (), SAFETY),
    ("killall -KILL x", (), (), SAFETY),
    ("dd of=/dev/sda", (), (), SAFETY),
    ("tee /dev/sda", (), (), SAFETY),
    ("cp x /dev/nvme0n1", (), (), SAFETY),
    ("cp x /dev/mmcblk0p1", ("cp *",), (), SAFETY),
    ("cp x //dev/../dev/vda", ("cp *",), (), SAFETY),
    ("cp x /dev/mapper/root", ("cp *",), (), SAFETY),
    ("cp x /dev/disk/by-id/y", ("cp *",), (), SAFETY),
    ("cat /dev/mem", ("cat *",), (), SAFETY),
    ("cp --target-directory=/dev/xvda x", ("cp *",), (), SAFETY),
    ("ls -l /dev/sda", ("ls *",), (), ALLOW),
    ("cp x /dev/null", ("cp *",), (), ALLOW),
    ("reboot", (), (), SAFETY),
    ("shutdown -h now", (), (), SAFETY),
    ("halt", (), (), SAFETY),
    ("poweroff", (), (), SAFETY),
    ("init 0", (), (), SAFETY),
    ("init 6", (), (), SAFETY),
    ("systemctl poweroff", ("systemctl *",), (), SAFETY),
    ("systemctl reboot", ("systemctl *",), (), SAFETY),
    ("systemctl halt", ("systemctl *",), (), SAFETY),
    ("systemctl status x", ("systemctl *",), (), ALLOW),
    ("crontab -r", ("crontab *",), (), SAFETY),
    ("crontab -l", ("crontab *",), (), ALLOW),
    ("iptables -F", (), (), SAFETY),
    ("iptables --flush", (), (), SAFETY),
    ("iptables -L", ("iptables *",), (), ALLOW),
    ("env LD_PRELOAD=/tmp/x.so ls", ("ls",), (), SAFETY),
    ("env PATH=. ls", ("ls",), (), SAFETY),
    ("env GIT_SSH_COMMAND=evil git fetch", ("git *",), (), SAFETY),
    ("env FOO=1 ls", ("ls",), (), ALLOW),
]

LISTS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("env rm -rf /", ("env *",), (), SAFETY),
    ("env curl x", ("env *",), (), ASK),
    ("env FOO=1 curl x", ("env *",), (), ASK),
    ("env", ("env *",), (), ALLOW),
    ("env FOO=1 make all", ("env FOO=1 make",), (), ALLOW),
    ("env FOO=1 make all", ("make *",), (), ALLOW),
    ("env FOO=1 rm x", ("env FOO=1 make",), (), ASK),
    ("nice make", ("make",), (), ALLOW),
    ("timeout 5 curl x", ("timeout 5 *",), (), ASK),
    ("timeout 5 make", ("timeout 5 make",), (), ALLOW),
    ("env -S 'curl x'", ("env *",), (), ASK),
    ("env rm x", (), ("rm",), DENY),
    ("busybox rm x", ("*",), ("rm *",), DENY),
    ("unlink x", ("*",), ("rm",), DENY),
    ("rmdir x", ("*",), ("rm",), DENY),
    ("env -S 'curl x'", ("*",), ("curl",), DENY),
    ("find . -exec rm {} +", (), ("rm",), DENY),
    ("xargs curl", ("*",), ("curl",), DENY),
    ("env FOO=1 make", ("*",), ("env FOO=1 make",), DENY),
    ("env curl x", ("*",), ("env",), DENY),
    ("ls -la", ("ls",), ("curl",), ALLOW),
    ("curl x", ("ls",), (), ASK),
    ("", (), (), ALLOW),
    ("rm 'x", (), (), ALLOW),
]

# Spellings that getopt, perl, git, sed and env accept besides the plain ones.
SPELLINGS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("rm --rec --force x", ("rm *",), (), SAFETY),
    ("rm --force --r x", ("rm *",), (), SAFETY),
    ("rm -r --no-pres x", ("rm *",), (), SAFETY),
    ("timeout --sig KILL 5 rm -rf x", (), (), SAFETY),
    ("timeout --sig KILL 5 curl x", ("curl *",), (), ALLOW),
    ("timeout --sig KILL 5 curl x", ("timeout *",), (), ASK),
    ("env --split 'rm -rf x'", (), (), SAFETY),
    ("env -S '# note' rm -rf x", (), (), SAFETY),
    ("env -S 'a' -S 'b'", (), (), SAFETY),
    ("env -S 'r\\m -rf x'", (), (), SAFETY),
    ("kill -sKILL 1", ("kill *",), (), SAFETY),
    ("kill -n9 1", ("kill *",), (), SAFETY),
    ("kill --sig=KILL 1", ("kill *",), (), SAFETY),
    ("kill --signal sigkill 1", ("kill *",), (), SAFETY),
    ("kill -s TERM 1", ("kill *",), (), ALLOW),
    ("perl -lane 'print' f", ("perl *",), (), SAFETY),
    ("perl -l -0777 -ne 'print' f", ("perl *",), (), SAFETY),
    ("perl -pi.bak -e 's/a/b/' f", ("perl *",), (), SAFETY),
    ("perl -Ilib -e 1", ("perl *",), (), SAFETY),
    ("perl -I lib script.pl", ("perl *",), (), ALLOW),
    ("git -ccore.pager=x log", ("git *",), (), SAFETY),
    ("git rebase --exe=x main", ("git *",), (), SAFETY),
    ("git fetch --upload=x origin", ("git *",), (), SAFETY),
    ("git -c help.autocorrect=1 psuh", ("git *",), (), SAFETY),
    ("git submodule foreach ls", ("git *",), (), SAFETY),
    ("git config --global alias.x '!rm -rf ~'", ("git *",), (), SAFETY),
    ("sed -e '1e rm x' f", ("sed *",), (), SAFETY),
    ("sed 's/x/y/e' f", ("sed *",), (), SAFETY),
    ("sed '/x/e' f", ("sed *",), (), SAFETY),
    ("sed -n 's/e/f/gp' f", ("sed *",), (), ALLOW),
    ("chmod --ref=other f", ("chmod *",), (), SAFETY),
    ("tar --to-command='rm x' -xf a.tar", ("tar *",), (), SAFETY),
    ("tar -xf a.tar --checkpoint-action=exec='rm x'", ("tar *",), (), SAFETY),
    ("tar -xf a.tar", ("tar *",), (), ALLOW),
    ("rsync -e 'sh -c x' a b", ("rsync *",), (), SAFETY),
    ("ssh -oProxyCommand=x host", ("ssh *",), (), SAFETY),
    ("sqlite3 db '.shell rm x'", ("sqlite3 *",), (), SAFETY),
    ("sqlite3 db 'select 1'", ("sqlite3 *",), (), ALLOW),
    ("vim -c '!rm x' f", ("vim *",), (), SAFETY),
    ("gdb -batch -ex 'shell rm x'", ("gdb *",), (), SAFETY),
    ("flock f -c ls", ("flock *", "ls"), (), SAFETY),
    ("watch -x ls", ("ls",), (), ALLOW),
    ("sg wheel ls", ("ls",), (), SAFETY),
    ("su -c ls", ("ls",), (), SAFETY),
    ("pkexec ls", ("ls",), (), SAFETY),
    ("xargs --null rm", (), (), SAFETY),
    ("find . -execdir unlink {} +", ("find *",), (), SAFETY),
    ("find . -exec env rm {} +", ("find *",), (), SAFETY),
    ("tee -a /dev/sda1", ("tee *",), (), SAFETY),
    ("ip6tables -F", (), (), SAFETY),
    ("telinit 0", (), (), SAFETY),
    ("env BASH_FUNC_ls%%='() { x; }' ls", ("ls",), (), SAFETY),
    ("python3 -X dev -c 'pass'", ("python3 *",), (), SAFETY),
    ("python3 -W ignore script.py", ("python3 *",), (), ALLOW),
    ("node -r mod --eval 1", ("node *",), (), SAFETY),
    ("pwsh -NoProfile -Comm x", ("pwsh *",), (), SAFETY),
    ("pwsh -File x.ps1", ("pwsh *",), (), ALLOW),
    ("deno eval 1", ("deno *",), (), SAFETY),
    ("python3 -c 'pass'", ("python3 -c",), (), ALLOW),
    ("python3 -Ic 'pass'", ("python3 -c",), (), SAFETY),
    ("env LD_PRELOAD=x python3 -c 'pass'", ("python3 -c",), (), SAFETY),
]

# git: options and -c keys that run a program, env that does, git-<sub>, push aliases.
GIT_BYPASSES: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("git grep -Ovim x", ("git *",), (), SAFETY),
    ("git grep -O'rm -rf x' foo", ("git *",), (), SAFETY),
    ("git grep --open-files-in-pager=evil x", ("git *",), (), SAFETY),
    ("git grep --open-files-in-pager x", ("git *",), (), SAFETY),
    ("git grep --open=evil x", ("git *",), (), SAFETY),
    ("git grep -iO evil x", ("git *",), (), SAFETY),
    ("git grep -inOevil x", ("git *",), (), SAFETY),
    ("git -C . grep -O evil x", ("git *",), (), SAFETY),
    ("git grep -eO x", ("git *",), (), ALLOW),
    ("git grep -in x", ("git *",), (), ALLOW),
    ("git rebase -ix 'rm x' main", ("git *",), (), SAFETY),
    ("git -c diff.external=evil diff", ("git *",), (), SAFETY),
    ("git -c diff.x.TextConv=evil diff", ("git *",), (), SAFETY),
    ("git -c CORE.PAGER=evil log", ("git *",), (), SAFETY),
    ("git -c core.SSHCommand=evil fetch", ("git *",), (), SAFETY),
    ("git -c gpg.format=ssh commit", ("git *",), (), SAFETY),
    ("git -c gpg.ssh.program=evil commit", ("git *",), (), SAFETY),
    ("git -c credential.username=me fetch", ("git *",), (), SAFETY),
    ("git -c sendemail.smtpServer=evil send-email", ("git *",), (), SAFETY),
    ("git -c sendemail.x=y status", ("git *",), (), SAFETY),
    ("git -c include.path=/tmp/c status", ("git *",), (), SAFETY),
    ("git -c include.foo=/tmp/c status", ("git *",), (), SAFETY),
    ("git -c includeIf.gitdir:/x.path=/tmp/c status", ("git *",), (), SAFETY),
    ("git -c hook.lint.event=pre-commit commit", ("git *",), (), SAFETY),
    ("git -c core.alternateRefsCommand=evil fetch", ("git *",), (), SAFETY),
    ("git -c foo.barcmd=evil status", ("git *",), (), SAFETY),
    ("git -c foo.barCommand=evil status", ("git *",), (), SAFETY),
    ("git -c foo.postHook=evil status", ("git *",), (), SAFETY),
    ("git -c foo.viewer.program=evil status", ("git *",), (), SAFETY),
    ("git -c foo.pager=evil status", ("git *",), (), SAFETY),
    ("git -c foo.Editor=evil status", ("git *",), (), SAFETY),
    ("git -c foo.helper=evil status", ("git *",), (), SAFETY),
    ("git -c merge.guitool=evil status", ("git *",), (), SAFETY),
    ("git -c alias.st=status st", ("git *",), (), SAFETY),
    ("git -c user.email=a@b commit -m m", ("git *",), (), ALLOW),
    ("git --config-env core.pager=P log", ("git *",), (), SAFETY),
    ("git --config-env=alias.x=P x", ("git *",), (), SAFETY),
    ("env GIT_CONFIG_PARAMETERS=\"'core.pager'='evil'\" git log", ("git *",), (), SAFETY),
    (
        "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=evil git log",
        ("git *",),
        (),
        SAFETY,
    ),
    ("env GIT_PAGER=evil git log", ("git *",), (), SAFETY),
    ("env GIT_EDITOR=evil git commit", ("git *",), (), SAFETY),
    ("env GIT_EXTERNAL_DIFF=evil git diff", ("git *",), (), SAFETY),
    ("GIT_PAGER=evil git log", ("git *",), (), SAFETY),
    ("GIT_SSH_COMMAND=evil git fetch", ("*",), (), SAFETY),
    ("GIT_CONFIG_PARAMETERS=x git status", ("*",), (), SAFETY),
    ("FOO=1 git push", ("*",), ("git push",), DENY),
    ("sudo GIT_PAGER=evil git log", ("git *",), (), SAFETY),
    ("git-push origin main", ("git *",), ("git push",), DENY),
    ("/usr/lib/git-core/git-push origin", ("*",), ("git push",), DENY),
    ("env git-push", ("*",), ("git push",), DENY),
    ("git-grep -Oevil x", ("*",), (), SAFETY),
    ("git-status", ("git *",), (), ALLOW),
    ("git send-pack origin main", ("git *",), ("git push",), DENY),
    ("git http-push https://x main", ("git *",), ("git push",), DENY),
    ("git-send-pack origin main", ("git *",), ("git push",), DENY),
    ("git -C . send-pack origin", ("git *",), ("git push",), DENY),
    ("env -S 'GIT_PAGER=evil git log'", ("git *",), (), SAFETY),
    ("git --config-env=core.sshCommand=X fetch", ("git *",), (), SAFETY),
    ("nice git-push origin", ("*",), ("git push",), DENY),
    ("git send-pack origin", ("git *",), ("git send-pack",), DENY),
    ("git push origin", ("git *",), ("git send-pack",), ALLOW),
    ("git send-pack origin", ("git push *",), (), ALLOW),
]

# python -m runs a module: only a pattern naming it allows it; versioned interpreter names.
MODULES: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("python3 -m http.server", ("python3 *",), (), ASK),
    ("python3 -m pip install x", ("python3 *",), (), ASK),
    ("python -mhttp.server", ("python *",), (), ASK),
    ("python3 -Im http.server", ("python3 *",), (), ASK),
    ("python3 -W ignore -m pip list", ("python3 *",), (), ASK),
    ("python3.11 -m pip list", ("python3.11 *",), (), ASK),
    ("pypy3 -m pip list", ("pypy3 *",), (), ASK),
    ("env python3 -m pip list", ("env *", "python3 *"), (), ASK),
    ("python3 -m pytest -q", ("python3 -m pytest *",), (), ALLOW),
    ("python3 -m pytest", ("python3 -m pytest",), (), ALLOW),
    ("python3 -m pip list", ("python3 -m pytest *",), (), ASK),
    ("python3 -m pip list", ("python3 -m *",), (), ASK),
    ("nice python3 -m pytest -q", ("python3 -m pytest *",), (), ALLOW),
    ("python3 tool.py -m x", ("python3 *",), (), ALLOW),
    ("ruby3.1 -e 'p 1'", ("ruby3.1 *",), (), SAFETY),
    ("node18 -e 1", ("node18 *",), (), SAFETY),
    ("node18 app.js", ("*",), (), ASK),
    ("php8.2 -r 'echo 1;'", ("php8.2 *",), (), SAFETY),
    ("lua5.4 -e 'x()'", ("lua5.4 *",), (), SAFETY),
    ("tclsh8.6 x.tcl", ("*",), (), ASK),
    ("perl5.36 -e 1", ("perl5.36 *",), (), SAFETY),
    ("deno run x.ts", ("*",), (), ASK),
    ("bun -e 1", ("bun *",), (), SAFETY),
    ("luajit-2.1 -e x", ("*",), (), SAFETY),
    ("guile -c '(system \"x\")'", ("guile *",), (), SAFETY),
    ("racket -e '(system \"x\")'", ("racket *",), (), SAFETY),
    ("elixir -e 'System.cmd(\"x\", [])'", ("elixir *",), (), SAFETY),
    ("sbcl --eval '(run)'", ("sbcl *",), (), SAFETY),
    ("gnuplot -e 'system(\"x\")'", ("gnuplot *",), (), SAFETY),
    ("python3 -m pytest -q", ("python3 *",), (), ASK),
    ("python3 -mpytest -q", ("python3 -mpytest *",), (), ALLOW),
]

# xargs giving unread arguments to a shell, interpreter, wrapper or git/find asks for safety.
XARGS_FEEDS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("xargs python3", ("python3 *", "xargs *"), (), SAFETY),
    ("xargs -a cmds bash", ("bash *",), (), SAFETY),
    ("xargs -I{} bash -c {}", ("*",), (), SAFETY),
    ("xargs -0 sh", ("*",), (), SAFETY),
    ("xargs env", ("*",), (), SAFETY),
    ("xargs find", ("find *",), (), SAFETY),
    ("xargs git", ("git *",), (), SAFETY),
    ("xargs -n1 perl", ("perl *",), (), SAFETY),
    ("xargs grep x", ("grep *",), (), ALLOW),
    ("xargs -I{} git grep -O{} x", ("git *",), (), SAFETY),
]

# find -fprint/-fprint0/-fprintf/-fls write a file: only a rule naming it allows it.
FIND_WRITES: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("find . -fprint /tmp/x", ("find *",), (), ASK),
    ("find . -fprint0 out", ("find *",), (), ASK),
    ("find . -name x -fprintf out '%p'", ("find *",), (), ASK),
    ("find / -fls out", ("find *",), (), ASK),
    ("find . -fprint out", ("find . -fprint out",), (), ALLOW),
    ("find . -exec python3 -c x +", ("find *",), (), SAFETY),
    ("find . -okdir rm -rf {} +", ("*",), (), SAFETY),
    ("find . -print", ("find *",), (), ALLOW),
    # `;` ends -exec when quoted or escaped (an unquoted one is refused before any policy)
    ("find . -exec rm -rf {} \\;", ("find *",), (), SAFETY),
    ("find . -exec grep x {} ';' -exec rm -f {} ';'", ("find *", "grep *"), (), SAFETY),
    ("find . -exec sh -c 'rm x' \\;", ("find *",), (), SAFETY),
    ("find . -exec grep x {} \\;", ("find *",), (), ASK),
    ("find . -exec grep x {} \\;", ("find *", "grep *"), (), ALLOW),
]

# More wrappers that run their argument (unwrapped, or asking when their syntax hides it).
MORE_WRAPPERS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("setarch x86_64 rm -rf x", ("*",), (), SAFETY),
    ("setarch x86_64 -R ls", ("ls",), (), ALLOW),
    ("linux32 rm -rf x", ("*",), (), SAFETY),
    ("linux64 --addr-no-randomize rm -rf x", ("*",), (), SAFETY),
    ("prlimit --nofile=1024 rm -rf x", ("*",), (), SAFETY),
    ("prlimit -n 1024 rm -rf x", ("*",), (), SAFETY),
    ("prlimit --pid 1 --nofile=1", ("prlimit *",), (), ALLOW),
    ("ssh-agent rm -rf x", ("*",), (), SAFETY),
    ("ssh-agent -a sock bash -c x", ("*",), (), SAFETY),
    ("dbus-run-session -- rm -rf x", ("*",), (), SAFETY),
    ("dbus-run-session --config-file=f rm -rf x", ("*",), (), SAFETY),
    ("chrt -f 1 rm -rf x", ("*",), (), SAFETY),
    ("taskset -c 0 rm -rf x", ("*",), (), SAFETY),
    ("taskset 1 ls", ("ls",), (), ALLOW),
    ("numactl --cpunodebind=0 rm -rf x", ("*",), (), SAFETY),
    ("numactl -N 0 -m 0 rm -rf x", ("*",), (), SAFETY),
    ("unshare -rm rm -rf x", ("*",), (), SAFETY),
    ("chroot --userspec=a:b / rm -rf x", ("*",), (), SAFETY),
    ("runuser -u bob -- rm x", ("rm *",), (), SAFETY),
    ("su -c 'ls' bob", ("su *",), (), SAFETY),
    ("su bob -c ls", ("su *",), (), SAFETY),
    ("firejail rm -rf x", ("*",), (), SAFETY),
    ("firejail --noprofile --net=none rm -rf x", ("*",), (), SAFETY),
    ("systemd-run --user rm -rf x", ("*",), (), SAFETY),
    ("systemd-run -p MemoryMax=1G --scope rm -rf x", ("*",), (), SAFETY),
    ("faketime '2020-01-01' rm -rf x", ("*",), (), SAFETY),
    ("faketime -f +1d rm -rf x", ("*",), (), SAFETY),
    ("catchsegv rm -rf x", ("*",), (), SAFETY),
    ("valgrind rm -rf x", ("*",), (), SAFETY),
    ("valgrind --tool=memcheck --log-file=l rm -rf x", ("*",), (), SAFETY),
    ("strace -e trace=open rm -rf x", ("*",), (), SAFETY),
    ("gdb --batch --args rm -rf x", ("*",), (), SAFETY),
    ("gdb -batch -ex run --args ls", ("*",), (), SAFETY),
    ("gdb --args ls -l", ("gdb *", "ls *"), (), ALLOW),
    ("/lib64/ld-linux-x86-64.so.2 /bin/rm -rf x", ("*",), (), SAFETY),
    ("ld.so rm -rf x", ("*",), (), SAFETY),
    ("/lib/ld-linux-aarch64.so.1 --library-path /tmp ls", ("*",), (), SAFETY),
    ("/lib64/ld-linux-x86-64.so.2 --preload /tmp/x.so ls", ("*",), (), SAFETY),
    ("/lib64/ld-linux-x86-64.so.2 /bin/ls", ("ls",), (), ALLOW),
    ("env -S 'bash -c x'", ("*",), (), SAFETY),
    ("stdbuf --output=L rm -rf x", ("*",), (), SAFETY),
    ("script -qc 'rm x' /dev/null", ("*",), (), SAFETY),
    ("script --command='ls'", ("*",), (), SAFETY),
    ("expect -c 'spawn x'", ("expect *",), (), SAFETY),
    ("parallel rm ::: a b", ("*",), (), SAFETY),
    ("parallel -j2 echo ::: a", ("parallel *",), (), SAFETY),
    ("entr rm -rf x", ("*",), (), SAFETY),
    ("entr -s 'make'", ("entr *",), (), SAFETY),
    ("entr -rp make", ("make",), (), ALLOW),
    ("rlwrap rm -rf x", ("*",), (), SAFETY),
    ("rlwrap -z evil cat", ("*",), (), SAFETY),
    ("torsocks rm -rf x", ("*",), (), SAFETY),
    ("proxychains4 -q rm -rf x", ("*",), (), SAFETY),
    ("proxychains -f cfg curl x", ("curl *",), (), ALLOW),
    ("watch -n 1 -x rm -rf x", ("*",), (), SAFETY),
]

# An unknown program naming a dangerous program or an interpreter fails closed.
UNKNOWN_PROGRAMS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("frob rm -rf /", ("frob *",), (), SAFETY),
    ("mywrap bash -c x", ("mywrap *",), (), SAFETY),
    ("mywrap -v python3 -c x", ("mywrap *",), (), SAFETY),
    ("mywrap python3 x.py", ("mywrap *",), (), SAFETY),
    ("mywrap /bin/sh x.sh", ("mywrap *",), (), SAFETY),
    ("frob rm x", ("*",), ("rm",), DENY),
    ("frob --out x", ("frob *",), (), ALLOW),
    ("grep -r python .", ("grep *",), (), ALLOW),
    ("echo rm -rf x", ("echo *",), (), ALLOW),
]

# Options of ordinary programs that run a command: clusters, prefixes, values.
RUNNING_OPTIONS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("tar -xI 'rm x' -f a.tar", ("tar *",), (), SAFETY),
    ("tar -xIevil -f a.tar", ("tar *",), (), SAFETY),
    ("tar xIf evil a.tar", ("tar *",), (), SAFETY),
    ("tar --to-comm='rm x' -xf a.tar", ("tar *",), (), SAFETY),
    ("tar --to-command 'rm x' -xf a.tar", ("tar *",), (), SAFETY),
    ("tar --use-compress=evil -xf a.tar", ("tar *",), (), SAFETY),
    ("tar --checkpoint-action exec=evil -xf a.tar", ("tar *",), (), SAFETY),
    ("tar --checkpoint-act=exec=evil -xf a.tar", ("tar *",), (), SAFETY),
    ("tar --checkpoint=10 -xf a.tar", ("tar *",), (), ALLOW),
    ("tar --info-script=evil -xf a.tar", ("tar *",), (), SAFETY),
    ("tar -cvF evil -f a.tar d", ("tar *",), (), SAFETY),
    ("tar --new-volume=evil -xf a.tar", ("tar *",), (), SAFETY),
    ("tar -czf a.tgz d", ("tar *",), (), ALLOW),
    ("tar -xf a.tar -C out", ("tar *",), (), ALLOW),
    ("sort --compress-program=evil f", ("sort *",), (), SAFETY),
    ("sort --compress-prog evil f", ("sort *",), (), SAFETY),
    ("sort -k1 f", ("sort *",), (), ALLOW),
    ("split --filter='sh -c x' f", ("split *",), (), SAFETY),
    ("split --fil=evil f", ("split *",), (), SAFETY),
    ("man -P evil ls", ("man *",), (), SAFETY),
    ("man -Pevil ls", ("man *",), (), SAFETY),
    ("man --pager=evil ls", ("man *",), (), SAFETY),
    ("man --pag=evil ls", ("man *",), (), SAFETY),
    ("man -aP evil ls", ("man *",), (), SAFETY),
    ("man -Hevil ls", ("man *",), (), SAFETY),
    ("man ls", ("man *",), (), ALLOW),
    ("make --eval='x:;rm -rf /' x", ("make *",), (), SAFETY),
    ("make --ev='x:;y' x", ("make *",), (), SAFETY),
    ("make -E 'x:;y' x", ("make *",), (), SAFETY),
    ("make SHELL=/tmp/evil", ("make *",), (), SAFETY),
    ("make -f /dev/stdin", ("make *",), (), SAFETY),
    ("make -f/dev/fd/3", ("make *",), (), SAFETY),
    ("make --file=/dev/stdin", ("make *",), (), SAFETY),
    ("make -j4 all", ("make *",), (), ALLOW),
    ("env LESSOPEN='|evil %s' less f", ("*",), (), SAFETY),
    ("LESSOPEN='|evil %s' less f", ("*",), (), SAFETY),
    ("less '+!rm x' f", ("less *",), (), SAFETY),
    ("less +G f", ("less *",), (), ALLOW),
    ("zip -T -TT 'rm x' a.zip f", ("zip *",), (), SAFETY),
    ("zip -T --unzip-command='rm x' a.zip f", ("zip *",), (), SAFETY),
    ("zip -TT=evil a.zip f", ("zip *",), (), SAFETY),
    ("zip -r a.zip d", ("zip *",), (), ALLOW),
    ("rsync -e 'sh -c x' a b", ("rsync *",), (), SAFETY),
    ("rsync -ave 'sh -c x' a b", ("rsync *",), (), SAFETY),
    ("rsync -aeevil a b", ("rsync *",), (), SAFETY),
    ("rsync --rsh=evil a b", ("rsync *",), (), SAFETY),
    ("rsync --rsync-path='evil' a b", ("rsync *",), (), SAFETY),
    ("rsync -M--rsh=evil a b", ("rsync *",), (), SAFETY),
    ("rsync -av a b", ("rsync *",), (), ALLOW),
    ("ssh -o ProxyCommand=evil host", ("ssh *",), (), SAFETY),
    ("ssh -o 'ProxyCommand evil' host", ("ssh *",), (), SAFETY),
    ("ssh -vo ProxyCommand=evil host", ("ssh *",), (), SAFETY),
    ("ssh -o LocalCommand=evil -o PermitLocalCommand=yes h", ("ssh *",), (), SAFETY),
    ("ssh -F /tmp/cfg host", ("ssh *",), (), SAFETY),
    ("ssh -v host", ("ssh *",), (), ALLOW),
    ("scp -S evil a h:b", ("scp *",), (), SAFETY),
    ("scp -rS evil a h:b", ("scp *",), (), SAFETY),
    ("sftp -D /tmp/evil h", ("sftp *",), (), SAFETY),
    ("awk 'BEGIN{system(\"x\")}'", ("awk *",), (), SAFETY),
    ("gawk -v a=1 'BEGIN{ \"x\" | getline }'", ("gawk *",), (), SAFETY),
    ("mawk -W interactive 'BEGIN{system(\"x\")}'", ("mawk *",), (), SAFETY),
    ("awk -- 'BEGIN{system(\"x\")}'", ("awk *",), (), SAFETY),
    ("awk -F: '{print $1}' f", ("awk *",), (), ALLOW),
]

# rm -rf spelled any way (--interactive=never is -f).
RM_SPELLINGS: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("rm --interactive=never -r x", ("rm *",), (), SAFETY),
    ("rm -r --interactive=never x", ("rm *",), (), SAFETY),
    ("rm -R --inter=nev x", ("rm *",), (), SAFETY),
    ("rm --recursive --interactive=no x", ("rm *",), (), SAFETY),
    ("rm --recursive --interactive=none x", ("rm *",), (), SAFETY),
    ("rm -R -f x", ("rm *",), (), SAFETY),
    ("rm -fR x", ("rm *",), (), SAFETY),
    ("rm --force --recursive x", ("rm *",), (), SAFETY),
    ("rm -vRf x", ("rm *",), (), SAFETY),
    ("rm -R /", ("*",), (), SAFETY),
    ("rm --interactive=always -r x", ("rm *",), (), ALLOW),
    ("rm --interactive=never x", ("rm *",), (), ALLOW),
]

BYPASSES = (
    GIT_BYPASSES
    + MODULES
    + XARGS_FEEDS
    + FIND_WRITES
    + MORE_WRAPPERS
    + UNKNOWN_PROGRAMS
    + RUNNING_OPTIONS
    + RM_SPELLINGS
)
TABLE = ISSUE + WRAPPERS + INTERPRETERS + GIT + DANGEROUS + LISTS + SPELLINGS + BYPASSES


def _id(row: tuple[str, tuple[str, ...], tuple[str, ...], str]) -> str:
    command, allow, deny, expected = row
    return f"{command[:60]!r} allow={list(allow)} deny={list(deny)} -> {expected}"


def test_the_table_is_large_enough() -> None:
    assert len(TABLE) >= len(ISSUE) + 120
    assert len(BYPASSES) >= 80


@pytest.mark.parametrize("row", TABLE, ids=[_id(row) for row in TABLE])
async def test_policy_table(row: tuple[str, tuple[str, ...], tuple[str, ...], str]) -> None:
    command, allow, deny, expected = row
    tool = ShellCommandTool(allow=allow, deny=deny)
    assert await _verdict(tool, command, DEFAULT) == expected
    assert await _verdict(tool, command, BYPASS) == (ALLOW if expected == ASK else expected)


# Session rules go through `match_rule` (the engine's rule steps), not the tool's lists.
SESSION: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("env rm -f x", (), ("rm *",), DENY),
    ("unlink x", (), ("rm *",), DENY),
    ("rmdir x", (), ("rm *",), DENY),
    ("/bin/rm x", (), ("rm *",), DENY),
    ("busybox rm x", (), ("rm *",), DENY),
    ("nice -n 1 rm x", (), ("rm *",), DENY),
    ("xargs rm", (), ("rm *",), DENY),
    ("find . -exec rm {} +", (), ("rm *",), DENY),
    ("env -S 'rm x'", (), ("rm *",), DENY),
    ("ls", ("ls",), ("rm *",), ALLOW),
    ("env curl x", ("env *",), (), SAFETY),
    ("env FOO=1 make", ("env FOO=1 make",), (), ALLOW),
    ("env FOO=1 make", ("make *",), (), ALLOW),
    ("nice make", ("make",), (), ALLOW),
    ("timeout 5 curl x", ("timeout 5 *",), (), SAFETY),
    ("python -c 'import os'", ("python *",), (), SAFETY),
    ("python tool.py", ("python *",), (), ALLOW),
    ("bash script.sh", ("*",), (), SAFETY),
    ("bash script.sh", ("bash *",), (), ALLOW),
    ("find . -exec curl x +", ("find *",), (), SAFETY),
    ("git -C . push", ("git *",), ("git push",), DENY),
    ("git --no-pager push", ("git *",), ("git push",), DENY),
    ("git -c core.pager=x push", ("git *",), ("git push",), DENY),
    ("git -c alias.p=push p", ("git *",), ("git push",), SAFETY),
    ("git -C . status", ("git *",), ("git push",), ALLOW),
    ("rm -rf x", ("rm *",), (), SAFETY),
    ("python3 -m http.server", ("python3 *",), (), SAFETY),
    ("python3 -m pytest -q", ("python3 -m pytest",), (), ALLOW),
    ("git send-pack origin", ("git *",), ("git push *",), DENY),
    ("git-push origin", ("git *",), ("git push *",), DENY),
    ("find . -fprint out", ("find *",), (), SAFETY),
    ("frob rm x", ("frob *",), ("rm *",), DENY),
]


@pytest.mark.parametrize("row", SESSION, ids=[_id(row) for row in SESSION])
async def test_session_rules_table(row: tuple[str, tuple[str, ...], tuple[str, ...], str]) -> None:
    command, allow, deny, expected = row
    tool = ShellCommandTool()
    state = PermissionContextState(mode=PermissionMode.DEFAULT).with_rules(_rules(allow, deny))
    assert await _verdict(tool, command, state) == expected


def test_match_rule_reads_the_real_program() -> None:
    tool = ShellCommandTool()
    assert tool.match_rule("rm *", {"command": "env rm -f x"})
    assert tool.match_rule("rm *", {"command": "unlink x"})
    assert tool.match_rule("env FOO=1 make", {"command": "env FOO=1 make all"})
    assert tool.match_rule("git push", {"command": "git -C . push"})
    assert not tool.match_rule("rm *", {"command": "ls rm"})
    assert not tool.match_rule("git push", {"command": "git -C push status"})
    assert not tool.match_rule("rm *", {"command": "rm 'x"})


def test_suggestions_name_the_real_program() -> None:
    tool = ShellCommandTool()
    (rule,) = tool.generate_suggestions({"command": "env FOO=1 nice -n 3 make all"})
    assert rule.rule_content == "make all *"
    (rule,) = tool.generate_suggestions({"command": "git -C sub --no-pager log -1"})
    assert rule.rule_content == "git log *"
    assert tool.generate_suggestions({"command": "python -c 'import os'"}) == ()
    assert tool.generate_suggestions({"command": "env bash -c 'ls'"}) == ()
    assert tool.generate_suggestions({"command": "rm 'x"}) == ()


# - through a Toolkit in BYPASS: none of the issue's spellings runs -


async def _bypass_call(
    tool: ShellCommandTool, command: str, rules: list[PermissionRule]
) -> ToolResultBlock:
    toolkit = Toolkit()
    toolkit.register(tool)
    store = InMemorySessionStore()
    context = RuntimeContext(user_id="u", session_id="s")
    view = await toolkit.snapshot().open_view(context, store)
    state = PermissionContextState(mode=PermissionMode.BYPASS).with_rules(rules)
    view = toolkit.snapshot().view(view.state.with_permissions(state))
    return await view.call_tool(ToolUseBlock.of("1", SHELL_TOOL, {"command": command}))


@pytest.mark.parametrize(
    "command",
    [
        "env rm -rf victim",
        "nice rm -rf victim",
        "timeout 5 rm -rf victim",
        "busybox rm -rf victim",
        "sh -c 'rm -rf victim'",
        "bash -c 'rm -rf victim'",
        "chmod 0777 victim",
        "chmod a+rwx victim",
        "sudo /bin/rm -r victim",
        "env -S 'rm -rf victim'",
        "find victim -delete",
        "python3 -c 'import shutil; shutil.rmtree(\"victim\")'",
    ],
)
async def test_issue_spellings_do_not_run_in_bypass(command: str, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "f").write_text("x")
    victim.chmod(0o700)
    tool = ShellCommandTool(cwd=tmp_path)
    rules = [
        PermissionRule(tool_name=SHELL_TOOL, behavior=PermissionBehavior.ALLOW, rule_content="*")
    ]
    result = await _bypass_call(tool, command, rules)
    assert result.needs_approval
    assert (victim / "f").exists()
    assert victim.stat().st_mode & 0o777 == 0o700


async def test_session_deny_rule_stops_wrapped_and_aliased_rm(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    for command in ("env rm -f victim", "unlink victim", "nice rm victim"):
        victim.write_text("x")
        tool = ShellCommandTool(cwd=tmp_path)
        rules = [
            PermissionRule(
                tool_name=SHELL_TOOL, behavior=PermissionBehavior.DENY, rule_content="rm *"
            )
        ]
        result = await _bypass_call(tool, command, rules)
        assert result.state is ToolResultState.DENIED, command
        assert victim.exists()


async def test_git_deny_through_a_toolkit(tmp_path: Path) -> None:
    tool = ShellCommandTool(allow=["git *"], deny=["git push"], cwd=tmp_path)
    for command in ("git -C . push", "git --no-pager push"):
        result = await _bypass_call(tool, command, [])
        assert result.state is ToolResultState.DENIED, command
    asked = await _bypass_call(tool, "git -c alias.p=push p", [])
    assert asked.needs_approval


# - properties -

_DANGER = [
    ["rm", "-rf", "x"],
    ["rm", "-r", "-f", "x"],
    ["chmod", "0777", "f"],
    ["chmod", "a+rwx", "f"],
    ["mkfs.ext4", "/dev/sdb1"],
    ["dd", "of=x"],
    ["kill", "-9", "1"],
    ["pkill", "x"],
    ["shred", "f"],
    ["find", ".", "-delete"],
    ["sh", "-c", "ls"],
    ["python3", "-c", "pass"],
    ["perl", "-e", "1"],
]

_WRAPPERS: list[list[list[str]]] = [
    [["env"], ["env", "-i"], ["env", "FOO=1"], ["env", "-u", "HOME"], ["env", "-C", "/tmp"]],
    [["env", "--"], ["/usr/bin/env", "-i", "--", "A=b"]],
    [["nice"], ["nice", "-n", "5"], ["nice", "-7"], ["nice", "--adjustment=3"]],
    [["ionice", "-c", "3"], ["ionice", "-c2", "-n7"], ["ionice", "-t"]],
    [["timeout", "5"], ["timeout", "-s", "KILL", "5"], ["timeout", "-k", "1", "2s"]],
    [["nohup"], ["stdbuf", "-o0"], ["stdbuf", "-i", "L", "-e", "0"]],
    [["setsid"], ["setsid", "-f"], ["setsid", "-w"]],
    [["time"], ["time", "-p"], ["time", "-f", "%e", "-o", "out"]],
    [["command"], ["command", "-p"], ["exec", "-a", "n"], ["exec", "-c"]],
    [["sudo"], ["sudo", "-u", "bob", "-E", "--"], ["doas", "-u", "root"]],
    [["xargs"], ["xargs", "-0", "-n1"], ["xargs", "-I{}"]],
    [["busybox"], ["toybox"], ["chroot", "/"], ["flock", "/tmp/l"], ["unshare", "-r"]],
    [["nsenter", "-t", "1", "-m"], ["strace", "-f"], ["ltrace"], ["watch", "-x"]],
]


def _wrapped(chain: list[list[str]], danger: list[str], split: bool) -> str:
    text = shlex.join(danger)
    for wrapper in reversed(chain):
        if split and wrapper[0] == "env":
            text = shlex.join(["env", "-S", text])
        else:
            text = f"{shlex.join(wrapper)} {text}"
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chain=st.lists(st.sampled_from(_WRAPPERS).flatmap(st.sampled_from), min_size=1, max_size=10),
    danger=st.sampled_from(_DANGER),
    split=st.booleans(),
    allow=st.sampled_from([(), ("*",), ("env *", "nice *", "sudo *", "xargs *")]),
)
def test_any_wrapper_chain_keeps_the_safety_ask(
    chain: list[list[str]], danger: list[str], split: bool, allow: tuple[str, ...]
) -> None:
    import anyio

    tool = ShellCommandTool(allow=allow)
    command = _wrapped(chain, danger, split)

    async def check() -> None:
        assert await _verdict(tool, command, BYPASS) == SAFETY, command

    anyio.run(check)


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(
            st.sampled_from(
                [
                    "env",
                    "-S",
                    "nice",
                    "-n",
                    "timeout",
                    "5",
                    "xargs",
                    "sudo",
                    "git",
                    "-c",
                    "-C",
                    "find",
                    "-exec",
                    ";",
                    "chmod",
                    "rm",
                    "-rf",
                    "'",
                    '"',
                    "\\",
                    "=",
                    "a=b",
                    "--",
                    "busybox",
                    "sh",
                    "bash",
                    "-c",
                    "python",
                    "awk",
                    "777",
                    "u+s",
                    "/dev/sda",
                    "alias.x=y",
                    "--exec-path",
                    "kill",
                    "-s",
                    "-9",
                    "watch",
                    "-x",
                    "flock",
                ]
            ),
            max_size=60,
        ).map(" ".join),
    )
)
def test_any_text_gets_a_decision(text: str) -> None:
    import anyio

    tool = ShellCommandTool(allow=["git *", "*"], deny=["curl"])
    state = PermissionContextState(mode=PermissionMode.DEFAULT).with_rules(
        _rules(("env *",), ("rm *",))
    )

    async def check() -> None:
        await _verdict(tool, text, state)
        await _verdict(tool, text, BYPASS)

    anyio.run(check)
    tool.match_rule("git push *", {"command": text})
    tool.generate_suggestions({"command": text})


def test_a_long_command_is_read_in_linear_time() -> None:
    import anyio

    tool = ShellCommandTool(allow=["*"])
    # deep nesting stops at the bound; long argument lists are read once
    commands = [
        " ".join(["env -S"] * 2000 + ["ls"]),
        "find . " + " ".join(["-exec", "ls", "{}", "+"] * 1500),
        "ls " + " ".join(["-la"] * 5000),
        "git " + " ".join(["-c", "a.b=c"] * 2000) + " status",
        " ".join(["nice"] * 5000 + ["ls"]),
        "find . " + "-exec find / " * 1300,
        "sed 's/" + "\\\\" * 500 + "'",
        "sed '" + "; /a" * 250 + "'",
        "sed '" + " " * 1000 + "e'",
        "cp " + "/dev/x/../ " * 1500,
    ]

    async def check() -> None:
        for command in commands:
            await _verdict(tool, command[: 16 * 1024], BYPASS)

    anyio.run(check)


async def test_a_wrapped_relative_program_stays_in_the_folder(tmp_path: Path) -> None:
    (tmp_path / "inner").mkdir()
    tool = ShellCommandTool(allow=["*"], cwd=tmp_path / "inner")
    for command in ("env ../x", "nice -n 1 ../x", "find . -exec ../x {} +"):
        decision = await tool.check_permissions({"command": command}, PermissionContext())
        assert decision.behavior is PermissionBehavior.ALLOW
        assert "outside the working folder" in decision.message, command
        result = await _bypass_call(tool, command, [])
        assert "outside the working folder" in result.content


async def test_extra_dangerous_commands_add_to_the_defaults() -> None:
    tool = ShellCommandTool(allow=["*"], dangerous_commands=["git push", "/srv/data/*"])
    assert await _verdict(tool, "env git -C . push", BYPASS) == SAFETY
    assert await _verdict(tool, "cp x /srv/data/y", BYPASS) == SAFETY
    assert await _verdict(tool, "nice rm -rf x", BYPASS) == SAFETY
    assert await _verdict(tool, "git -C . pull", BYPASS) == ALLOW
