"""The ``ferrotool`` command: print schemas, run one call, run the demo, serve over MCP."""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import statistics
import sys
import time
import types
import typing
from collections.abc import Callable, Sequence
from typing import Final, TextIO, cast, get_args

import anyio
import orjson

import ferrotool
from ferrotool._registry.toolkit import Registry, Toolkit
from ferrotool._schema.schema import type_schema
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool.errors import CliError, InjectionError, SchemaError, ValidationError
from ferrotool.providers import ProviderFormat

_FORMATS: Final = get_args(ProviderFormat)
_DEMO_REPEATS: Final = 2000
_PLAIN: Final = (types.FunctionType, types.MethodType, functools.partial)
"""What `Toolkit.register` makes a tool of: the callables that may instead be factories."""
_CONTEXT_KEYS: Final = ("user_id", "session_id", "values")

_CALL_HELP: Final = """\
ARGUMENTS is the tool call's JSON text, as a model would send it ("-" reads it from stdin;
default {}). It is passed as is: JSON that does not parse comes back as an error result.

--context gives the call's runtime context as a JSON object, every key optional:
  {"user_id": "u1", "session_id": "s1", "values": {"TYPE": JSON, ...}}
Each TYPE is a class, named in the target's module (NAME) or anywhere (MODULE:NAME); its JSON is
validated into an instance with ferrotool's typed validator (an object for a dataclass, a string
for an enum...), and the instance reaches every tool parameter that asks for that type
(Injected[TYPE], or a type listed in the tool's inject=).

Example, a demo tool that needs the shop it sells for:
  ferrotool call ferrotool.cli.demo:demo_toolkit place_order \\
      '{"items": [{"sku": "A1", "qty": 2, "price": 9.5}]}' \\
      --context '{"user_id": "u1", "values": {"Shop": {"name": "Corner", "currency": "EUR"}}}'
"""


def load_toolkit(target: str) -> Toolkit | Registry:
    """Import ``MODULE:OBJECT`` and make a toolkit of it.

    The object may be a `Toolkit` or `Registry` (used as is); a factory, called: a function
    annotated to return a `Toolkit` or `Registry`, or a plain function with no return
    annotation that takes no arguments (what it returns is used like the object itself); a
    tool, a function, or an object with ``@tool`` methods (registered into a new toolkit).

    Raises:
        CliError: The target cannot be imported or holds no tools.
    """
    return _load(target)[1]


