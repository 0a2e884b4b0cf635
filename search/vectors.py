"""Vector search: the nearest rows of a pool to a query's embedding, exactly or through HNSW."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from core.fast_timestamps import read_timestamps_in_c
from search.buckets import ALL_BUCKETS
from search.embeddings import (
    FIX_COMMAND,
    EmbeddingError,
    dimension_conflict,
    get_provider,
    vector_literal,
)
from search.table_statistics import _embedded_key, estimated_rows, table_statistics

# Candidate sets up to this size are ranked by exact vector distance; larger ones use HNSW.
EXACT_VECTOR_LIMIT = 20_000
# The planner's estimate alone sends a candidate set this many times the limit to HNSW.
CLEARLY_LARGE = 2
# pgvector's largest hnsw.ef_search.
MAX_EF_SEARCH = 1000
# Through HNSW about this many of the caller's nearest memories are fetched (fusion only
# needs the top of each list), with this margin on their expected share of the index's rows.
# HNSW is approximate: on the benchmark's data (a user's 100,000 memories, 212,000 vectors
# in their bucket) 40 finds 62% of the exact top 10, 20 only 51%.
HNSW_EXPECTED_HITS = 40
HNSW_SAFETY = 1.25


@dataclass
class Degraded:
    code: str
    message: str
    command: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "command": self.command}


def embedded_with(memories: QuerySet[Any, Any], model_name: str) -> QuerySet[Any, Any]:
    return memories.filter(embedding_model=model_name, embedding__isnull=False)


def vector_plan(
    embedded: QuerySet[Any, Any],
    exact_limit: int | None = None,
    key: tuple[str, str] | None = None,
) -> tuple[str, int]:
    """("exact", size) for a small candidate set, ("hnsw", an estimate of its size) otherwise.

    The planner's estimate decides first: counting a big user's candidates
    costs more than ranking them. A set it guesses small is ranked exactly,
    which is right whatever its true size (only slower if the guess was far
    too low). One it guesses a little over the limit is counted (up to the
    limit), so a small user is never sent to the index. ``exact_limit``: the limit
    (EXACT_VECTOR_LIMIT by default). ``key``: the estimate's cache key, if known.
    """
    if exact_limit is None:
        exact_limit = EXACT_VECTOR_LIMIT
    estimate = estimated_rows(embedded.values("pk"), key)
    if estimate <= exact_limit:
        return "exact", estimate
    if estimate > CLEARLY_LARGE * exact_limit:
        return "hnsw", estimate
    size = embedded.values("pk")[: exact_limit + 1].count()
    return ("exact" if size <= exact_limit else "hnsw"), max(size, estimate)


def exact_nearest_sql(
    embedded: QuerySet[Any, Any], vector: Sequence[float], limit: int
) -> tuple[str, list[Any]]:
    """Exact cosine ranking. ``OFFSET 0`` keeps the planner off the HNSW index, which
    would filter too late; unlike a materialized CTE it streams the candidates instead of
    copying every vector into a temporary store (3x slower for 10,000 vectors)."""
    sql, params = embedded.values("id", "embedding").query.sql_with_params()
    return (
        "SELECT id, distance FROM ("
        f"SELECT id, embedding <=> %s::vector AS distance FROM ({sql}) AS candidate OFFSET 0"
        ") AS nearest ORDER BY distance, id LIMIT %s",
        [vector_literal(vector), *params, limit],
    )


def hnsw_ef_search(limit: int, size: int, buckets: Sequence[int], table: str) -> int:
    """Enough of the nearest rows of the ``buckets``' indexes that HNSW_EXPECTED_HITS of them are likely among the ``size`` candidates, and at least
    ``limit``: the cost grows with it. HNSW_EXPECTED_HITS however small ``limit``: fewer find
    fewer of the true nearest."""
    index_rows = table_statistics(table).index_rows(buckets)
    return min(
        MAX_EF_SEARCH,
        max(
            limit,
            HNSW_EXPECTED_HITS,
            math.ceil(HNSW_SAFETY * HNSW_EXPECTED_HITS * index_rows / size),
        ),
    )


def hnsw_reaches(size: int, buckets: Sequence[int], table: str) -> bool:
    """Whether MAX_EF_SEARCH is enough for HNSW to find the nearest of ``size`` candidates
    among the indexes' rows (see ``hnsw_ef_search``)."""
    index_rows = table_statistics(table).index_rows(buckets)
    return HNSW_SAFETY * HNSW_EXPECTED_HITS * index_rows / max(size, 1) <= MAX_EF_SEARCH


def hnsw_nearest_sql(
    embedded: QuerySet[Any, Any], vector: Sequence[float], limit: int, bucket: int
) -> tuple[str, list[Any]]:
    """Nearest through the HNSW index of ``bucket``; run with ``hnsw.ef_search`` raised
    (``run_with_width`` sends both in one round trip)."""
    sql, params = (
        embedded.filter(vector_bucket=bucket).values("id", "embedding").query.sql_with_params()
    )
    return (
        "SELECT id, embedding <=> %s::vector AS distance "
        f"FROM ({sql}) AS candidate ORDER BY distance LIMIT %s",
        [vector_literal(vector), *params, limit],
    )


