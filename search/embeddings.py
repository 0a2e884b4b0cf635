"""Embedding providers: a batch of texts in, one unit vector per text out.

``auto`` (the default) uses the local ``model2vec`` model (below) when it
loads, and otherwise ``local``, saying why in ``embedding_status()``, the
injection preview's ``degraded`` and the memory page.

``local`` needs no model and no network: it hashes word,
CJK character and character-trigram features into a fixed number of
dimensions and normalises the result, so texts that share words or Chinese
characters are close. It is deterministic across processes and machines.

``openai`` calls any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI,
Ollama, vLLM…) in batches through the ``openai`` SDK, with its retries with
backoff, each batch within a deadline (``core.openai_sdk``).
``sentence-transformers`` runs a local model when that optional extra is
installed (``pip install memoryapp[sentence-transformers]``).
``model2vec`` runs a static multilingual sentence-embedding model on the CPU,
without PyTorch (see Model2VecEmbedding). ``onnx`` runs a transformer sentence-embedding
model (all-MiniLM-L6-v2 by default) through onnxruntime, also without PyTorch
(``search.onnx_embeddings``, an optional extra).

Every provider raises EmbeddingError when it cannot give one vector of the
configured dimension per text; callers degrade to keyword search and keep
the memory (it is embedded later by ``manage.py embed_memories``).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import openai
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import Model, QuerySet

from core.openai_sdk import Endpoint
from search.textsearch import is_stopword, terms

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


def finds_meaning(provider: EmbeddingProvider) -> bool:
    """Whether the provider's vectors find texts that say the same in other words: a model's
    do; the hash embeddings (``local``, and ``auto`` without its model) only find the same
    words and characters again, which the keyword search finds better."""
    return not isinstance(provider, LocalHashEmbedding)


class OpenAIEmbedding:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint, through the ``openai``
    SDK: its retries with backoff (``max_retries``), all within ``timeout`` seconds a batch."""

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
    ):
        self.endpoint = Endpoint(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max(0, max_retries)
        )
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model_name = model
        self.dimensions = dimensions
        self.batch_size = max(1, batch_size)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(list(texts[start : start + self.batch_size])))
        _check_dimensions(vectors, self.dimensions, self.model_name)
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        # OpenAI's text-embedding-3 models shorten their vectors on request; others refuse it.
        shorten = self.model_name.startswith("text-embedding-3")
        try:
            with self.endpoint.call() as client:
                answer = client.embeddings.create(
                    model=self.model_name,
                    input=texts,
                    dimensions=self.dimensions if shorten else openai.omit,
                    # The SDK asks for base64 otherwise, which Ollama and others do not offer.
                    encoding_format="float",
                    extra_headers=self.endpoint.headers,
                )
            rows = sorted(answer.data, key=lambda row: row.index)
            vectors = [[float(value) for value in row.embedding] for row in rows]
        except openai.APITimeoutError as exc:
            raise EmbeddingError(
                f"{self.url} failed: timed out after {self.endpoint.timeout:g} s"
            ) from exc
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"{self.url} failed: HTTP {exc.status_code}") from exc
        except openai.APIConnectionError as exc:
            reason = exc.__cause__ or exc
            raise EmbeddingError(f"{self.url} failed: {reason}") from exc
        except (openai.OpenAIError, AttributeError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"Unexpected answer from {self.url}: {exc!r}") from exc
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.url} returned {len(vectors)} vectors for {len(texts)} texts."
            )
        return vectors


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


# model2vec ------------------------------------------------------------------

DEFAULT_MODEL2VEC_MODEL = "minishlab/potion-multilingual-128M"
# A model2vec directory holds these (model2vec also reads sentence-transformers layouts).
MODEL2VEC_FILES = ("config.json", "model.safetensors", "tokenizer.json")
DOWNLOAD_COMMAND = "python manage.py embed_memories --download"
_CONNECT_TIMEOUT_SECONDS = 3.0


class ModelUnavailable(Exception):
    """The model2vec model cannot be used; the message says why.

    ``missing``: there is no model yet (worth another look later), as opposed to a broken one.
    """

    def __init__(self, reason: str, *, missing: bool = False):
        super().__init__(reason)
        self.missing = missing


