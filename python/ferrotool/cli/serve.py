"""What ``ferrotool serve`` serves: a target's toolkit or the demo's, and its worker processes.

The transports themselves are the MCP wing's (`ferrotool.mcp.serve`).

``--workers N`` on Linux: the ``ferrotool serve`` process binds N listening sockets to the one
address with ``SO_REUSEPORT`` (the kernel spreads new connections over them by a hash of their
addresses and ports) and starts N worker processes, each running its own uvicorn server on its
own socket with the app of `app_from_env`. A single shared socket would not spread them: each
worker's event loop accepts every connection pending when it wakes, so connections opened
together land on whichever worker wakes first. The parent supervises (`supervise`): SIGINT or
SIGTERM stops every worker gracefully; a worker that exits on its own stops the others and the
parent exits with status 1, for the service manager to restart the whole; a parent that dies
without stopping them (SIGKILL) is noticed by each worker, which then stops too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType
from typing import Final, TypedDict

import orjson
from starlette.types import ASGIApp

from ferrotool._session.state import SessionStore
from ferrotool.cli.demo import DEMO_CONTEXT, demo_toolkit
from ferrotool.cli.target import load_toolkit
from ferrotool.mcp.serve import HeaderTimeoutProtocol, http_app, http_security, store_from_url
from ferrotool.mcp.server import McpToolServer

ENV_TARGET: Final = "FERROTOOL_SERVE_TARGET"
ENV_STORE: Final = "FERROTOOL_SERVE_STORE"
ENV_HOST: Final = "FERROTOOL_SERVE_HOST"
ENV_SECURITY: Final = "FERROTOOL_SERVE_SECURITY"


class SecurityOptions(TypedDict):
    """The HTTP security options of the command line (`ferrotool.mcp.serve.http_security`)."""

    auth_token_env: str | None
    auth_token_file: str | None
    allowed_hosts: list[str]
    allowed_origins: list[str]
    max_concurrent: int
    insecure_no_auth: bool


def security_options(args: argparse.Namespace) -> SecurityOptions:
    """The HTTP security options ``ferrotool serve`` was given."""
    return SecurityOptions(
        auth_token_env=args.auth_token_env,
        auth_token_file=args.auth_token_file,
        allowed_hosts=list(args.allowed_host),
        allowed_origins=list(args.allowed_origin),
        max_concurrent=args.max_concurrent_calls,
        insecure_no_auth=args.insecure_no_auth,
    )


def server_for(target: str | None, store: SessionStore | None) -> McpToolServer:
    """The server of ``MODULE:OBJECT``, or of the demo toolkit (with its context) for ``None``."""
    if target:
        return McpToolServer(load_toolkit(target), store=store)
    return McpToolServer(demo_toolkit(), store=store, context=DEMO_CONTEXT, name="ferrotool-demo")


def app_from_env() -> ASGIApp:
    """The streamable HTTP app described by the environment (for ``--workers``).

    Each worker process builds its own app from ``FERROTOOL_SERVE_TARGET`` (``MODULE:OBJECT``)
    and ``FERROTOOL_SERVE_STORE``, guarded as ``FERROTOOL_SERVE_SECURITY`` says (the JSON of
    `SecurityOptions`; each worker reads the tokens itself); uvicorn calls this in every worker.
    """
    target = os.environ.get(ENV_TARGET)
    url = os.environ.get(ENV_STORE) or None
    host = os.environ.get(ENV_HOST, "127.0.0.1")
    options: SecurityOptions = orjson.loads(os.environ.get(ENV_SECURITY) or "{}")
    server = server_for(target or None, store_from_url(url))
    return http_app(server, host=host, redis_url=url, security=http_security(host, **options))


# - many workers: a socket each, one supervisor -

_BACKLOG: Final = 2048  # uvicorn's default
_WORKER: Final = "import sys; from ferrotool.cli.serve import run_worker; run_worker(*sys.argv[1:])"
_POLL_S: Final = 0.2


def balanced() -> bool:
    """Whether the kernel spreads connections over sockets sharing a port (Linux ``SO_REUSEPORT``).

    Elsewhere ``SO_REUSEPORT`` is missing (Windows) or hands every connection to one of the
    sockets (macOS and the BSDs): ``ferrotool serve --workers N`` then runs uvicorn's own workers
    on one shared socket, which serve every request but do not spread connections evenly.
    """
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def listen(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening TCP sockets on ``host:port``, all with ``SO_REUSEPORT``.

    Args:
        host: The address to bind (a name is resolved; the first address found is bound).
        port: The port (0: a free one, picked for the first socket and joined by the others).
        count: How many sockets (one a worker).

    Raises:
        OSError: An address that does not resolve or cannot be bound (in use, not local).
    """
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_server(
                (host, port), family=family, backlog=_BACKLOG, reuse_port=True
            )
            sockets.append(sock)
            port = sock.getsockname()[1]
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def supervise(sockets: Sequence[socket.socket], *, environ: dict[str, str] | None = None) -> int:
    """Run a worker process on each socket until stopped; the exit status for the command.

    Each worker (`run_worker`) serves `app_from_env` from the environment (``environ``, default
    this process's). SIGINT and SIGTERM are passed on to the workers as SIGTERM (each finishes
    the requests in flight, then exits; a second signal stops them at once) and the status is 0
    once every worker has exited. A worker that exits while nobody asked it to is reported on
    stderr, the others are stopped, and the status is 1. Each worker watches a pipe this
    process holds open, and stops when it closes (this process killed outright).

    Args:
        sockets: The listening sockets (`listen`), one a worker; handed over (closed here once
            the workers have them).
        environ: The workers' environment (default this process's).

    Returns:
        0 once the workers stopped on a signal, 1 when one exited on its own.
    """
    lifeline, keep = os.pipe()  # `keep` stays here: a worker reads EOF when this process is gone
    workers: list[subprocess.Popen[bytes]] = []
    requested = 0  # stop signals received
    failed = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal requested
        requested += 1
        _signal_all(workers, signal.SIGTERM if requested == 1 else signal.SIGKILL)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for sock in sockets:
            workers.append(
                subprocess.Popen(
                    [sys.executable, "-c", _WORKER, str(sock.fileno()), str(lifeline)],
                    env=environ,
                    pass_fds=(sock.fileno(), lifeline),
                    process_group=0,  # a terminal's ^C reaches this process, which passes it on
                )
            )
            sock.close()
        os.close(lifeline)
        lifeline = -1
        if requested:  # a signal came while they started
            _signal_all(workers, signal.SIGTERM)
        while True:
            running = [worker for worker in workers if worker.poll() is None]
            ended = next((worker for worker in workers if worker.returncode is not None), None)
            if ended is not None and not requested and not failed:
                sys.stderr.write(
                    f"ferrotool: worker {ended.pid} exited with status {ended.returncode};"
                    " stopping the others\n"
                )
                failed = True
                _signal_all(workers, signal.SIGTERM)
            if not running:
                break
            time.sleep(_POLL_S)
    finally:
        for sock in sockets:
            sock.close()
        if lifeline >= 0:
            os.close(lifeline)
        os.close(keep)
        _signal_all(workers, signal.SIGKILL)
        for worker in workers:
            worker.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 1 if failed else 0


