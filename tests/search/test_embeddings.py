from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from memories.models import Memory
from recall.injection import PreviewRequest, injection_preview
from search.embeddings import (
    EmbeddingError,
    LocalHashEmbedding,
    OpenAIEmbedding,
    SentenceTransformerEmbedding,
    column_dimensions,
)
from tests.recall_helpers import ApiClient, remember

pytestmark = pytest.mark.django_db


class FakeEmbeddings:
    """An OpenAI-compatible /v1/embeddings server on 127.0.0.1 with switchable failures."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.failures_left = 0
        self.status = 200
        self.delay = 0.0
        self.dimensions: int | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "headers": self.headers, **body})
                time.sleep(fake.delay)
                if fake.failures_left or fake.status != 200:
                    fake.failures_left = max(fake.failures_left - 1, 0)
                    self.send_response(fake.status if fake.status != 200 else 500)
                    self.end_headers()
                    self.wfile.write(b'{"error": "boom"}')
                    return
                size = fake.dimensions or body.get("dimensions") or 384
                vectors = LocalHashEmbedding(size).embed(body["input"])
                data = [
                    {"object": "embedding", "index": i, "embedding": v}
                    for i, v in reversed(list(enumerate(vectors)))
                ]
                payload = json.dumps({"object": "list", "data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeEmbeddings]:
    server = FakeEmbeddings()
    yield server
    server.close()


def openai(fake: FakeEmbeddings, **overrides: Any) -> OpenAIEmbedding:
    options = {
        "base_url": fake.url,
        "api_key": "sk-test",
        "model": "text-embedding-3-small",
        "dimensions": 384,
        "timeout": 5.0,
        "batch_size": 2,
        "max_retries": 2,
        **overrides,
    }
    return OpenAIEmbedding(**options)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_local_provider_is_deterministic_normalised_and_bilingual():
    provider = LocalHashEmbedding(384)
    tea, green_tea, bicycle, chinese_tea, chinese_green_tea = provider.embed(
        ["I drink tea", "green tea drinker", "a red bicycle", "我喜欢喝茶", "喜欢喝绿茶"]
    )

    assert provider.embed(["I drink tea"])[0] == tea
    assert math.isclose(math.sqrt(sum(v * v for v in tea)), 1.0)
    assert cosine(tea, green_tea) > cosine(tea, bicycle)
    assert cosine(chinese_tea, chinese_green_tea) > 0.3


def test_openai_provider_batches_and_authenticates(fake):
    vectors = openai(fake).embed(["one", "two", "three"])

    assert len(vectors) == 3 and all(len(v) == 384 for v in vectors)
    assert vectors[0] == LocalHashEmbedding(384).embed(["one"])[0]  # answers re-ordered by index
    assert [r["input"] for r in fake.requests] == [["one", "two"], ["three"]]
    assert fake.requests[0]["path"] == "/v1/embeddings"
    assert fake.requests[0]["headers"]["Authorization"] == "Bearer sk-test"
    assert fake.requests[0]["model"] == "text-embedding-3-small"
    assert fake.requests[0]["dimensions"] == 384


def test_openai_provider_retries_a_failing_server(fake):
    fake.failures_left = 2

    assert len(openai(fake).embed(["hello"])) == 1
    assert len(fake.requests) == 3


def test_openai_provider_gives_up_on_500(fake):
    fake.status = 500

    with pytest.raises(EmbeddingError, match="HTTP 500"):
        openai(fake).embed(["hello"])
    assert len(fake.requests) == 3  # the first try and two retries


def test_openai_provider_does_not_retry_a_bad_request(fake):
    fake.status = 400

    with pytest.raises(EmbeddingError, match="HTTP 400"):
        openai(fake).embed(["hello"])
    assert len(fake.requests) == 1


def test_openai_provider_times_out_once_for_the_whole_call(fake):
    """The timeout is the call's, retries included: a retry after it would end later."""
    # Seconds enough that a loaded machine's server thread takes the request in time.
    fake.delay = 3.0

    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"timed out after 1 s"):
        openai(fake, timeout=1.0, max_retries=3).embed(["hello"])
    assert time.monotonic() - started < 1.0 + 0.5
    assert len(fake.requests) == 1


def test_openai_provider_retries_end_by_the_deadline(fake):
    """The SDK's backoff (0.5 s, 1 s, 2 s…) is cut short at the deadline, and no retry
    starts after it."""
    fake.status = 503

    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"timed out after 1\.2 s"):
        openai(fake, timeout=1.2, max_retries=10).embed(["hello"])
    assert time.monotonic() - started < 1.2 + 0.3
    assert 2 <= len(fake.requests) <= 3