class Model2VecEmbedding:
    """A model2vec static model: token vectors averaged, on the CPU, with no PyTorch.

    Why model2vec and potion-multilingual-128M (the default, 256 dimensions): a static
    model embeds a short query in well under a millisecond on one core (a lookup and a
    mean), its only dependencies are numpy, safetensors and tokenizers, and
    potion-multilingual-128M, distilled from bge-m3, is the best multilingual static
    model (about 100 languages, Chinese included). It is ~0.5 GB on disk and in memory
    per process; ``minishlab/potion-base-8M`` (English only, 30 MB) is the small choice.
    Alternatives considered: fastembed's ONNX models (e.g. paraphrase-multilingual-MiniLM,
    multilingual-e5-small) are better on MTEB but need onnxruntime and take 5–20 ms per
    query on 2 cores, over the 10 ms budget; sentence-transformers needs PyTorch.
    """

    def __init__(self, path: Path, *, name: str):
        try:
            from model2vec import StaticModel
        except ImportError as exc:
            raise ModelUnavailable("the model2vec package is not installed") from exc
        try:
            # A local directory: model2vec reads it and never goes to the network.
            self._model = StaticModel.from_pretrained(path, normalize=True)
        except Exception as exc:
            raise ModelUnavailable(f"{path} could not be loaded: {exc}") from exc
        self.path = path
        self.dimensions = int(self._model.dim)
        self.model_name = f"model2vec:{name}"[:200]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(list(texts), use_multiprocessing=False)
        result: list[list[float]] = vectors.astype(float).tolist()
        return result


