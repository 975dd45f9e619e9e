"""Helpers for the MCP tests: real server processes on loopback ports, bounded waits."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

SERVERS = Path(__file__).parent / "servers"
RAW = str(SERVERS / "raw_stdio.py")
SDK = str(SERVERS / "sdk_server.py")
FASTMCP = str(SERVERS / "fastmcp_server.py")
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_port(
    port: int, process: subprocess.Popen[bytes] | None = None, seconds: float = 20
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def start(
    args: Sequence[str], port: int, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [PYTHON, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port, process)
    except BaseException:
        stop(process)
        raise
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
