"""What the search asks PostgreSQL about its tables: statistics (kept by autovacuum's ANALYZE),
the planner's estimates of a pool's size and the average length of a sample of its rows.

A speed trick that earns its place: each figure is kept for SECONDS (``StatisticsCache``)
instead of asked for on every search: preview p95 50.9 ms with the cache, 101.5 ms without
(benchmarks/speed_tricks.py, 3 rounds at --scale 1: +50 %).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Generic, TypeVar

from django.db import connection
from django.db.models import QuerySet

from search.buckets import HNSW_BUCKET_SUFFIX, VECTOR_BUCKETS

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# How long a figure is kept; 0 turns the caches off (the benchmark's A/B).
SECONDS = 300.0


class StatisticsCache(Generic[K, V]):
    """Figures by key, each computed again once older than SECONDS; emptied when it holds
    ``max_entries`` (keys are queries: a process sees few distinct ones)."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self.max_entries = max_entries
        self.entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K, compute: Callable[[], V]) -> V:
        now = time.monotonic()
        cached = self.entries.get(key)
        if cached is not None and now - cached[0] < SECONDS:
            return cached[1]
        value = compute()
        if len(self.entries) >= self.max_entries:
            self.entries.clear()
        self.entries[key] = (now, value)
        return value

    def clear(self) -> None:
        self.entries.clear()


# A term in more than this share of all memories says little, and OR-matching it would
# make the keyword search rank a large part of a big user's memories: it is left out.
MAX_TERM_SHARE = 0.02
# Nor is a term matching fewer rows than this: cheap to search whatever its share.
MIN_COMMON_ROWS = 1000

# Candidate sets up to this size are counted for BM25; larger ones estimated.
EXACT_CORPUS_LIMIT = 5000
CORPUS_SAMPLE = 2000
# By table: memories', and the others searched the same way (messages, recall.episodes).
_table_statistics: StatisticsCache[str, TableStatistics] = StatisticsCache()
# Planner estimates, and the average length of a sample of large candidate sets, by query.
_estimates: StatisticsCache[tuple[str, str], int] = StatisticsCache()
_sample_lengths: StatisticsCache[tuple[str, str], float] = StatisticsCache()


@dataclass(frozen=True)
class TableStatistics:
    """What PostgreSQL's statistics (kept by autovacuum's ANALYZE) say of a searched table
    (memories, or messages): "memories" below stands for its rows."""

    # The planner's estimate of its size.
    rows: int
    # Lexemes in more than MAX_TERM_SHARE of memories (and MIN_COMMON_ROWS), with their share;
    # empty on a small table.
    common_lexemes: dict[str, float]
    # The share of memories of every lexeme the statistics track (PostgreSQL's most common
    # elements), and the least of them: what any other lexeme has at most.
    lexeme_shares: dict[str, float] = field(default_factory=dict)
    untracked_share: float = 0.0
    # The vectors in each bucket's HNSW index, as its statistics say (none for an index they
    # never counted).
    bucket_vectors: dict[int, int] = field(default_factory=dict)

    def index_rows(self, buckets: Sequence[int]) -> int:
        """What the HNSW indexes of ``buckets`` hold: as their statistics say, or an even share
        of the table each for an index never counted. Buckets are uneven (one big user's
        beside a few small users'): at least an even share each kept a user with 1% of a
        table's rows from its bucket's index, to exact ranking of all their rows."""
        even_share = self.rows // VECTOR_BUCKETS
        return sum(self.bucket_vectors.get(bucket, even_share) for bucket in buckets)


def table_statistics(table: str) -> TableStatistics:
    """Read at most every few minutes: they change slowly, and recall needs them every time.
    ``table``: one with a ``search_vector`` column (memories by default)."""
    return _table_statistics.get(table, partial(_read_table_statistics, table))


