"""Embedding providers: a batch of texts in, one unit vector per text out.

``local`` (the default) needs no model and no network: it hashes word,
CJK character and character-trigram features into a fixed number of
dimensions and normalises the result, so texts that share words or Chinese
characters are close. It is deterministic across processes and machines.

``openai`` calls any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI,
Ollama, vLLM…) in batches, with a timeout and retries with backoff.
``sentence-transformers`` runs a local model when that optional extra is
installed (``pip install memoryapp[sentence-transformers]``).

Every provider raises EmbeddingError when it cannot give one vector of the
configured dimension per text; callers degrade to keyword search and keep
the memory (it is embedded later by ``manage.py embed_memories``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from memories.textsearch import is_stopword, terms

logger = logging.getLogger(__name__)


class EmbeddingProvider(Protocol):
    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbeddingError(Exception):
    """The provider gave no usable vectors (unreachable, failing, or the wrong dimension)."""


_LATIN_WORD = re.compile(r"^[^\W\d_]+$")
_ENGLISH_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    for suffix in _ENGLISH_SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _features(text: str) -> list[tuple[str, float]]:
    """Stopwords of both languages are left out: they would make every short text near
    every other (``textsearch.is_stopword``)."""
    features: list[tuple[str, float]] = []
    for term in terms(text):
        if is_stopword(term):
            continue
        if _LATIN_WORD.match(term) and term.isascii():
            stem = _stem(term)
            features.append(("w:" + stem, 1.0))
            padded = f"<{stem}>"
            features.extend(("t:" + padded[i : i + 3], 0.35) for i in range(len(padded) - 2))
        else:
            # CJK bigrams (and digits, other scripts) as they come, plus their characters.
            features.append(("w:" + term, 1.0))
            if len(term) == 2 and not term.isascii():
                features.extend(("c:" + char, 0.5) for char in term)
    return features


class LocalHashEmbedding:
    def __init__(self, dimensions: int):
        self.dimensions = dimensions
        self.model_name = f"local-hash-v1-{dimensions}"

    def unnormalised(self, text: str) -> list[float]:
        """The summed feature vector: additive over space-separated words (benchmarks use it)."""
        vector = [0.0] * self.dimensions
        for feature, weight in _features(text):
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[index] += sign * weight
        return vector

    def _vector(self, text: str) -> list[float]:
        vector = self.unnormalised(text)
        norm = math.sqrt(sum(value * value for value in vector))
        return [value / norm for value in vector] if norm else vector

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]


def _check_dimensions(vectors: list[list[float]], dimensions: int, model_name: str) -> None:
    for vector in vectors:
        if len(vector) != dimensions:
            raise EmbeddingError(
                f"{model_name} returned {len(vector)} dimensions, "
                f"MEMORY_EMBEDDING_DIMENSIONS is {dimensions}."
            )


# Statuses worth another try: rate limited, or the server failing for a moment.
_RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}


class OpenAIEmbedding:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        dimensions: int,
        timeout: float,
        batch_size: int,
        max_retries: int,
        backoff_seconds: float = 0.5,
    ):
        self.url = base_url.rstrip("/") + "/embeddings"
        self.api_key = api_key
        self.model_name = model
        self.dimensions = dimensions
        self.timeout = timeout
        self.batch_size = max(1, batch_size)
        self.max_retries = max(0, max_retries)
        self.backoff_seconds = backoff_seconds

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(list(texts[start : start + self.batch_size])))
        _check_dimensions(vectors, self.dimensions, self.model_name)
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model_name, "input": texts}
        # OpenAI's text-embedding-3 models shorten their vectors on request; others refuse it.
        if self.model_name.startswith("text-embedding-3"):
            body["dimensions"] = self.dimensions
        payload = self._post(body)
        try:
            rows = sorted(payload["data"], key=lambda row: row["index"])
            vectors = [[float(value) for value in row["embedding"]] for row in rows]
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"Unexpected answer from {self.url}: {exc!r}") from exc
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.url} returned {len(vectors)} vectors for {len(texts)} texts."
            )
        return vectors

    def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode()
        last_error = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_seconds * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                last_error = f"HTTP {exc.code}"
                if exc.code not in _RETRY_STATUSES:
                    break
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                last_error = str(getattr(exc, "reason", exc)) or type(exc).__name__
            except ValueError as exc:
                raise EmbeddingError(f"{self.url} did not answer JSON.") from exc
            logger.warning("Embedding request to %s failed (%s)", self.url, last_error)
        raise EmbeddingError(f"{self.url} failed: {last_error}")


class SentenceTransformerEmbedding:
    """A local sentence-transformers model (the optional extra), loaded on first use."""

    def __init__(self, *, model: str, dimensions: int):
        self.model_name = model
        self.dimensions = dimensions
        self._model: Any = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EmbeddingError(
                    "sentence-transformers is not installed: "
                    "pip install 'memoryapp[sentence-transformers]'"
                ) from exc
            self._model = SentenceTransformer(self.model_name)
        vectors = self._model.encode(list(texts), normalize_embeddings=True)
        result = [[float(value) for value in vector] for vector in vectors]
        _check_dimensions(result, self.dimensions, self.model_name)
        return result


PROVIDERS = ("local", "openai", "sentence-transformers")


@lru_cache(maxsize=1)
def get_provider() -> EmbeddingProvider:
    """The provider the settings choose (MEMORY_EMBEDDING_PROVIDER)."""
    name = settings.MEMORY_EMBEDDING_PROVIDER
    dimensions = settings.MEMORY_EMBEDDING_DIMENSIONS
    if name == "local":
        return LocalHashEmbedding(dimensions)
    if name == "openai":
        return OpenAIEmbedding(
            base_url=settings.MEMORY_EMBEDDING_BASE_URL,
            api_key=settings.MEMORY_EMBEDDING_API_KEY,
            model=settings.MEMORY_EMBEDDING_MODEL or "text-embedding-3-small",
            dimensions=dimensions,
            timeout=settings.MEMORY_EMBEDDING_TIMEOUT,
            batch_size=settings.MEMORY_EMBEDDING_BATCH_SIZE,
            max_retries=settings.MEMORY_EMBEDDING_MAX_RETRIES,
        )
    if name == "sentence-transformers":
        return SentenceTransformerEmbedding(
            model=settings.MEMORY_EMBEDDING_MODEL or "sentence-transformers/all-MiniLM-L6-v2",
            dimensions=dimensions,
        )
    raise ImproperlyConfigured(
        f"Unknown MEMORY_EMBEDDING_PROVIDER {name!r}; use one of {', '.join(PROVIDERS)}."
    )


# Stored vectors ------------------------------------------------------------

FIX_COMMAND = "python manage.py embed_memories --rebuild"
MISSING_COUNT_BOUND = 10_000
_CONFLICT_CACHE_SECONDS = 30.0
_conflict_cache: tuple[float, str | None] | None = None


def column_dimensions() -> int | None:
    """The dimension of the ``embedding`` column in the database (None before migrate)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = to_regclass('memoryapp_memory') AND attname = 'embedding'"
        )
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] > 0 else None


