"""A hand-written MCP server over stdio, for faults the SDK's own server would never commit.

It speaks the handshake era (``initialize``; ``server/discover`` is "Method not found", so an
``auto`` client falls back) and runs each ``tools/call`` on a thread of its own, so calls overlap.
Tools: ``echo``, ``add`` (structured output), ``media`` (every content kind), ``fail``
(``isError``), ``slow`` (sleeps), ``die`` (the process exits mid-call), ``wipe``
(destructive), ``garbage`` (writes a
line that is not JSON-RPC and never answers), ``progress`` (progress notifications), ``grow``
(adds a tool and says the list changed), ``meta`` (echoes the request's ``_meta``) and
``wrong_output`` (structured content against its output schema). ``tools/list`` comes in pages
of three. With ``FAULTS_LOG`` set, every message received is appended to that file. With
``RAW_TOOLS`` set to a JSON file holding a list of tool definitions, the server lists exactly
those (hand-made, bad ones among them), and answers a call of any of them with a text holding
the tool's name and its arguments; a call of the one named ``relist`` adds the definitions of
the file ``RAW_MORE_TOOLS`` to the listing and says the list changed.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

LOCK = threading.Lock()
OUT = sys.stdout
EXTRA: list[dict[str, object]] = []

OBJECT = {"type": "object", "properties": {}}
TOOLS: list[dict[str, object]] = [
    {
        "name": "echo",
        "description": "Echo a text.",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1},
                "times": {"type": "integer"},
                "sep": {"type": "string"},
            },
            "required": ["text"],
            # Draft 7's `dependencies` (2020-12 spells it `dependentRequired`).
            "dependencies": {"times": ["sep"]},
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
    },
    {"name": "media", "description": "Every kind of content.", "inputSchema": OBJECT},
    {"name": "fail", "description": "Fails.", "inputSchema": OBJECT},
    {
        "name": "slow",
        "description": "Sleeps.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "die",
        "description": "Exits mid-call.",
        "inputSchema": OBJECT,
    },
    {
        "name": "wipe",
        "description": "Pretends to delete everything.",
        "inputSchema": OBJECT,
        "annotations": {"destructiveHint": True},
    },
    {"name": "garbage", "description": "Writes garbage.", "inputSchema": OBJECT},
    {"name": "progress", "description": "Reports progress.", "inputSchema": OBJECT},
    {"name": "grow", "description": "Adds a tool.", "inputSchema": OBJECT},
    {"name": "meta", "description": "Echoes _meta.", "inputSchema": OBJECT},
    {
        "name": "wrong_output",
        "description": "Breaks its output schema.",
        "inputSchema": OBJECT,
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
    {"name": "odd.name/with spaces", "description": "A name to clean.", "inputSchema": OBJECT},
]
PAGE = 3
HAND_MADE = os.environ.get("RAW_TOOLS")
if HAND_MADE:
    with open(HAND_MADE, encoding="utf-8") as listed:
        TOOLS = json.load(listed)


def send(message: dict[str, object]) -> None:
    with LOCK:
        OUT.write(json.dumps(message) + "\n")
        OUT.flush()


def reply(request_id: object, result: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def text(value: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}]}


def call(request_id: object, params: dict[str, object]) -> None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    assert isinstance(arguments, dict)
    meta = params.get("_meta") or {}
    assert isinstance(meta, dict)
    if HAND_MADE and name == "relist":
        with open(os.environ["RAW_MORE_TOOLS"], encoding="utf-8") as more:
            EXTRA.extend(json.load(more))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        reply(request_id, text("relisted"))
    elif HAND_MADE:
        reply(request_id, text(json.dumps({"tool": name, "arguments": arguments})))
    elif name == "echo":
        reply(request_id, text(str(arguments["text"])))
    elif name == "add":
        total = int(arguments["a"]) + int(arguments["b"])
        reply(request_id, {**text(str(total)), "structuredContent": {"sum": total}})
    elif name == "media":
        reply(
            request_id,
            {
                "content": [
                    {"type": "text", "text": "hello"},
                    {"type": "image", "data": "aW1n", "mimeType": "image/png"},
                    {"type": "audio", "data": "c25k", "mimeType": "audio/wav"},
                    {
                        "type": "resource",
                        "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"},
                    },
                    {
                        "type": "resource",
                        "resource": {"uri": "file:///b.bin", "mimeType": "x/bin", "blob": "AAE="},
                    },
                    {"type": "resource_link", "uri": "file:///c.md", "name": "c"},
                ]
            },
        )
    elif name == "fail":
        reply(request_id, {"content": [{"type": "text", "text": "it broke"}], "isError": True})
    elif name == "slow":
        time.sleep(float(arguments.get("seconds", 30)))
        reply(request_id, text("slept"))
    elif name == "die":
        os._exit(3)
    elif name == "wipe":
        reply(request_id, text("wiped"))
    elif name == "garbage":
        with LOCK:
            OUT.write("this is not JSON-RPC\n")
            OUT.flush()
    elif name == "progress":
        token = meta.get("progressToken")
        for step in (1, 2):
            if token is not None:
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {
                            "progressToken": token,
                            "progress": step,
                            "total": 2,
                            "message": f"step {step}",
                        },
                    }
                )
        reply(request_id, text("done"))
    elif name == "grow":
        EXTRA.append({"name": f"extra{len(EXTRA)}", "description": "Added.", "inputSchema": OBJECT})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        reply(request_id, text("grown"))
    elif name == "meta":
        reply(request_id, text(json.dumps(meta, sort_keys=True)))
    elif name == "wrong_output":
        reply(request_id, {**text("n"), "structuredContent": {"n": "not a number"}})
    elif isinstance(name, str) and name.startswith("extra"):
        reply(request_id, text(name))
    elif name == "odd.name/with spaces":
        reply(request_id, text("odd"))
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32602, "message": f"Unknown tool: {name}"},
            }
        )


def main() -> None:
    log = os.environ.get("FAULTS_LOG")
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps(message) + "\n")
        if request_id is None:
            continue
        if method == "initialize":
            reply(
                request_id,
                {
                    "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "raw", "version": "1"},
                },
            )
        elif method == "tools/list":
            everything = TOOLS + EXTRA
            start = int(params.get("cursor") or 0)
            page: dict[str, object] = {"tools": everything[start : start + PAGE]}
            if start + PAGE < len(everything):
                page["nextCursor"] = str(start + PAGE)
            reply(request_id, page)
        elif method == "tools/call":
            threading.Thread(target=call, args=(request_id, params), daemon=True).start()
        elif method == "ping":
            reply(request_id, {})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )


if __name__ == "__main__":
    main()