def test_openai_provider_without_a_key_sends_no_authorization(fake):
    openai(fake, api_key="").embed(["hello"])

    assert "Authorization" not in fake.requests[0]["headers"]
    assert fake.requests[0]["encoding_format"] == "float"


def test_openai_provider_refuses_the_wrong_dimension(fake):
    fake.dimensions = 8

    with pytest.raises(EmbeddingError, match="8 dimensions"):
        openai(fake).embed(["hello"])


def test_sentence_transformers_is_optional():
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(EmbeddingError, match="pip install"):
            SentenceTransformerEmbedding(model="all-MiniLM-L6-v2", dimensions=384).embed(["x"])
    else:
        pytest.skip("sentence-transformers is installed")


def openai_settings(fake: FakeEmbeddings) -> Any:
    return override_settings(
        MEMORY_EMBEDDING_PROVIDER="openai",
        MEMORY_EMBEDDING_BASE_URL=fake.url,
        MEMORY_EMBEDDING_TIMEOUT=0.5,
        MEMORY_EMBEDDING_MAX_RETRIES=0,
    )


@pytest.mark.parametrize("failure", ["500", "timeout", "wrong dimension"])
def test_a_failing_provider_degrades_recall_and_loses_nothing(
    alice, fake, failure, django_capture_on_commit_callbacks
):
    if failure == "500":
        fake.status = 500
    elif failure == "timeout":
        fake.delay = 1.0
    else:
        fake.dimensions = 8
    with openai_settings(fake):
        api = ApiClient(alice)
        # The request succeeds; the embedding job after it fails (a worker would retry it).
        with pytest.raises(EmbeddingError), django_capture_on_commit_callbacks(execute=True):
            created = api.post("/memories", {"content": "Backups run every night at two"})
        assert created.status_code == 201
        memory = Memory.objects.get()
        assert memory.content == "Backups run every night at two"
        assert memory.embedding is None

        preview = api.post("/injection-preview", {"message": "when do backups run?"}).json()

        assert preview["degraded"]["code"] == "EMBEDDING_UNAVAILABLE"
        assert [m["content"] for m in preview["memories"]] == ["Backups run every night at two"]

        # The provider recovers: the memory gets its vector, recall is whole again.
        fake.status, fake.delay, fake.dimensions = 200, 0.0, None
        call_command("embed_memories", verbosity=0)
        memory.refresh_from_db()
        assert memory.embedding_model == "text-embedding-3-small"
        healthy = api.post("/injection-preview", {"message": "when do backups run?"}).json()
        assert healthy["degraded"] is None
        assert healthy["memories"][0]["score_parts"]["vector_rank"] == 1


def test_the_embedding_job_uses_the_configured_provider(
    alice, fake, django_capture_on_commit_callbacks
):
    with openai_settings(fake), django_capture_on_commit_callbacks(execute=True):
        ApiClient(alice).post("/memories", {"content": "Stand-up at 9:30"})

    assert [r["input"] for r in fake.requests] == [["Stand-up at 9:30"]]
    assert Memory.objects.get().embedding_model == "text-embedding-3-small"


def test_dimension_conflict_is_detected_reported_and_fixed(alice):
    kept = remember(alice, "Vacation in August")
    with override_settings(MEMORY_EMBEDDING_DIMENSIONS=16):
        warnings = [m for m in run_checks() if m.id == "memoryapp.W001"]
        assert len(warnings) == 1 and "embed_memories --rebuild" in str(warnings[0].hint)

        preview = injection_preview(alice, PreviewRequest(message="vacation"))
        assert preview["degraded"]["code"] == "EMBEDDING_DIMENSION_CONFLICT"
        assert preview["degraded"]["command"] == "python manage.py embed_memories --rebuild"
        assert [m["id"] for m in preview["memories"]] == [kept.pk]

        health = Client().get("/healthz").json()
        assert health["embeddings"]["code"] == "EMBEDDING_DIMENSION_CONFLICT"
        assert health["embeddings"]["ok"] is False

        added = remember(alice, "Vacation booked at the coast")
        assert added.embedding is None  # the job waits for the fix; the memory is kept

        with pytest.raises(CommandError, match="--rebuild"):
            call_command("embed_memories", verbosity=0)
        call_command("embed_memories", rebuild=True, verbosity=0)

        assert column_dimensions() == 16
        assert all(m.embedding is not None and len(m.embedding) == 16 for m in Memory.objects.all())
        fixed = injection_preview(alice, PreviewRequest(message="vacation"))
        assert fixed["degraded"] is None
        assert len(fixed["memories"]) == 2