def _read_table_statistics(table: str) -> TableStatistics:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.reltuples, s.most_common_elems::text::text[], s.most_common_elem_freqs "
            "FROM pg_class c LEFT JOIN pg_stats s ON s.schemaname = current_schema() "
            "AND s.tablename = %s AND s.attname = 'search_vector' "
            "WHERE c.oid = %s::regclass",
            [table, table],
        )
        row = cursor.fetchone()
        cursor.execute(
            "SELECT substring(c.relname from %s)::int, c.reltuples FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = %s::regclass AND c.relname ~ %s",
            [HNSW_BUCKET_SUFFIX, table, HNSW_BUCKET_SUFFIX],
        )
        # -1: never counted (by VACUUM, ANALYZE or the index's build).
        bucket_vectors = {
            bucket: int(tuples) for bucket, tuples in cursor.fetchall() if tuples >= 0
        }
    rows = max(float(row[0]) if row else 0.0, 1.0)  # -1 before the first ANALYZE
    # The frequencies end with three summary numbers, which zip leaves out.
    shares = dict(zip(row[1], row[2], strict=False)) if row and row[1] else {}
    least = max(MAX_TERM_SHARE, MIN_COMMON_ROWS / rows)
    common = {lexeme: share for lexeme, share in shares.items() if share > least}
    return TableStatistics(
        rows=int(rows),
        common_lexemes=common,
        lexeme_shares=shares,
        untracked_share=min(shares.values(), default=0.0),
        bucket_vectors=bucket_vectors,
    )


def corpus_statistics(
    memories: QuerySet[Any, Any], key: tuple[str, str]
) -> tuple[int, float] | None:
    """(how many, their average length in lexemes) of a large set of ``memories``, for BM25,
    estimated: the planner's count, and the length of a sample, kept as long as the table
    statistics. None for a small set: the search counts it in its own statement
    (``keyword_sql``), not in a round trip of its own before it. ``key``: the pool's
    ``PoolRows.key`` (both caches' key)."""
    rows = memories.values("pk")
    estimate = estimated_rows(rows, key)
    if estimate <= EXACT_CORPUS_LIMIT:
        return None
    return estimate, _sample_lengths.get(key, partial(_sample_length, memories))


def _sample_length(memories: QuerySet[Any, Any]) -> float:
    sample = memories.values("search_vector")[:CORPUS_SAMPLE]
    with connection.cursor() as cursor:
        sample_sql, sample_params = sample.query.sql_with_params()
        cursor.execute(
            f"SELECT avg(length(search_vector)) FROM ({sample_sql}) AS sample", sample_params
        )
        return float(cursor.fetchone()[0] or 0.0)


@dataclass(frozen=True)
class PoolRows:
    """The SQL of a pool's (id, search_vector), which the keyword search reads its matches
    with, and ``key``: that of the pool's estimates (how many, how long). Compiled once per
    search, for both: a memory pool's compile costs ~0.4 ms."""

    sql: str
    params: list[Any]

    @property
    def key(self) -> tuple[str, str]:
        return _sql_key(self.sql, self.params)


def pool_rows(memories: QuerySet[Any, Any]) -> PoolRows:
    """``memories``' PoolRows; EmptyResultSet for a pool that can hold nothing."""
    sql, params = memories.values("id", "search_vector").query.sql_with_params()
    return PoolRows(sql, list(params))


def _embedded_key(key: tuple[str, str], model_name: str) -> tuple[str, str]:
    """The key of the estimate of the rows of a pool (``PoolRows.key``) with vectors by
    ``model_name``."""
    return key[0], f"{key[1]} embedded by {model_name}"


def _query_key(queryset: QuerySet[Any, Any]) -> tuple[str, str]:
    """A query's SQL and parameters, times left out: a user's searches ask for the same
    candidates again and again, only at another time (``as_of``, now by default), which
    hardly moves an estimate."""
    return _sql_key(*queryset.query.sql_with_params())


def _sql_key(sql: str, params: Sequence[Any]) -> tuple[str, str]:
    return sql, repr([param for param in params if not isinstance(param, datetime)])


def estimated_rows(queryset: QuerySet[Any, Any], key: tuple[str, str] | None = None) -> int:
    """The planner's estimate of the rows ``queryset`` returns (planning only, no scan), kept
    as long as the table statistics; ``key``: the queryset's ``_query_key``, if known."""
    return _estimates.get(key or _query_key(queryset), partial(_planner_rows, queryset))


def _planner_rows(queryset: QuerySet[Any, Any]) -> int:
    plan = queryset.explain(format="json")
    return int(json.loads(plan)[0]["Plan"]["Plan Rows"])