def set_ef_search(value: int) -> None:
    """For the current transaction only."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {int(value)}")


@dataclass(frozen=True)
class VectorSearch:
    """The SQL of (id, cosine distance) of the nearest rows, nearest first (ties by id), and
    the ``hnsw.ef_search`` it is run with (None: exact ranking, no index)."""

    sql: str
    params: list[Any]
    ef_search: int | None

    @property
    def plan(self) -> str:
        return "exact" if self.ef_search is None else "hnsw"

    def hits(self) -> list[tuple[int, float]]:
        """(id, cosine similarity) of the nearest, best first."""
        rows = run_with_width(self.sql, self.params, self.ef_search)
        return [(memory_id, 1.0 - float(distance)) for memory_id, distance in rows]


def vector_search(
    memories: QuerySet[Any, Any],
    vector: Sequence[float],
    model_name: str,
    limit: int,
    buckets: Sequence[int] = ALL_BUCKETS,
    exact_limit: int | None = None,
    key: tuple[str, str] | None = None,
) -> VectorSearch:
    """How to find the ``limit`` nearest of ``memories`` to ``vector``.

    ``buckets``: those of the pools ``memories`` may come from (``pool_buckets``: each row
    has its pool's ``vector_bucket``, a message its owner's). ``exact_limit``: a lower limit
    than EXACT_VECTOR_LIMIT for exact ranking, over which HNSW is used only where it reaches
    enough of the candidates (``hnsw_reaches``), exact ranking still otherwise. ``key``:
    ``memories``' ``PoolRows.key``, if known."""
    embedded = embedded_with(memories, model_name)
    table = memories.model._meta.db_table
    estimate_key = _embedded_key(key, model_name) if key else None
    if exact_limit is None:
        plan, size = vector_plan(embedded, key=estimate_key)
    else:
        plan, size = vector_plan(embedded, exact_limit, estimate_key)
        if plan == "hnsw" and size <= EXACT_VECTOR_LIMIT:
            plan = "hnsw" if hnsw_reaches(size, buckets, table) else "exact"
    if plan == "exact":
        return VectorSearch(*exact_nearest_sql(embedded, vector, limit), None)
    searches = [hnsw_nearest_sql(embedded, vector, limit, bucket) for bucket in buckets]
    return VectorSearch(
        "SELECT id, distance FROM ("
        + " UNION ALL ".join(f"({sql})" for sql, _params in searches)
        + ") AS bucket_hits ORDER BY distance, id LIMIT %s",
        [*(param for _sql, params in searches for param in params), limit],
        hnsw_ef_search(limit, size, buckets, table),
    )


def run_with_width(sql: str, params: Sequence[Any], ef_search: int | None) -> list[tuple[Any, ...]]:
    """The rows of ``sql``, with ``hnsw.ef_search`` set for it first (None: as it is).

    The statements of one query string run as one transaction, so the search width set
    first holds for the statement after it: no BEGIN and COMMIT of their own."""
    with connection.cursor() as cursor:
        read_timestamps_in_c(cursor)
        if ef_search is None:
            cursor.execute(sql, params)
            return cursor.fetchall()
        cursor.execute(
            f"SELECT set_config('hnsw.ef_search', %s, true);\n{sql}", [str(ef_search), *params]
        )
        cursor.nextset()
        return cursor.fetchall()


# The latest queries' vectors by the provider in use (another provider empties it): a
# preview searches memories and past turns with the same query.
_query_vectors: tuple[object, dict[str, list[float]]] = (None, {})
MAX_CACHED_VECTORS = 64


def stored_vectors_unusable() -> Degraded | None:
    """Why no stored vector can be searched (their dimension is not the provider's), if so."""
    if conflict := dimension_conflict():
        return Degraded("EMBEDDING_DIMENSION_CONFLICT", conflict, FIX_COMMAND)
    return None


def embed_query(text: str) -> tuple[list[float] | None, Degraded | None]:
    global _query_vectors
    if unusable := stored_vectors_unusable():
        return None, unusable
    provider = get_provider()
    owner, vectors = _query_vectors
    if owner is not provider:
        vectors = {}
        _query_vectors = (provider, vectors)
    if (cached := vectors.get(text)) is not None:
        return cached, None
    try:
        vector = provider.embed([text])[0]
        if len(vectors) >= MAX_CACHED_VECTORS:
            vectors.clear()
        vectors[text] = vector
        return vector, None
    except EmbeddingError as exc:
        return None, Degraded(
            "EMBEDDING_UNAVAILABLE", f"Vector search is unavailable ({exc}); keyword search only."
        )
