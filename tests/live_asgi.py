"""memoryapp's real ASGI application served by uvicorn in a thread of the test process,
against the test database (use with a transactional test), and a fake upstream model
server for the proxy's tests."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn
from django.core.asgi import get_asgi_application
from django.db import connections

from config.routing import build_application


@contextmanager
def live_asgi_server() -> Iterator[str]:
    """The base URL of config.routing's application (what config.asgi serves) on a free port."""
    # Server threads close their connection after each request, so none is left open on
    # the test database when it is emptied or dropped.
    settings_dict = connections["default"].settings_dict
    max_age = settings_dict["CONN_MAX_AGE"]
    settings_dict["CONN_MAX_AGE"] = 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_application(get_asgi_application()), lifespan="on", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()
        settings_dict["CONN_MAX_AGE"] = max_age


class FakeUpstream:
    """An OpenAI-compatible model server that records each request it gets.

    ``reply`` decides the answer: a (status, body) pair, or with ``stream`` a list of
    SSE data strings sent one by one, ``delay`` seconds apart.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.received_at: list[float] = []
        self.status = 200
        self.body: Any = None
        self.delay = 0.0
        self.reply: Callable[[dict[str, Any]], Any] | None = None
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                upstream.requests.append({"path": self.path, "headers": self.headers})
                self._json(200, {"object": "list", "data": [{"id": "llama3", "object": "model"}]})

            def do_POST(self) -> None:
                upstream.received_at.append(time.perf_counter())
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                upstream.requests.append({"path": self.path, "headers": self.headers, "body": body})
                if upstream.delay and not body.get("stream"):
                    time.sleep(upstream.delay)
                if upstream.status >= 400:
                    raw = upstream.body if upstream.body is not None else "boom"
                    self._send(upstream.status, str(raw).encode(), "text/plain")
                elif body.get("stream"):
                    self._stream(body)
                else:
                    self._json(200, upstream.completion(body))

            def _json(self, status: int, body: Any) -> None:
                self._send(status, json.dumps(body).encode(), "application/json")

            def _send(self, status: int, raw: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for event in upstream.events(body):
                    data = f"data: {event}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if upstream.delay:
                        time.sleep(upstream.delay)
                self.wfile.write(b"0\r\n\r\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.body is not None:
            return dict(self.body)
        return {
            "id": "chatcmpl-upstream",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Sure, tabs it is."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        }

    def events(self, body: dict[str, Any]) -> list[str]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            return json.dumps(
                {
                    "id": "chatcmpl-upstream",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
            )

        return [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Sure, "}),
            chunk({"content": "tabs it is."}),
            chunk({}, "stop"),
            "[DONE]",
        ]

    def __enter__(self) -> FakeUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