def dimension_conflict_message(configured: int, stored: int) -> str:
    return (
        f"The embedding model gives {configured} dimensions but the database stores {stored}; "
        f"recall uses keyword search only until you run: {FIX_COMMAND}"
    )


def dimension_conflict() -> str | None:
    """Why vectors cannot be used now, or None. Asked on every recall, so cached briefly."""
    global _conflict_cache
    now = time.monotonic()
    if _conflict_cache is not None and now - _conflict_cache[0] < _CONFLICT_CACHE_SECONDS:
        return _conflict_cache[1]
    stored = column_dimensions()
    configured = get_provider().dimensions
    message = (
        dimension_conflict_message(configured, stored)
        if stored is not None and stored != configured
        else None
    )
    _conflict_cache = (now, message)
    return message


def reset_caches(**kwargs: Any) -> None:
    """Forget the provider and the conflict check (settings changed, or the column did)."""
    global _conflict_cache
    _conflict_cache = None
    get_provider.cache_clear()


def embedding_status() -> dict[str, Any]:
    """What /healthz and the API report about embeddings."""
    from memories.models import Memory

    provider = get_provider()
    stored = column_dimensions()
    status: dict[str, Any] = {
        "ok": True,
        "provider": settings.MEMORY_EMBEDDING_PROVIDER,
        "model": provider.model_name,
        "dimensions": provider.dimensions,
        "stored_dimensions": stored,
        # Waiting for the embedding job (or embed_memories); counted up to a bound to stay cheap.
        "missing": Memory.objects.alive()
        .exclude(embedding_model=provider.model_name)
        .values("pk")[:MISSING_COUNT_BOUND]
        .count(),
    }
    if stored is not None and stored != provider.dimensions:
        status.update(
            ok=False,
            code="EMBEDDING_DIMENSION_CONFLICT",
            error=dimension_conflict_message(provider.dimensions, stored),
            command=FIX_COMMAND,
        )
    return status


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{value:.7g}" for value in vector) + "]"


def store_embeddings(rows: Sequence[tuple[int, str]], provider: EmbeddingProvider) -> int:
    """Embed ``(memory id, content)`` rows and store the vectors in one UPDATE.

    Rows whose content changed meanwhile are left alone: the edit enqueued its own job.
    Bookkeeping, not a change with an event (see ``services``' docstring).
    """
    if not rows:
        return 0
    vectors = provider.embed([content for _id, content in rows])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memoryapp_memory AS m SET embedding = v.embedding::vector, embedding_model = %s "
            "FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, content, embedding) "
            "WHERE m.id = v.id AND m.content = v.content",
            [
                provider.model_name,
                [memory_id for memory_id, _content in rows],
                [content for _id, content in rows],
                [vector_literal(vector) for vector in vectors],
            ],
        )
        return cursor.rowcount
