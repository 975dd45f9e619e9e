"""A model API on 127.0.0.1 for the provider SDKs: scripted replies, recorded request bodies.

`ModelServer` answers each POST with the next scripted reply, a JSON body (`reply`) or a stream
of server-sent events (`events`), and records every request's path and JSON body. The SDKs are
pointed at it with their ``base_url``; nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A JSON reply."""

    body: Any
    status: int = 200


@dataclass(frozen=True)
class Events:
    """A server-sent event stream: ``(event name or None, data)`` pairs, then ``[DONE]`` if set."""

    events: Sequence[tuple[str | None, Any]]
    done: bool = False


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    path: str
    body: Any


@dataclass
class ModelServer:
    """The local model API (use as a context manager)."""

    replies: Sequence[Reply | Events] = ()
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.script = list(self.replies)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else None
                with server._lock:
                    server.requests.append(Recorded(self.path, body))
                    reply = server.script.pop(0) if server.script else Reply({"error": "none"}, 500)
                if isinstance(reply, Reply):
                    data = json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data_value in reply.events:
                    head = f"event: {name}\n" if name else ""
                    self.wfile.write(f"{head}data: {json.dumps(data_value)}\n\n".encode())
                if reply.done:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order."""
        return [request.body for request in self.requests]

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
