"""A toolkit whose tools report progress with numbers: ``progress_kit:toolkit``."""

from __future__ import annotations

from ferrotool import Emitter, Toolkit, tool


@tool(read_only=True)
async def thirds(emitter: Emitter) -> str:
    """Report 1/3, 2/3 and 3/3, then finish."""
    for step in (1, 2, 3):
        emitter.progress(step, 3, f"{step} of 3")
    return "three thirds"


@tool(read_only=True)
def halves(emitter: Emitter) -> str:
    """On a worker thread: report 1 and 2 of 2 (the second without a message), then a chunk."""
    emitter.progress(1, 2, "one half")
    emitter.progress(2, 2)
    emitter.emit("done counting")
    return "two halves"


def toolkit() -> Toolkit:
    """The toolkit served."""
    kit = Toolkit()
    kit.register(thirds)
    kit.register(halves)
    return kit