def model2vec_source() -> tuple[Path, str, bool]:
    """(the model's directory, its name, whether it may be downloaded there)."""
    if settings.MEMORY_EMBEDDING_MODEL_PATH:
        path = Path(settings.MEMORY_EMBEDDING_MODEL_PATH)
        return path, settings.MEMORY_EMBEDDING_MODEL or path.name, False
    repo = settings.MEMORY_EMBEDDING_MODEL or DEFAULT_MODEL2VEC_MODEL
    return Path(settings.MEMORY_EMBEDDING_CACHE_DIR) / repo.replace("/", "--"), repo, True


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def download_model(repo: str, path: Path) -> None:
    """Download ``repo`` from the Hugging Face hub into ``path``, once; fails fast offline."""
    if _offline():
        raise ModelUnavailable(f"{repo} is not downloaded and HF_HUB_OFFLINE is set", missing=True)
    try:
        import huggingface_hub
    except ImportError as exc:
        raise ModelUnavailable("the model2vec package is not installed") from exc
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    proxied = any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY"))
    if not proxied:
        # A quick look first: without a network the hub client would wait for its timeouts.
        port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
        try:
            socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_SECONDS).close()
        except OSError as exc:
            raise ModelUnavailable(
                f"{repo} could not be downloaded: {host} is unreachable ({exc})", missing=True
            ) from exc
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    logger.info("Downloading the embedding model %s into %s (once)", repo, path)
    try:
        huggingface_hub.snapshot_download(
            repo,
            local_dir=partial,
            allow_patterns=[
                *MODEL2VEC_FILES,
                "config_sentence_transformers.json",
                "0_StaticEmbedding/*",
                "modules.json",
                "README.md",
            ],
            etag_timeout=10,
        )
        os.replace(partial, path)
    except Exception as exc:
        raise ModelUnavailable(f"{repo} could not be downloaded: {exc}", missing=True) from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def load_model2vec(*, download: bool = False) -> Model2VecEmbedding:
    """The model2vec model: from MEMORY_EMBEDDING_MODEL_PATH, or from the cache directory
    (downloaded there first when ``download``). Raises ModelUnavailable saying why not."""
    path, name, downloadable = model2vec_source()
    if not path.is_dir():
        if not downloadable:
            raise ModelUnavailable(
                f"MEMORY_EMBEDDING_MODEL_PATH {path} is not a directory", missing=True
            )
        if not download:
            raise ModelUnavailable(
                f"{name} is not downloaded into {path} yet "
                f"(manage.py migrate or embed_memories --download fetches it once)",
                missing=True,
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        download_model(name, path)
    return Model2VecEmbedding(path, name=name)


class FallbackEmbedding(LocalHashEmbedding):
    """The hash embeddings standing in for a model2vec model that ``auto`` could not load."""

    def __init__(self, dimensions: int, unavailable: ModelUnavailable):
        super().__init__(dimensions)
        self.reason = str(unavailable)
        self.missing = unavailable.missing
        self.checked_at = time.monotonic()


class UnavailableEmbedding:
    """A local model (``model2vec``, ``onnx``) chosen explicitly and not loadable: every
    call fails (keyword recall). ``command`` is what makes it available."""

    def __init__(
        self,
        dimensions: int,
        name: str,
        unavailable: ModelUnavailable,
        *,
        provider: str = "model2vec",
        command: str = DOWNLOAD_COMMAND,
    ):
        self.dimensions = dimensions
        self.provider = provider
        self.model_name = f"{provider}:{name}"[:200]
        self.reason = str(unavailable)
        self.missing = unavailable.missing
        self.command = command
        self.checked_at = time.monotonic()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingError(f"the {self.provider} model is unavailable: {self.reason}")


PROVIDERS = ("auto", "local", "model2vec", "onnx", "openai", "sentence-transformers")
# A missing model is looked for again this often (a download by migrate may have landed).
_RECHECK_SECONDS = 60.0
_provider: EmbeddingProvider | None = None
# One thread loads the model (hundreds of MB) while the others of the process wait for it.
_provider_lock = threading.Lock()


def _make_provider() -> EmbeddingProvider:
    name = settings.MEMORY_EMBEDDING_PROVIDER
    dimensions = settings.MEMORY_EMBEDDING_DIMENSIONS
    if name in ("auto", "model2vec"):
        try:
            return load_model2vec()
        except ModelUnavailable as exc:
            if name == "auto":
                logger.warning("Embedding model not used, local hash embeddings instead: %s", exc)
                return FallbackEmbedding(dimensions, exc)
            logger.error("The model2vec embedding model is unavailable: %s", exc)
            return UnavailableEmbedding(dimensions, model2vec_source()[1], exc)
    if name == "local":
        return LocalHashEmbedding(dimensions)
    if name == "onnx":
        from search import onnx_embeddings

        try:
            return onnx_embeddings.load_onnx()
        except ModelUnavailable as exc:
            logger.error("The ONNX embedding model is unavailable: %s", exc)
            return UnavailableEmbedding(
                dimensions,
                settings.MEMORY_EMBEDDING_MODEL or "model",
                exc,
                provider="onnx",
                command=onnx_embeddings.INSTALL_COMMAND,
            )
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


def get_provider() -> EmbeddingProvider:
    """The provider the settings choose (MEMORY_EMBEDDING_PROVIDER), made once per process.

    A model2vec model that was missing is looked for again every minute, so a process
    started before ``migrate`` downloaded it picks it up."""
    global _provider, _conflict_cache
    provider = _provider
    if provider is None:
        with _provider_lock:
            provider = _provider
            if provider is None:
                provider = _provider = _make_provider()
    elif (
        isinstance(provider, FallbackEmbedding | UnavailableEmbedding)
        and provider.missing
        and time.monotonic() - provider.checked_at > _RECHECK_SECONDS
    ):
        fresh = _make_provider()
        if type(fresh) is type(provider):
            provider.checked_at = time.monotonic()  # still missing: keep the same object
        else:
            provider = _provider = fresh
            _conflict_cache = None
    return provider


def download_if_missing() -> bool:
    """Fetch the model2vec model into the cache directory when auto or model2vec wants it
    and it is not there yet. True when it was downloaded (the provider must be made again)."""
    if settings.MEMORY_EMBEDDING_PROVIDER not in ("auto", "model2vec"):
        return False
    path, _name, downloadable = model2vec_source()
    if not downloadable or path.is_dir():
        return False
    try:
        load_model2vec(download=True)
    except ModelUnavailable as exc:
        logger.warning("The embedding model was not downloaded: %s", exc)
        return False
    reset_caches()
    return True


def provider_in_use(provider: EmbeddingProvider) -> str:
    """Which implementation answers: "model2vec", "local", "openai"… ("none" if unavailable)."""
    from search.onnx_embeddings import OnnxEmbedding

    if isinstance(provider, UnavailableEmbedding):
        return "none"
    return {
        OnnxEmbedding: "onnx",
        Model2VecEmbedding: "model2vec",
        OpenAIEmbedding: "openai",
        SentenceTransformerEmbedding: "sentence-transformers",
    }.get(type(provider), "local")


def fallback_reason() -> str | None:
    """Why ``auto`` runs on the hash embeddings instead of the model, or None."""
    provider = get_provider()
    return provider.reason if isinstance(provider, FallbackEmbedding) else None


def fallback_degraded() -> dict[str, str] | None:
    """The injection preview's ``degraded`` when recall runs on the fallback (same shape as
    retrieval's Degraded)."""
    reason = fallback_reason()
    if reason is None:
        return None
    provider = get_provider()
    missing = getattr(provider, "missing", False)
    downloadable = missing and not settings.MEMORY_EMBEDDING_MODEL_PATH
    # Not the reason itself: it names the server's folders; staff read it at /healthz.
    why = "it is not downloaded yet" if missing else "it could not be loaded"
    return {
        "code": "EMBEDDING_FALLBACK",
        "message": f"The embedding model is not used ({why}; /healthz tells staff more); "
        "recall ranks by meaning with the simpler local hash embeddings.",
        "command": DOWNLOAD_COMMAND if downloadable else "",
    }


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
    global _conflict_cache, _provider
    _conflict_cache = None
    _provider = None


def embedding_status() -> dict[str, Any]:
    """What /healthz and the API report about embeddings."""
    provider = get_provider()
    stored = column_dimensions()
    status: dict[str, Any] = {
        "ok": True,
        "provider": settings.MEMORY_EMBEDDING_PROVIDER,
        # What answers: with auto, "model2vec" or (when the model cannot be used) "local".
        "in_use": provider_in_use(provider),
        "fallback_reason": fallback_reason(),
        "model": provider.model_name,
        "dimensions": provider.dimensions,
        "stored_dimensions": stored,
        # Waiting for the embedding job (or embed_memories); counted up to a bound to stay cheap.
        "missing": EMBEDDED_TABLES["memories"]
        .missing(provider.model_name)
        .values("pk")[:MISSING_COUNT_BOUND]
        .count(),
    }
    if isinstance(provider, UnavailableEmbedding):
        status.update(
            ok=False, code="EMBEDDING_UNAVAILABLE", error=provider.reason, command=provider.command
        )
    elif stored is not None and stored != provider.dimensions:
        status.update(
            ok=False,
            code="EMBEDDING_DIMENSION_CONFLICT",
            error=dimension_conflict_message(provider.dimensions, stored),
            command=FIX_COMMAND,
        )
    return status


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{value:.7g}" for value in vector) + "]"