def _load(target: str) -> tuple[types.ModuleType, Toolkit | Registry]:
    """The target's module and its toolkit."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CliError(f"expected MODULE:OBJECT, got {target!r}")
    module = _import(module_name)
    obj = _attribute(module, attribute)
    factory = _is_factory(obj)
    if factory:
        obj = cast("Callable[[], object]", obj)()
    if isinstance(obj, (Toolkit, Registry)):
        return module, obj
    toolkit = Toolkit()
    try:
        toolkit.register(obj)
    except (TypeError, ValueError) as exc:
        if factory:
            raise CliError(
                f"{target} was called as a toolkit factory (a function with no arguments and no"
                f" return annotation) and returned {type(obj).__name__}, which holds no tools"
            ) from exc
        raise CliError(f"{target}: {exc}") from exc
    return module, toolkit


def _import(module_name: str) -> types.ModuleType:
    sys.path.insert(0, ".")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import {module_name!r}: {exc}") from exc
    finally:
        sys.path.remove(".")


def _attribute(module: types.ModuleType, attribute: str) -> object:
    obj: object = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CliError(f"{module.__name__!r} has no attribute {attribute!r}") from None
    return obj


def _is_factory(obj: object) -> bool:
    """Whether ``obj`` is called to make the toolkit rather than registered as a tool.

    A callable annotated to return a `Toolkit` or `Registry`, or a plain function without a
    return annotation that takes no arguments (a tool without parameters is annotated, or
    decorated with ``@tool``).
    """
    if not callable(obj) or isinstance(obj, type):
        return False
    if isinstance(obj, _PLAIN):
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):  # no signature to read: not a factory we can recognise
            return False
        if signature.return_annotation is inspect.Signature.empty:
            return all(
                parameter.default is not inspect.Parameter.empty
                or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
                for parameter in signature.parameters.values()
            )
    try:
        returns = typing.get_type_hints(obj).get("return")
    except Exception:  # unresolvable annotations: not a factory we can recognise
        return False
    return isinstance(returns, type) and issubclass(returns, (Toolkit, Registry))


def _parse_context(text: str, module: types.ModuleType) -> RuntimeContext:
    """The `RuntimeContext` that ``--context`` describes (see ``ferrotool call --help``).

    Args:
        text: A JSON object with the optional keys ``user_id``, ``session_id`` (strings) and
            ``values``: an object mapping a class (``NAME`` in ``module``, or ``MODULE:NAME``)
            to the JSON its instance is validated from.
        module: Where bare class names are looked up (the target's module).

    Raises:
        CliError: The text is not such an object, or a value cannot be built.
    """
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise CliError(f"--context is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CliError(f"--context must be a JSON object, got {text!r:.80}")
    unknown = [key for key in data if key not in _CONTEXT_KEYS]
    if unknown:
        raise CliError(f"--context: unknown keys {unknown}; expected some of {_CONTEXT_KEYS}")
    ids: dict[str, str | None] = {}
    for key in ("user_id", "session_id"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise CliError(f"--context: {key} must be a string, got {value!r:.80}")
        ids[key] = value
    raw_values = data.get("values", {})
    if not isinstance(raw_values, dict):
        raise CliError(f"--context: values must be an object of TYPE: JSON, got {raw_values!r:.80}")
    values: dict[type, object] = {}
    for name, raw in raw_values.items():
        tp = _context_type(name, module)
        try:
            values[tp] = type_schema(tp).validate_python(raw)
        except SchemaError as exc:
            raise CliError(f"--context: {name} cannot be built from JSON: {exc}") from None
        except ValidationError as exc:
            raise CliError(f"--context: {name}: {exc}") from None
    return RuntimeContext(
        user_id=ids["user_id"],
        session_id=ids["session_id"],
        values=types.MappingProxyType(values),
    )


def _context_type(name: str, module: types.ModuleType) -> type:
    module_name, colon, attribute = name.rpartition(":")
    if colon and (not module_name or not attribute):
        raise CliError(f"--context: expected NAME or MODULE:NAME, got {name!r}")
    try:
        found = _attribute(_import(module_name) if colon else module, attribute)
    except CliError as exc:
        raise CliError(f"--context: {exc}") from None
    if not isinstance(found, type):
        raise CliError(f"--context: {name} is not a class")
    return found


def _dump(value: object, out: TextIO) -> None:
    out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())
    out.write("\n")


def _schema(args: argparse.Namespace, out: TextIO) -> int:
    toolkit = load_toolkit(args.target)
    _dump(toolkit.schemas(args.format, strict=args.strict), out)
    return 0


def _call(args: argparse.Namespace, out: TextIO) -> int:
    module, toolkit = _load(args.target)
    context = None if args.context is None else _parse_context(args.context, module)
    arguments: str = "{}" if args.arguments is None else args.arguments
    if arguments == "-":
        arguments = sys.stdin.read()
    block = ToolUseBlock(args.id, args.tool, arguments)
    try:
        result = anyio.run(toolkit.call_tool, block, context)
    except InjectionError as exc:
        raise CliError(f"{exc}: give it with --context (see ferrotool call --help)") from None
    _dump(result.to_dict(), out)
    return 0 if result.state.value == "success" else 1


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    if args.agent:
        from ferrotool.cli.agent_demo import run_demo

        anyio.run(run_demo, out)
        return 0
    from ferrotool.cli.demo import DEMO_CALLS, DEMO_CONTEXT, demo_toolkit

    toolkit = demo_toolkit()
    repeats: int = args.repeats
    out.write(f"ferrotool demo: {len(toolkit)} tools, {len(DEMO_CALLS)} calls\n\n")

    async def run() -> list[tuple[str, ToolUseBlock, ToolResultBlock, float | None]]:
        rows = []
        for label, block in DEMO_CALLS:
            result = await toolkit.call_tool(block, DEMO_CONTEXT)
            timings = []
            for _ in range(repeats):
                start = time.perf_counter()
                await toolkit.call_tool(block, DEMO_CONTEXT)
                timings.append(time.perf_counter() - start)
            median = statistics.median(timings) * 1e6 if timings else None
            rows.append((label, block, result, median))
        return rows

    for label, block, result, micros in anyio.run(run):
        out.write(f"-- {label}: {block.name}({block.arguments})\n")
        timing = "" if micros is None else f", median {micros:.1f} us over {repeats} calls"
        out.write(f"   state {result.state.value}{timing}\n")
        for line in result.content.splitlines():
            out.write(f"   | {line}\n")
    out.write("\nschemas (openai_chat, strict):\n")
    _dump(toolkit.schemas("openai_chat", strict=True), out)
    return 0


def _serve(args: argparse.Namespace, out: TextIO) -> int:
    import os

    import uvicorn

    from ferrotool.mcp import serve

    try:
        store = serve.store_from_url(args.store)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.workers > 1 and (store is None or args.transport != "streamable-http"):
        raise CliError(
            "--workers needs --transport streamable-http and a shared --store redis://..."
        )
    server = serve.server_for(args.target, store)
    if args.transport == "stdio":
        anyio.run(serve.serve_stdio, server)
        return 0
    host, port = args.host, args.port
    sys.stderr.write(f"ferrotool: serving MCP ({args.transport}) on http://{host}:{port}\n")
    if args.transport == "sse":
        uvicorn.run(serve.sse_app(server, host=host), host=host, port=port, log_level="warning")
    elif args.workers > 1:
        os.environ[serve.ENV_TARGET] = args.target or ""
        os.environ[serve.ENV_STORE] = args.store or ""
        os.environ[serve.ENV_HOST] = host
        uvicorn.run(
            "ferrotool.mcp.serve:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=args.workers,
            log_level="warning",
        )
    else:
        app = serve.http_app(server, host=host, redis_url=args.store if store else None)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count (0 or more), got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ferrotool", description="Typed tools for LLM agents, with a Rust core."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {ferrotool.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    schema = commands.add_parser("schema", help="print the provider schemas of some tools")
    schema.add_argument("target", metavar="MODULE:OBJECT")
    schema.add_argument("--format", choices=_FORMATS, default="openai_chat")
    schema.add_argument("--strict", action="store_true", help="strict (constrained) schemas")
    schema.set_defaults(run=_schema)
    call = commands.add_parser(
        "call",
        help="run one tool call and print the result as JSON",
        description="Run one tool call and print the result as JSON (exit status 1 when the"
        " result is not a success).",
        epilog=_CALL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    call.add_argument("target", metavar="MODULE:OBJECT")
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("arguments", metavar="ARGUMENTS", nargs="?")
    call.add_argument("--id", default="cli", help="the tool-call id (default: cli)")
    call.add_argument(
        "--context", metavar="JSON", help="the call's runtime context: user, session, values"
    )
    call.set_defaults(run=_call)
    demo = commands.add_parser("demo", help="run an example toolkit end to end, with timings")
    demo.add_argument(
        "--repeats",
        type=_count,
        default=_DEMO_REPEATS,
        help=f"timed runs per call (default {_DEMO_REPEATS}; 0 runs each call once, untimed)",
    )
    demo.add_argument(
        "--agent",
        action="store_true",
        help="run a scripted agent over the demo toolkit instead, printing its event stream",
    )
    demo.set_defaults(run=_demo)
    serve = commands.add_parser(
        "serve",
        help="serve a toolkit to MCP clients (the demo toolkit without a target)",
        description="Serve a toolkit over MCP: stdio, SSE or streamable HTTP (at /mcp).",
    )
    serve.add_argument("target", metavar="MODULE:OBJECT", nargs="?")
    serve.add_argument("--transport", choices=("stdio", "sse", "streamable-http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--store",
        metavar="URL",
        help="where sessions live: redis://host:port/db (shared by workers); default memory",
    )
    serve.add_argument(
        "--workers", type=_count, default=1, help="worker processes (streamable HTTP, --store)"
    )
    serve.set_defaults(run=_serve)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if len(extra) == 1 and args.command == "call" and args.arguments is None:
        # argparse ends an optional positional at the first option: in `call TARGET TOOL
        # --context C ARGUMENTS` it leaves ARGUMENTS over.
        args.arguments = extra.pop()
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return cast("int", args.run(args, out or sys.stdout))
    except CliError as exc:
        sys.stderr.write(f"ferrotool: {exc}\n")
        return 2


__all__ = ["load_toolkit", "main"]