def _signal_all(workers: Sequence[subprocess.Popen[bytes]], sig: signal.Signals) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(sig)


def run_worker(listen_fd: str, lifeline_fd: str) -> None:
    """One worker of `supervise`: uvicorn serving `app_from_env` on an inherited socket.

    Args:
        listen_fd: The listening socket's file descriptor.
        lifeline_fd: The read end of a pipe the parent holds open: when it reads EOF, the parent
            is gone, and the worker stops as on SIGTERM.
    """
    import uvicorn

    sock = socket.socket(fileno=int(listen_fd))
    config = uvicorn.Config(
        app_from_env, factory=True, http=HeaderTimeoutProtocol, log_level="warning"
    )
    server = uvicorn.Server(config)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        lifeline = int(lifeline_fd)

        def orphaned() -> None:
            loop.remove_reader(lifeline)
            server.should_exit = True

        loop.add_reader(lifeline, orphaned)
        await server.serve(sockets=[sock])

    asyncio.run(serve())


__all__ = [
    "ENV_HOST",
    "ENV_SECURITY",
    "ENV_STORE",
    "ENV_TARGET",
    "SecurityOptions",
    "app_from_env",
    "balanced",
    "listen",
    "run_worker",
    "security_options",
    "server_for",
    "supervise",
]
