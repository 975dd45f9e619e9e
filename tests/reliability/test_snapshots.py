"""A snapshot never changes, also while another thread registers and removes tools."""

from __future__ import annotations

import sys
import threading
import time

from ferrotool import FunctionTool, Toolkit, tool


def _tools(count: int) -> list[FunctionTool[[int], int]]:
    made: list[FunctionTool[[int], int]] = []
    for index in range(count):

        def body(n: int) -> int:
            return n

        body.__name__ = f"t{index}"
        body.__qualname__ = f"t{index}"
        body.__doc__ = "A tool."
        made.append(tool(body, name=f"t{index}", inline=True))
    return made


def test_snapshots_taken_while_another_thread_changes_the_toolkit_stay_as_taken() -> None:
    kit = Toolkit()
    tools = _tools(50)
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            for item in tools:
                kit.register(item)
            for index in range(len(tools)):
                kit.remove(f"t{index}")

    writer = threading.Thread(target=churn)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    writer.start()
    changed = 0
    try:
        for _ in range(5_000):
            registry = kit.snapshot()
            first = registry.names()
            time.sleep(0)  # let the writer run between the reads
            if registry.names() != first or len(registry) != len(first):
                changed += 1
    finally:
        stop.set()
        writer.join()
        sys.setswitchinterval(interval)
    assert changed == 0
