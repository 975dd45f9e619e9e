"""The ``ferrotool`` command: print schemas, run one call, run the demo."""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
import typing
from collections.abc import Callable, Sequence
from typing import Final, TextIO, cast, get_args

import anyio
import orjson

from ferrotool._registry.toolkit import Registry, Toolkit
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool.providers import ProviderFormat

_FORMATS: Final = get_args(ProviderFormat)
_DEMO_REPEATS: Final = 2000


class CliError(Exception):
    """A mistake on the command line; printed without a traceback."""


def load_toolkit(target: str) -> Toolkit | Registry:
    """Import ``MODULE:OBJECT`` and make a toolkit of it.

    The object may be a `Toolkit` or `Registry` (used as is), a function annotated to return
    one (a factory, called), a tool, a function, or an object with ``@tool`` methods
    (registered into a new toolkit).

    Raises:
        CliError: The target cannot be imported or holds no tools.
    """
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CliError(f"expected MODULE:OBJECT, got {target!r}")
    sys.path.insert(0, ".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import {module_name!r}: {exc}") from exc
    finally:
        sys.path.remove(".")
    obj: object = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CliError(f"{module_name!r} has no attribute {attribute!r}") from None
    if _is_factory(obj):
        obj = cast("Callable[[], object]", obj)()
    if isinstance(obj, (Toolkit, Registry)):
        return obj
    toolkit = Toolkit()
    try:
        toolkit.register(obj)
    except (TypeError, ValueError) as exc:
        raise CliError(f"{target}: {exc}") from exc
    return toolkit


def _is_factory(obj: object) -> bool:
    """A function annotated to return a `Toolkit` or `Registry`: a toolkit factory."""
    if not callable(obj) or isinstance(obj, type):
        return False
    try:
        returns = typing.get_type_hints(obj).get("return")
    except Exception:  # unresolvable annotations: not a factory we can recognise
        return False
    return returns in (Toolkit, Registry)


def _dump(value: object, out: TextIO) -> None:
    out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())
    out.write("\n")


def _schema(args: argparse.Namespace, out: TextIO) -> int:
    toolkit = load_toolkit(args.target)
    _dump(toolkit.schemas(args.format, strict=args.strict), out)
    return 0


def _call(args: argparse.Namespace, out: TextIO) -> int:
    toolkit = load_toolkit(args.target)
    block = ToolUseBlock(args.id, args.tool, args.arguments)
    result = anyio.run(toolkit.call_tool, block)
    _dump(result.to_dict(), out)
    return 0 if result.state.value == "success" else 1


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    from ferrotool.cli.demo import DEMO_CALLS, DEMO_CONTEXT, demo_toolkit

    toolkit = demo_toolkit()
    repeats: int = args.repeats
    out.write(f"ferrotool demo: {len(toolkit)} tools, {len(DEMO_CALLS)} calls\n\n")

    async def run() -> list[tuple[str, ToolUseBlock, ToolResultBlock, float]]:
        rows = []
        for label, block in DEMO_CALLS:
            result = await toolkit.call_tool(block, DEMO_CONTEXT)
            timings = []
            for _ in range(repeats):
                start = time.perf_counter()
                await toolkit.call_tool(block, DEMO_CONTEXT)
                timings.append(time.perf_counter() - start)
            rows.append((label, block, result, statistics.median(timings) * 1e6))
        return rows

    for label, block, result, micros in anyio.run(run):
        out.write(f"-- {label}: {block.name}({block.arguments})\n")
        out.write(f"   state {result.state.value}, median {micros:.1f} us over {repeats} calls\n")
        for line in result.content.splitlines():
            out.write(f"   | {line}\n")
    out.write("\nschemas (openai_chat, strict):\n")
    _dump(toolkit.schemas("openai_chat", strict=True), out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ferrotool", description="Typed tools for LLM agents, with a Rust core."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    schema = commands.add_parser("schema", help="print the provider schemas of some tools")
    schema.add_argument("target", metavar="MODULE:OBJECT")
    schema.add_argument("--format", choices=_FORMATS, default="openai_chat")
    schema.add_argument("--strict", action="store_true", help="strict (constrained) schemas")
    schema.set_defaults(run=_schema)
    call = commands.add_parser("call", help="run one tool call and print the result as JSON")
    call.add_argument("target", metavar="MODULE:OBJECT")
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("arguments", metavar="JSON", nargs="?", default="{}")
    call.add_argument("--id", default="cli", help="the tool-call id (default: cli)")
    call.set_defaults(run=_call)
    demo = commands.add_parser("demo", help="run an example toolkit end to end, with timings")
    demo.add_argument("--repeats", type=int, default=_DEMO_REPEATS, help="timed runs per call")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        return cast("int", args.run(args, out or sys.stdout))
    except CliError as exc:
        sys.stderr.write(f"ferrotool: {exc}\n")
        return 2


__all__ = ["load_toolkit", "main"]
