"""The hybrid search: keyword and vector lists of one pool in one statement, and their fusion."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db.models import QuerySet

from search.buckets import ALL_BUCKETS
from search.embeddings import finds_meaning, get_provider
from search.keyword import keyword_sql
from search.table_statistics import pool_rows
from search.vectors import (
    Degraded,
    VectorSearch,
    embed_query,
    run_with_width,
    stored_vectors_unusable,
    vector_search,
)

RRF_K = 60

# Reciprocal rank fusion's weight of each list: BM25 over words is the better ranking, the
# vector list adds what is said in other words (set on benchmarks/conversation_memory.py).
KEYWORD_WEIGHT = 1.0
VECTOR_WEIGHT = 0.5


# What a search statement returns by default: each row found, with its BM25 score (None: no
# keyword match), its cosine distance (None: not among the nearest) and whether the caller
# wanted it whatever the query (``prepare_search``'s ``also``). A caller's own ``rows_sql`` reads the
# same ``found`` and may add columns after these four (``found.*``).
FOUND_ROWS = "SELECT * FROM found"
_NOTHING = "SELECT NULL::bigint AS id, NULL::float8 AS score WHERE false"


@dataclass
class Ranking:
    """The fused matches of a query: {id: match parts}, how the search went, and the columns
    the search's ``rows_sql`` added for each row it found (by id)."""

    matches: dict[int, dict[str, Any]]
    degraded: Degraded | None
    timings_ms: dict[str, float]
    rows: dict[int, tuple[Any, ...]] = field(default_factory=dict)


def vector_weight(weight: float) -> float:
    """``weight`` for the vector list in a fusion that ranks by relevance (the injection
    preview), or 0 when the vectors in use do not find meaning (``embeddings.finds_meaning``):
    on the dev file they only pushed the keyword search's best matches down (evidence
    recall@10 of past turns 0.629 with them at 0.5, 0.656 at 0)."""
    return weight if finds_meaning(get_provider()) else 0.0


def prepare_search(
    memories: QuerySet[Any, Any],
    text: str,
    *,
    depth: int,
    mode: str = "hybrid",
    access: Sequence[str] = (),
    buckets: Sequence[int] = ALL_BUCKETS,
    weights: tuple[float, float] = (KEYWORD_WEIGHT, VECTOR_WEIGHT),
    max_match_rows: int | None = None,
    exact_vector_limit: int | None = None,
    rows_sql: str = FOUND_ROWS,
    also: QuerySet[Any, Any] | None = None,
    keyword_text: str | None = None,
) -> PreparedSearch:
    """The search of ``memories`` by keyword and by vector (as ``mode`` says), whose ``run``
    fuses the lists.

    ``access``: the searching user's access_lexemes (faster keyword search for a large user);
    ``buckets``: the vector buckets of their memories (``pool_buckets``). Any table with
    ``search_vector``, ``embedding``, ``embedding_model`` and ``vector_bucket`` columns is
    searched the same way: messages are (recall.episodes).
    ``weights``: of the keyword and the vector list in the fusion. ``max_match_rows``: at
    most this many rows (as statistics tell) for BM25 to score, whatever the table's size.
    ``exact_vector_limit``: as ``vector_search``'s ``exact_limit``. ``keyword_text``: what the
    keyword search looks for, when not all of ``text`` (``ranking.QueryIntent.words``).

    Both searches are one statement, one round trip: the caller reads what it needs of the
    rows found in the same statement (``rows_sql``, a query of ``found``: FOUND_ROWS's
    columns first), and rows it wants whatever the query (``also``: a queryset of their ids)
    come with them, unranked. ``Ranking.rows``: those columns of the matches and of the rows
    wanted. Made on the caller's connection, the statement may run on another (``run``):
    the injection preview searches memories and past turns side by side on two connections,
    which on 2 cores beat four searches on four connections
    (benchmarks/recall_speed.py --scale 1 --messages 1000000)."""
    started = time.perf_counter()
    rows = pool_rows(memories)
    key = rows.key
    keyword = None
    if mode != "vector":
        keyword = keyword_sql(
            memories,
            text if keyword_text is None else keyword_text,
            depth,
            access,
            max_rows=max_match_rows,
            rows=rows,
        )
    vector, degraded = None, None
    if weights[1] == 0 and mode == "hybrid":
        # A list that does not count is not searched; a conflict is still said.
        mode, degraded = "keyword", stored_vectors_unusable()
    if mode != "keyword" and text.strip():
        query_vector, degraded = embed_query(text)
        if query_vector is not None:
            vector = vector_search(
                memories,
                query_vector,
                get_provider().model_name,
                depth,
                buckets,
                exact_vector_limit,
                key,
            )
    also_sql = _ids_sql(also)
    statement = (
        search_sql(keyword, vector, also_sql, rows_sql) if keyword or vector or also_sql else None
    )
    return PreparedSearch(
        statement,
        vector.ef_search if vector else None,
        keyword=mode != "vector",
        vector=mode != "keyword" and degraded is None,
        degraded=degraded,
        weights=weights,
        started=started,
    )


