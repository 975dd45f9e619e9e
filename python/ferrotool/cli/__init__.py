"""The ``ferrotool`` command: print schemas, run one call, run the demo, serve over MCP."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Final, NamedTuple, TextIO, cast, final, get_args

import anyio
import orjson

import ferrotool
from ferrotool._extras import requires_extra
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool.cli.target import load_target, load_toolkit, parse_context
from ferrotool.errors import CliError, InjectionError, MissingExtra
from ferrotool.providers import ProviderFormat

_FORMATS: Final = get_args(ProviderFormat)
_DEMO_REPEATS: Final = 2000

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


def _dump(value: object, out: TextIO) -> None:
    out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())
    out.write("\n")


def _schema(args: argparse.Namespace, out: TextIO) -> int:
    toolkit = load_toolkit(args.target)
    _dump(toolkit.schemas(args.format, strict=args.strict), out)
    return 0


def _call(args: argparse.Namespace, out: TextIO) -> int:
    module, toolkit = load_target(args.target)
    context = None if args.context is None else parse_context(args.context, module)
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

    async def run() -> list[_DemoRow]:
        rows = []
        for label, block in DEMO_CALLS:
            result = await toolkit.call_tool(block, DEMO_CONTEXT)
            timings = []
            for _ in range(repeats):
                start = time.perf_counter()
                await toolkit.call_tool(block, DEMO_CONTEXT)
                timings.append(time.perf_counter() - start)
            median = statistics.median(timings) * 1e6 if timings else None
            rows.append(_DemoRow(label, block, result, median))
        return rows

    rows = anyio.run(run)
    for row in rows:
        _wrapped(out, f"-- {row.label}: {row.call.name}({row.call.arguments})", "     ")
        timing = "" if row.micros is None else f", median {row.micros:.1f} us over {repeats} calls"
        out.write(f"   state {row.result.state.value}{timing}\n")
        for line in row.result.content.splitlines():
            _wrapped(out, f"   | {line}", "   |   ")
    sample = toolkit.schemas("openai_chat", strict=True)[-1]
    out.write("\nthe schema of one tool (openai_chat, strict); all of them with\n")
    out.write("  ferrotool schema ferrotool.cli.demo:demo_toolkit --strict\n")
    _dump(sample, out)
    out.write("\n")
    _table(rows, repeats, out)
    return 0


_WIDTH: Final = 80


@final
class _DemoRow(NamedTuple):
    """One call of `ferrotool demo`: what was called, its result and its median time."""

    label: str
    call: ToolUseBlock
    result: ToolResultBlock
    micros: float | None


def _wrapped(out: TextIO, line: str, indent: str) -> None:
    """Write ``line`` in lines of at most `_WIDTH` columns, each after the first indented."""
    for part in textwrap.wrap(
        line, _WIDTH, subsequent_indent=indent, break_on_hyphens=False, drop_whitespace=True
    ) or [""]:
        out.write(part + "\n")


def _table(rows: Sequence[_DemoRow], repeats: int, out: TextIO) -> None:
    """The summary: one line per call (its tool, state and median time), within 80 columns."""
    timed = f"median us ({repeats} runs)" if repeats else "median us"
    header = ("call", "tool", "state", timed)
    cells = [
        (
            row.label,
            str(row.call.name),
            row.result.state.value,
            "-" if row.micros is None else f"{row.micros:.1f}",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (header, *cells)) for i in range(3)]
    spare = _WIDTH - sum(widths) - 3 * 2 - len(timed)
    if spare < 0:  # a long label gives way: the other columns keep their width
        widths[0] = max(len(header[0]), widths[0] + spare)
    out.write("summary:\n")
    for line in (header, *cells):
        label = _shortened(line[0], widths[0])
        out.write(
            f"{label:<{widths[0]}}  {line[1]:<{widths[1]}}  {line[2]:<{widths[2]}}  "
            f"{line[3]:>{len(timed)}}".rstrip()
            + "\n"
        )


def _shortened(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _serve(args: argparse.Namespace, out: TextIO) -> int:
    try:
        with requires_extra("ferrotool serve", "mcp"):
            import uvicorn

            from ferrotool.cli import serve as workers
            from ferrotool.mcp import serve
    except MissingExtra as exc:
        raise CliError(str(exc)) from None

    try:
        store = serve.store_from_url(args.store)
    except (ValueError, MissingExtra) as exc:
        raise CliError(str(exc)) from None
    if args.workers > 1 and (store is None or args.transport != "streamable-http"):
        raise CliError(
            "--workers needs --transport streamable-http and a shared --store redis://..."
        )
    host, port = args.host, args.port
    options = workers.security_options(args)
    security = None
    if args.transport != "stdio":
        try:
            security = serve.http_security(host, **options)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    redis_url = args.store if store is not None else None
    if store is None and args.transport != "stdio":
        store = serve.ExpiringSessionStore(args.session_idle_timeout)
    server = workers.server_for(args.target, store)
    if args.transport == "stdio":
        anyio.run(serve.serve_stdio, server)
        return 0
    sys.stderr.write(f"ferrotool: serving MCP ({args.transport}) on http://{host}:{port}\n")
    os.environ[serve.ENV_HEADER_TIMEOUT] = str(args.header_timeout)
    if args.transport == "sse":
        serve.serve_http(serve.sse_app(server, host=host, security=security), host, port)
    elif args.workers > 1:
        os.environ[workers.ENV_TARGET] = args.target or ""
        os.environ[workers.ENV_STORE] = args.store or ""
        os.environ[workers.ENV_HOST] = host
        os.environ[workers.ENV_SECURITY] = orjson.dumps(options).decode()
        if workers.balanced():
            try:
                sockets = workers.listen(host, port, args.workers)
            except OSError as exc:
                raise CliError(f"cannot listen on {host}:{port}: {exc}") from None
            return workers.supervise(sockets)
        uvicorn.run(
            "ferrotool.cli.serve:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=args.workers,
            http=serve.HeaderTimeoutProtocol,
            log_level="warning",
        )
    else:
        app = serve.http_app(
            server,
            host=host,
            redis_url=redis_url,
            security=security,
            session_idle_timeout=args.session_idle_timeout,
        )
        serve.serve_http(app, host, port)
    return 0


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds (more than 0), got {text!r}")
    return value


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
    commands = parser.add_subparsers(dest="command")
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
    http = serve.add_argument_group("HTTP security (sse, streamable-http)")
    http.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help="require a bearer token: one of this environment variable's lines",
    )
    http.add_argument(
        "--auth-token-file",
        metavar="PATH",
        help="require a bearer token: one of this file's lines (read at start)",
    )
    http.add_argument(
        "--allowed-host",
        metavar="HOST[:PORT]",
        action="append",
        default=[],
        help="accept this Host header too (repeatable; the bind address and loopback always)",
    )
    http.add_argument(
        "--allowed-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        help="accept this Origin header too, e.g. https://app.example.com (repeatable)",
    )
    http.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="serve a non-loopback address without authentication (anyone who reaches it)",
    )
    http.add_argument(
        "--max-concurrent-calls",
        metavar="N",
        type=_count,
        default=16,
        help="requests one client may have in flight (default 16)",
    )
    http.add_argument(
        "--header-timeout",
        metavar="SECONDS",
        type=_seconds,
        default=10.0,
        help="close a connection whose request head is not in after this long (default 10)",
    )
    http.add_argument(
        "--session-idle-timeout",
        metavar="SECONDS",
        type=_seconds,
        default=1800.0,
        help="forget a session idle this long (kept in memory: its tool state, and a"
        " handshake-era streamable HTTP session; default 1800)",
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
    out = out or sys.stdout
    try:
        if args.command is None:  # a bare `ferrotool`: what it can do
            parser.print_help(out)
            return 0
        status = cast("int", args.run(args, out))
        out.flush()
    except CliError as exc:
        sys.stderr.write(f"ferrotool: {exc}\n")
        return 2
    except BrokenPipeError:
        # The reader went away (`ferrotool schema ... | head`): end quietly, as `cat` does. The
        # output still buffered must not be flushed again at exit, or Python reports the same
        # broken pipe there: point the descriptor at /dev/null.
        _quiet(out)
        return 1
    return status


def _quiet(out: TextIO) -> None:
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


__all__ = ["load_toolkit", "main"]
