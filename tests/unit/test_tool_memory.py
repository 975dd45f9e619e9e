"""What a registered tool keeps is compact: exact-size bytes, shared defaults.

Structural facts only (which object is kept, how many bytes it was allocated); the bytes per
tool against other libraries are measured by ``python -m benches.memory``.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections import Counter

import orjson

from ferrotool import Toolkit, tool
from ferrotool._permissions.paths import DEFAULT_DANGEROUS_DIRECTORIES, DEFAULT_DANGEROUS_FILES
from ferrotool._values import json as json_module
from ferrotool._values.json import dumps_kept

DOCUMENT = {"type": "function", "function": {"name": "lookup", "description": "Look it up."}}


@tool
def lookup(city: str, days: int = 1) -> str:
    """Look up the forecast.

    Args:
        city: The city.
        days: How many days.
    """
    return city * days


@tool
def convert(amount: float, currency: str = "EUR") -> str:
    """Convert an amount.

    Args:
        amount: How much.
        currency: Into what.
    """
    return f"{amount} {currency}"


@tool(dangerous_files=("deploy-keys.toml",))
def guarded(path: str) -> str:
    """Read a file.

    Args:
        path: Which file.
    """
    return path


def _kept_by_dumps_kept(snapshot: tracemalloc.Snapshot) -> Counter[int]:
    """The sizes of the blocks `dumps_kept` allocated that are still allocated in ``snapshot``."""
    only = snapshot.filter_traces([tracemalloc.Filter(True, json_module.__file__)])
    return Counter(trace.size for trace in only.traces)


def test_kept_json_is_the_text_and_the_bytes_header_only() -> None:
    assert dumps_kept(DOCUMENT) == orjson.dumps(DOCUMENT)
    tracemalloc.start()
    try:
        kept = dumps_kept(DOCUMENT)
        allocated = _kept_by_dumps_kept(tracemalloc.take_snapshot())
    finally:
        tracemalloc.stop()
    assert sys.getsizeof(kept) == sys.getsizeof(b"") + len(kept)
    assert allocated == Counter([sys.getsizeof(kept)])


def test_cached_definitions_are_allocated_at_their_exact_size() -> None:
    tracemalloc.start()
    try:
        toolkit = Toolkit()
        toolkit.register(lookup)
        toolkit.register(convert)
        definitions = toolkit.definitions("openai_chat")
        allocated = _kept_by_dumps_kept(tracemalloc.take_snapshot())
    finally:
        tracemalloc.stop()
    assert len(definitions) == 2
    assert definitions == toolkit.definitions("openai_chat")  # served from the cache
    exact = Counter(sys.getsizeof(definition) for definition in definitions)
    assert exact <= allocated  # each definition, at its exact size
    assert max(allocated) == max(exact)  # and no larger block (a serializer's buffer)


def test_tools_without_their_own_settings_share_the_defaults() -> None:
    toolkit = Toolkit()
    toolkit.register(lookup)
    toolkit.register(convert)
    toolkit.register(guarded)
    assert lookup.dangerous_files is DEFAULT_DANGEROUS_FILES
    assert lookup.dangerous_directories is DEFAULT_DANGEROUS_DIRECTORIES
    assert guarded.dangerous_files is not DEFAULT_DANGEROUS_FILES
    assert guarded.dangerous_files[-1] == "deploy-keys.toml"
    entries = toolkit._table.entries
    assert entries["lookup"].execution is entries["convert"].execution
    assert entries["lookup"].presets is entries["convert"].presets
    assert not entries["lookup"].presets