@dataclass(frozen=True)
class PreparedSearch:
    """A search's statement (None: nothing to search), and how to fuse what it finds."""

    statement: tuple[str, list[Any]] | None
    ef_search: int | None
    # Which lists were searched (the vector list only when vectors could be used).
    keyword: bool
    vector: bool
    degraded: Degraded | None
    weights: tuple[float, float]
    started: float

    def run(self) -> Ranking:
        """Run the statement (on the current thread's connection) and fuse the lists."""
        rows = run_with_width(*self.statement, self.ef_search) if self.statement else []
        minimum = settings.MEMORY_RECALL_MIN_SIMILARITY
        keyword_list = sorted(
            ((row[0], float(row[1])) for row in rows if row[1] is not None),
            key=lambda hit: (-hit[1], hit[0]),
        )
        vector_list = [
            (row[0], 1.0 - float(row[2]))
            for row in sorted((row for row in rows if row[2] is not None), key=_by_distance)
            if 1.0 - float(row[2]) >= minimum
        ]
        ranking = fused(
            keyword_list if self.keyword else None,
            vector_list if self.vector else None,
            self.weights,
            self.degraded,
            {"search_ms": ms_since(self.started)},
        )
        ranking.rows = {row[0]: row[4:] for row in rows if row[3] or row[0] in ranking.matches}
        return ranking


def _by_distance(row: tuple[Any, ...]) -> tuple[float, int]:
    return (row[2], row[0])


def _ids_sql(ids: QuerySet[Any, Any] | None) -> tuple[str, list[Any]] | None:
    if ids is None:
        return None
    try:
        sql, params = ids.query.sql_with_params()
    except EmptyResultSet:  # A pool that can hold nothing.
        return None
    return sql, list(params)


def search_sql(
    keyword: tuple[str, list[Any]] | None,
    vector: VectorSearch | None,
    also: tuple[str, list[Any]] | None,
    rows_sql: str,
) -> tuple[str, list[Any]]:
    """One statement of the keyword search (``keyword_sql``), the vector search
    (``vector_search``) and the ids ``also`` wanted: ``rows_sql`` reads ``found``, each row
    of any of them with its BM25 score and its distance (None where a search did not find
    it). Each search is MATERIALIZED: planned and run on its own, as alone."""
    keyword_part, keyword_params = keyword or (_NOTHING, [])
    vector_part, vector_params = (vector.sql, vector.params) if vector else (_NOTHING, [])
    also_part, also_params = also or ("SELECT NULL::bigint AS id WHERE false", [])
    return (
        f"WITH keyword (id, score) AS MATERIALIZED ({keyword_part}), "
        f"nearest (id, distance) AS MATERIALIZED ({vector_part}), "
        f"also (id) AS MATERIALIZED ({also_part}), "
        "found AS (SELECT id, keyword.score AS keyword_score, nearest.distance, "
        "also.id IS NOT NULL AS wanted "
        "FROM keyword FULL JOIN nearest USING (id) FULL JOIN also USING (id)) "
        f"{rows_sql}",
        [*keyword_params, *vector_params, *also_params],
    )


def fused(
    keyword: list[tuple[int, float]] | None,
    vector: list[tuple[int, float]] | None,
    weights: tuple[float, float],
    degraded: Degraded | None = None,
    timings: dict[str, float] | None = None,
) -> Ranking:
    """The ranking of the lists searched (None: not searched, or vectors unusable): the
    keyword list (id, BM25 score) and the vector list (id, similarity), each best first,
    weighed in the fusion by ``weights``."""
    searched = [
        (hits, weight)
        for hits, weight in zip((keyword, vector), weights, strict=True)
        if hits is not None
    ]
    # Normalised so that a memory ranked first by every list searched has relevance 1.
    best = (sum(weight for _hits, weight in searched) or 1.0) / (RRF_K + 1)
    keyword_rank = {memory_id: n for n, (memory_id, _) in enumerate(keyword or (), start=1)}
    vector_rank = {memory_id: n for n, (memory_id, _) in enumerate(vector or (), start=1)}
    similarity = dict(vector or ())
    fused_values = fuse(
        [[memory_id for memory_id, _score in hits] for hits, _weight in searched],
        [weight for _hits, weight in searched],
    )
    matches = {
        memory_id: {
            "relevance": min(1.0, value / best),
            "keyword_rank": keyword_rank.get(memory_id),
            "vector_rank": vector_rank.get(memory_id),
            "similarity": round(similarity[memory_id], 6) if memory_id in similarity else None,
        }
        for memory_id, value in fused_values.items()
    }
    return Ranking(matches, degraded, timings or {})


def fuse(
    ranked_lists: Iterable[Sequence[int]], weights: Sequence[float] | None = None
) -> dict[int, float]:
    """Reciprocal rank fusion: each list adds weight / (RRF_K + rank) for the ids it ranks
    (weight 1 unless ``weights`` says)."""
    fused: dict[int, float] = {}
    for index, ranked in enumerate(ranked_lists):
        weight = weights[index] if weights is not None else 1.0
        for rank, memory_id in enumerate(ranked, start=1):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight / (RRF_K + rank)
    return fused


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (a time.perf_counter()), as timings show them."""
    return round((time.perf_counter() - started) * 1000, 2)