def store_embeddings(
    rows: Sequence[tuple[int, str]],
    provider: EmbeddingProvider,
    *,
    table: str = "memoryapp_memory",
    unchanged_column: str | None = "content",
) -> int:
    """Embed ``(id, text)`` rows of ``table`` (memories by default) and store the vectors in
    one UPDATE.

    With ``unchanged_column``, rows whose column no longer holds the text embedded are left
    alone: a memory edited meanwhile enqueued its own job. (A message's text never changes.)
    Bookkeeping, not a change with an event (see ``services``' docstring).
    """
    if not rows:
        return 0
    vectors = provider.embed([content for _id, content in rows])
    unchanged = (
        f" AND m.{connection.ops.quote_name(unchanged_column)} = v.content"
        if unchanged_column
        else ""
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {connection.ops.quote_name(table)} AS m "
            "SET embedding = v.embedding::vector, embedding_model = %s "
            "FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, content, embedding) "
            f"WHERE m.id = v.id{unchanged}",
            [
                provider.model_name,
                [row_id for row_id, _content in rows],
                [content for _id, content in rows],
                [vector_literal(vector) for vector in vectors],
            ],
        )
        return cursor.rowcount


@dataclass(frozen=True)
class EmbeddedTable:
    """A table whose rows carry an ``embedding`` (of the stored dimension) and the
    ``embedding_model`` that made it: memories, and the apps' others (messages), each
    registered by its app (``register_embedded``) so that ``embed_memories`` and a change of
    dimension cover them all."""

    label: str
    model: type[Model]
    # The rows that are embedded (a temporary conversation's messages are not).
    embeddable: Callable[[], QuerySet[Any, Any]]
    # (id, text to embed) of these ids, in id order.
    texts: Callable[[Sequence[int]], list[tuple[int, str]]]
    unchanged_column: str | None = None

    @property
    def table(self) -> str:
        return str(self.model._meta.db_table)

    def missing(self, model_name: str) -> QuerySet[Any, Any]:
        """The embeddable rows without a vector of ``model_name``."""
        return self.embeddable().exclude(embedding_model=model_name)

    def pending_ids(self, model_name: str | None) -> list[int]:
        """The ids to embed: every one (None), or those without a vector of ``model_name``."""
        rows = self.embeddable() if model_name is None else self.missing(model_name)
        return list(rows.order_by("id").values_list("id", flat=True))

    def store(self, ids: Sequence[int], provider: EmbeddingProvider) -> int:
        return store_embeddings(
            self.texts(ids), provider, table=self.table, unchanged_column=self.unchanged_column
        )


EMBEDDED_TABLES: dict[str, EmbeddedTable] = {}


def register_embedded(table: EmbeddedTable) -> None:
    EMBEDDED_TABLES[table.label] = table
