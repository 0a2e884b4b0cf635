"""An HTTP endpoint that trickles its answer one byte a second cannot hold a call past its
timeout: the LLM extractor's and the embedding provider's timeouts are deadlines for the
whole request (connecting, sending, waiting and reading), not per read of the socket."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conversations.extraction import ExtractionFailed, WindowMessage
from conversations.extraction.llm import LlmExtractor
from core.openai_sdk import Endpoint
from search.embeddings import EmbeddingError, OpenAIEmbedding

DEADLINE = 2.0
TRICKLED = 6


class Trickle(ThreadingHTTPServer):
    """Answers one byte a second for TRICKLED seconds (in the headers or in the body), then
    the rest at once: a client without a deadline gets its answer after TRICKLED seconds."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _TrickleHandler)
        self.in_headers = False
        self.stopped = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _TrickleHandler(BaseHTTPRequestHandler):
    server: Trickle

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        answer = b'{"choices": [{"message": {"content": "{\\"memories\\": []}"}}]}'
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(answer)}\r\n\r\n".encode()
        )
        if self.server.in_headers:
            trickled = head + answer
        else:
            self.wfile.write(head)
            trickled = answer
        try:
            for byte in trickled[:TRICKLED]:
                if self.server.stopped.wait(1.0):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            self.wfile.write(trickled[TRICKLED:])
        except OSError:
            return

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(params=["body", "headers"])
def trickle(request: pytest.FixtureRequest) -> Iterator[Trickle]:
    server = Trickle()
    server.in_headers = request.param == "headers"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.stopped.set()
    server.shutdown()
    server.server_close()


def _message() -> WindowMessage:
    return WindowMessage(
        id=1,
        position=1,
        role="user",
        content="I drink mango tea every Monday.",
        speaker="Alice",
        is_account_user=True,
        sent_at=datetime(2025, 3, 3, tzinfo=UTC),
    )


def test_the_llm_call_stops_at_its_deadline(trickle: Trickle) -> None:
    extractor = LlmExtractor(url=trickle.url, model="m", timeout=DEADLINE)
    started = time.monotonic()
    with pytest.raises(ExtractionFailed, match="within 2 s"):
        extractor.extract([_message()])
    assert time.monotonic() - started < DEADLINE + 1.5


def test_the_embedding_call_stops_at_its_deadline(trickle: Trickle) -> None:
    provider = OpenAIEmbedding(
        base_url=trickle.url,
        api_key="",
        model="m",
        dimensions=3,
        timeout=DEADLINE,
        batch_size=8,
        max_retries=0,
    )
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        provider.embed(["mango tea"])
    assert time.monotonic() - started < DEADLINE + 1.5


def test_a_forked_process_makes_its_own_clients() -> None:
    """The worker forks: a child must not share the parent's pooled connections."""
    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", api_key="", timeout=1.0)
    with endpoint.call() as parent_client:
        pass
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answers whether it got a client of its own
        with endpoint.call() as child_client:
            os.write(write, b"own" if child_client is not parent_client else b"shared")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 10) == b"own"
    with endpoint.call() as again:
        assert again is parent_client  # one client per endpoint in a process
