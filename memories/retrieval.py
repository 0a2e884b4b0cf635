"""Recall: which memories answer a query, and how well.

1. Candidates: what the caller may see (personal, their projects', the given
   conversation's), active, alive and valid at ``as_of`` (default now), narrowed
   by the filters (kind, scope, project, tags, creation date range).
2. Keyword search: PostgreSQL full text (``textsearch.py`` makes Chinese work),
   any query term matching, ranked by how many of the query's terms a memory
   contains. (``ts_rank_cd`` of such an OR query counts the terms' occurrences
   instead, at several times the cost per row, and a large user's query
   matches thousands of rows.)
3. Vector search: cosine distance to the query's embedding, only over vectors
   made by the configured model. pgvector 0.6 filters an HNSW scan *after* it
   found the ``hnsw.ef_search`` nearest rows of the index, so a user with few
   memories among many would get no hits: a small candidate set is ranked by
   exact distance (fast for a few thousand rows), a large one through the HNSW
   indexes of its pools' buckets (``models.VECTOR_BUCKETS``), with ``ef_search``
   raised so enough of the caller's rows survive. Within its bucket a large
   user's memories are a large share of the index, so that takes few rows.
4. Reciprocal rank fusion of both lists (k = 60), then a score mixing that
   relevance with importance, confidence, recency and use. Every part is
   returned so a ranking can be explained. Ties break by id: same data, same order.

When vectors cannot be used (the provider fails, or its dimension does not fit
the stored vectors) recall is keyword-only and says why in ``degraded``.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memories import side_connections
from memories.embeddings import (
    FIX_COMMAND,
    EmbeddingError,
    dimension_conflict,
    get_provider,
    vector_literal,
)
from memories.fast_timestamps import read_timestamps_in_c
from memories.filters import NO_FILTERS, MemoryFilters
from memories.models import (
    HNSW_BUCKET_SUFFIX,
    VECTOR_BUCKETS,
    Memory,
    MemoryQuerySet,
    Scope,
    vector_bucket,
)
from memories.permissions import memories_visible_to
from memories.statistics_cache import StatisticsCache
from memories.textsearch import (
    ACCESS_DOCUMENT_SQL,
    ENGLISH_STOPWORDS,
    SEARCH_CONFIG,
    expansions,
    is_cjk,
    search_document,
    search_terms,
)
from teams.models import Project
from teams.permissions import projects_readable_by

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from conversations.models import Conversation

RRF_K = 60
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
RECENCY_HALF_LIFE_DAYS = 30.0
# Uses at which the "use" part reaches 1.
FULL_USE_COUNT = 100

# Reciprocal rank fusion's weight of each list: BM25 over words is the better ranking, the
# vector list adds what is said in other words (set on benchmarks/conversation_memory.py).
KEYWORD_WEIGHT = 1.0
VECTOR_WEIGHT = 0.5
# How much more relevance a memory by or about a person the query names keeps, and a dated
# one for a question asking when (QueryIntent).
PERSON_BOOST = 0.3
DATE_BOOST = 0.3

WEIGHTS = {"relevance": 0.7, "importance": 0.1, "confidence": 0.05, "recency": 0.1, "use": 0.05}

MODES = ("hybrid", "keyword", "vector")

# A term in more than this share of all memories says little, and OR-matching it would
# make the keyword search rank a large part of a big user's memories: it is left out.
MAX_TERM_SHARE = 0.02
# Nor is a term matching fewer rows than this: cheap to search whatever its share.
MIN_COMMON_ROWS = 1000
# When every term of a query is that common, the rarest few are searched anyway.
KEEP_WHEN_ALL_COMMON = 3
# The keyword search's cost grows with the rows its terms match: it uses the rarest few, and
# no more than statistics say are together in this share of memories.
MAX_QUERY_TERMS = 8
MAX_MATCH_SHARE = 0.015
# A concept's other words (textsearch.expansions) weigh this much of a word of the query,
# and the first this many are searched.
EXPANSION_WEIGHT = 0.5
MAX_EXPANSION_TERMS = 8
# Okapi BM25's parameters (the usual ones).
BM25_K1 = 1.2
BM25_B = 0.75
# BM25's sum of a row's term weights is rounded to this many decimals, so that equal sums
# made in another order (float8) still tie, and ties break by id.
TIE_DIGITS = 9
# Candidate sets up to this size are counted for BM25; larger ones estimated.
EXACT_CORPUS_LIMIT = 5000
CORPUS_SAMPLE = 2000
# By table: memories', and the others searched the same way (messages, recall.episodes).
_table_statistics: StatisticsCache[str, TableStatistics] = StatisticsCache()
# Planner estimates, and the average length of a sample of large candidate sets, by query.
_estimates: StatisticsCache[tuple[str, str], int] = StatisticsCache()
_sample_lengths: StatisticsCache[tuple[str, str], float] = StatisticsCache()
MEMORY_TABLE = Memory._meta.db_table


@dataclass
class Degraded:
    code: str
    message: str
    command: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "command": self.command}


@dataclass(slots=True)
class RecalledMemory:
    """A memory as the injection preview scores and shows it: only those columns, read as
    plain rows, not model instances (a preview handles a hundred or more, and building
    models was a good part of its time)."""

    pk: int
    kind: str
    scope: str
    project_id: int | None
    content: str
    importance: float
    confidence: float
    pinned: bool
    valid_from: datetime
    last_accessed_at: datetime | None
    access_count: int
    # Its evidence (JSON, maybe still as text): the messages it was extracted from, which
    # the preview does not show again as past turns.
    evidence: Any = None
    # Its metadata names the date of what it tells (``event_date``).
    event_dated: bool = False


# What scored() reads: a whole memory, or just those columns.
MemoryT = TypeVar("MemoryT", Memory, RecalledMemory)


@dataclass
class ScoredMemory(Generic[MemoryT]):
    memory: MemoryT
    score: float
    parts: dict[str, Any]


@dataclass
class SearchResult:
    memories: list[ScoredMemory[Memory]]
    degraded: Degraded | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)


def candidates(
    user: User,
    *,
    as_of: datetime | None = None,
    conversation: Conversation | None = None,
    all_conversations: bool = True,
    filters: MemoryFilters = NO_FILTERS,
    base_queryset: MemoryQuerySet | None = None,
    project_ids: Sequence[int] | None = None,
) -> MemoryQuerySet:
    """The memories recall may return to ``user``.

    Conversation memories: with ``conversation``, only that conversation's;
    without one, all of the user's when ``all_conversations`` (search), none
    otherwise (injection into a chat that is not that conversation).
    ``base_queryset`` replaces the default "in effect at ``as_of``" set (the
    settings page searches its own filtered list); visibility still applies.
    """
    memories = base_queryset if base_queryset is not None else Memory.objects.in_effect(as_of)
    memories = memories_visible_to(
        user,
        memories,
        project_ids=member_project_ids(user) if project_ids is None else project_ids,
    )
    if conversation is not None:
        memories = memories.filter(~Q(scope=Scope.CONVERSATION) | Q(conversation=conversation))
    elif not all_conversations:
        memories = memories.exclude(scope=Scope.CONVERSATION)
    return filters.narrow(memories)


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


def table_statistics(table: str = MEMORY_TABLE) -> TableStatistics:
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


def common_lexemes() -> dict[str, float]:
    return table_statistics().common_lexemes


@dataclass(frozen=True)
class QueryTerm:
    """A lexeme to search for, as a raw tsquery, and its weight (1, or EXPANSION_WEIGHT for
    a concept's other words, ``textsearch.expansions``)."""

    tsquery: str
    weight: float = 1.0


def _query_terms(
    text: str, table: str = MEMORY_TABLE, max_rows: int | None = None, as_typed: bool = False
) -> list[QueryTerm]:
    """The terms to search for ``text``: its rarest, at most MAX_QUERY_TERMS, then the first
    MAX_EXPANSION_TERMS words of the concepts it names, all together in at most
    MAX_MATCH_SHARE of memories (as far as statistics tell): BM25's cost grows with its
    matches (a big user's concepts' words, unbounded, made it 2.4x slower).

    ``max_rows``: the rows all the terms may match together (as far as statistics tell)
    however large the table.
    ``as_typed``: a search box's text, as ``textsearch.tsquery(prefix=True)`` matches it: its
    last word a prefix, and no concept's other words (they would rank memories the box's
    words do not match, at the cost of their matches).

    Terms in more than MAX_TERM_SHARE of memories are left out unless nothing
    else is left; among equally rare terms the ones said last (the new message
    comes after the recent ones) win. Lexemes come stemmed from PostgreSQL, so
    the query is built with the "simple" configuration, which only lower-cases.
    Stopwords of both languages never reach it (``textsearch.search_document``).
    """
    rows = query_lexemes(text)
    # The last said first: they win among equals.
    lexemes = [lexeme for lexeme, expanded in rows if not expanded]
    typed = search_terms(text)
    prefix = lexemes[0] if as_typed and lexemes and not is_cjk(typed[-1]) else None
    statistics = table_statistics(table)

    def share(lexeme: str) -> float:
        return statistics.lexeme_shares.get(lexeme, statistics.untracked_share)

    most = MAX_MATCH_SHARE if max_rows is None else min(MAX_MATCH_SHARE, max_rows / statistics.rows)
    rarest_first = sorted(lexemes, key=share)
    kept: list[str] = []
    matched_share = 0.0
    for lexeme in rarest_first:
        if lexeme in statistics.common_lexemes or len(kept) == MAX_QUERY_TERMS:
            break
        if kept and matched_share + share(lexeme) > most:
            break
        kept.append(lexeme)
        matched_share += share(lexeme)
    kept = kept or rarest_first[:KEEP_WHEN_ALL_COMMON]
    extra = [
        lexeme
        for lexeme in dict.fromkeys(lexeme for lexeme, expanded in rows if expanded)
        if lexeme not in lexemes and lexeme not in statistics.common_lexemes and not as_typed
    ]
    extra = _within(extra[:MAX_EXPANSION_TERMS], share, most - matched_share)
    return [_query_term(lexeme, prefix=lexeme == prefix) for lexeme in kept] + [
        _query_term(lexeme, EXPANSION_WEIGHT) for lexeme in extra
    ]


# The lexemes of the latest queries, or their lookup under way: a preview starts it early
# (``start_query_lexemes``) and searches memories and past turns with them.
_lexemes: dict[str, Future[list[tuple[str, bool]]]] = {}
_lexemes_lock = threading.Lock()


def start_query_lexemes(text: str) -> None:
    """Look ``text``'s lexemes up on a side connection, for the searches of it to come."""
    with _lexemes_lock:
        if text not in _lexemes:
            _remember_lexemes(text, side_connections.start(_read_lexemes, text))


def query_lexemes(text: str) -> list[tuple[str, bool]]:
    """(lexeme, from a concept's other words) of ``text``, as PostgreSQL stems them."""
    with _lexemes_lock:
        known = _lexemes.get(text)
    if known is None:
        lexemes = _read_lexemes(text)
        read: Future[list[tuple[str, bool]]] = Future()
        read.set_result(lexemes)
        with _lexemes_lock:
            _remember_lexemes(text, read)
        return lexemes
    try:
        return known.result()
    except Exception:
        with _lexemes_lock:
            _lexemes.pop(text, None)
        raise


def _remember_lexemes(text: str, lexemes: Future[list[tuple[str, bool]]]) -> None:
    if len(_lexemes) >= MAX_CACHED_VECTORS:
        _lexemes.clear()
    _lexemes[text] = lexemes


def _read_lexemes(text: str) -> list[tuple[str, bool]]:
    with connection.cursor() as cursor:
        cursor.execute(
            # The query's words last said first (by their last time), the concepts' words
            # in their order.
            "SELECT lexeme, false, -positions[cardinality(positions)] "
            "FROM unnest(to_tsvector(%s, %s)) "
            "UNION ALL SELECT lexeme, true, positions[1] FROM unnest(to_tsvector(%s, %s)) "
            "ORDER BY 2, 3",
            [
                SEARCH_CONFIG,
                search_document(text),
                SEARCH_CONFIG,
                search_document(" ".join(expansions(text))),
            ],
        )
        return [(lexeme, expanded) for lexeme, expanded, _position in cursor.fetchall()]


def _within(lexemes: list[str], share: Callable[[str], float], room: float) -> list[str]:
    """The first of ``lexemes`` that match together at most ``room`` of the table."""
    kept = []
    for lexeme in lexemes:
        room -= share(lexeme)
        if room < 0:
            break
        kept.append(lexeme)
    return kept


def _query_term(lexeme: str, weight: float = 1.0, prefix: bool = False) -> QueryTerm:
    # A lone CJK character stays a prefix, as in textsearch.tsquery.
    prefix = prefix or (len(lexeme) == 1 and is_cjk(lexeme))
    return QueryTerm(f"'{lexeme}'{':*' if prefix else ''}", weight)


def member_project_ids(user: User) -> list[int]:
    return list(projects_readable_by(user).values_list("id", flat=True))


def access_lexemes(user: User, project_ids: Sequence[int]) -> tuple[str, ...]:
    """The access lexemes (textsearch.ACCESS_DOCUMENT_SQL) of every memory ``user`` may see:
    their own, and their projects' (``member_project_ids``)."""
    return (f"ownerid{user.pk}", *(f"projectid{pk}" for pk in project_ids))


def keyword_sql(
    memories: QuerySet[Any, Any],
    text: str,
    limit: int,
    access: Sequence[str] = (),
    max_rows: int | None = None,
    *,
    as_typed: bool = False,
    max_hits: int | None = None,
    rows: PoolRows | None = None,
) -> tuple[str, list[Any]] | None:
    """SQL and parameters of (id, BM25 score) of the memories matching any term of ``text``,
    best first, ties by id; None if there is nothing to match (no term, or no row).

    Okapi BM25 (BM25_K1, BM25_B) with a term's presence for its frequency (memories are
    short: a word rarely comes twice): each term weighs its inverse document frequency
    among the caller's memories (its document frequency counted over the matching rows,
    which are all the caller's rows holding it) and the memory's length (its distinct
    lexemes, ``length(search_vector)``) is normalised by the average of the caller's.
    ``memories`` may be a queryset of any model with a ``search_vector`` (messages: episodic
    recall), its table's statistics choosing the terms.

    ``access`` (the caller's access_lexemes) lets the GIN index over the search vector and
    those lexemes find just the caller's matching rows; ``memories``' conditions (which
    still decide exactly what is visible) then filter only those. The subquery's OFFSET 0
    keeps them there: the planner cannot know that the lexemes already select the caller's
    rows, and would also scan an owner index for them, which for a large user (100,000
    entries) costs more than the rest of the search.

    ``max_rows`` and ``as_typed``: as ``_query_terms``. ``max_hits``: BM25 scores at most
    this many matches, whatever the statistics said of the terms: those holding every term
    first, then the newest (one test of each match, where BM25 makes one for every term).
    ``rows``: ``memories``' ``pool_rows``, if made already.
    """
    table_name = memories.model._meta.db_table
    terms = _query_terms(text, table_name, max_rows, as_typed)
    if not terms:
        return None
    if rows is None:
        try:
            rows = pool_rows(memories)
        except EmptyResultSet:
            return None
    # Over the whole pool, before it is narrowed to the matches: idf needs all its rows.
    corpus: tuple[int, float] | tuple[str, list[Any]] | None = corpus_statistics(memories, rows.key)
    if corpus is None:  # A small pool, counted by the search itself.
        try:
            sql, corpus_params = memories.values("search_vector").query.sql_with_params()
        except EmptyResultSet:
            return None
        corpus = (
            "SELECT count(*)::float8 AS size, "
            f"coalesce(avg(length(search_vector)), 0)::float8 AS average FROM ({sql}) AS pool",
            list(corpus_params),
        )
    any_term = " | ".join(term.tsquery for term in terms)
    table = connection.ops.quote_name(table_name)
    # The pool's rows read from its matches only: the table in its SQL becomes them.
    if access:
        allowed = " | ".join(f"'{lexeme}'" for lexeme in access)
        source = (
            f"(SELECT * FROM {table} WHERE {ACCESS_DOCUMENT_SQL} @@ to_tsquery('simple', %s) "
            f"OFFSET 0) AS {table}"
        )
        source_params = [f"({allowed}) & ({any_term})"]
    else:
        source = (
            f"(SELECT * FROM {table} WHERE search_vector @@ to_tsquery('simple', %s)) AS {table}"
        )
        source_params = [any_term]
    # The SQL of a pool without conditions ends with its table.
    select, found, rest = f"{rows.sql} ".partition(f" FROM {table} ")
    if not found:  # Never silently search without the match condition.
        raise RuntimeError(f"No FROM {table} in the candidates' SQL: {rows.sql}")
    pool_sql = f"{select} FROM {source} {rest}"
    params = [*source_params, *rows.params]
    if max_hits is not None:
        # OFFSET 0: the matches are found through the search index, then the best kept;
        # else the planner may walk the id index backwards, testing every row on the way.
        pool_sql = (
            f"SELECT * FROM ({pool_sql} OFFSET 0) AS matched "
            "ORDER BY search_vector @@ to_tsquery('simple', %s) DESC, id DESC LIMIT %s"
        )
        params += [" & ".join(term.tsquery for term in terms), max_hits]
    return bm25_sql(pool_sql, params, terms, corpus, limit)


def bm25_sql(
    pool_sql: str,
    pool_params: list[Any],
    terms: Sequence[QueryTerm],
    corpus: tuple[int, float] | tuple[str, list[Any]],
    limit: int,
) -> tuple[str, list[Any]]:
    """(id, score) of the rows of ``pool_sql`` (id and search_vector of those matching any of
    ``terms``), by BM25 as ``keyword_sql`` says, best first, ties by id. ``corpus``: how many
    rows the whole pool has and their average length (``corpus_statistics``' estimate), or
    the SQL that counts them (size, average) in the same statement; an empty pool is not
    searched (the matches' one-time filter).

    Each term's tsquery is made once (``q``), not once per row: to_tsquery is only stable,
    and 14 terms over 3,600 matches made it a good part of the search. Numbers are float8:
    a parameter like 1.0 is otherwise a numeric literal, and ln() of numerics took 130 of
    the 170 ms of such a search (EXPLAIN ANALYZE, 100,000 messages). Each term's idf is
    computed once (``idf``) from one aggregate over the matches, not by window functions
    for every row: 12 terms' ln() over 5,200 matches were 22 of a search's 57 ms. The sum
    is rounded (``TIE_DIGITS``): numerics summed equal scores exactly, and float8 summing
    them in another order differed in the last bit, so such ties no longer broke by id.
    ``idf`` is MATERIALIZED: the planner, guessing one match, otherwise joined each match
    with the idf's aggregate recomputed over all of them (2,400 matches: 500 ms)."""
    count = range(len(terms))
    queries = ", ".join(f"to_tsquery('simple', %s) AS q{n}" for n in count)
    matched = ", ".join(f"(search_vector @@ q{n})::int AS m{n}" for n in count)
    frequencies = ", ".join(f"sum(m{n}) AS df{n}" for n in count)
    # idf as Lucene's (never negative), times the term's weight; N at least the rows that
    # matched.
    idf = ", ".join(
        f"%s::float8 * ln(1 + (greatest(size, hits) - df{n} + 0.5) / (df{n} + 0.5)) AS i{n}"
        for n in count
    )
    score = " + ".join(f"m{n} * i{n}" for n in count)
    norm = f"{BM25_K1} * (1 - {BM25_B} + {BM25_B} * length / greatest(average, 1))"
    if isinstance(corpus[0], str):
        corpus_sql, corpus_params = corpus
    else:
        corpus_sql, corpus_params = "SELECT %s::float8 AS size, %s::float8 AS average", list(corpus)
    return (
        f"WITH corpus AS MATERIALIZED ({corpus_sql}), "
        "hit AS MATERIALIZED ("
        f"SELECT id, length(search_vector)::float8 AS length, {matched} "
        f"FROM (SELECT {queries} OFFSET 0) AS q, ({pool_sql}) AS hit "
        "WHERE (SELECT size FROM corpus) > 0), "
        f"idf AS MATERIALIZED (SELECT {idf} FROM "
        f"(SELECT count(*) AS hits, {frequencies} FROM hit) AS counted, corpus) "
        f"SELECT id, round(({score}) * 1e{TIE_DIGITS}::float8) / 1e{TIE_DIGITS}::float8 "
        f"* {BM25_K1 + 1} / (1 + {norm}) AS rank FROM hit, idf, corpus "
        "ORDER BY rank DESC, id LIMIT %s",
        [
            *corpus_params,
            *(term.tsquery for term in terms),
            *pool_params,
            *(term.weight for term in terms),
            limit,
        ],
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


def keyword_hits(
    memories: QuerySet[Any, Any],
    text: str,
    limit: int,
    access: Sequence[str] = (),
    max_rows: int | None = None,
    *,
    as_typed: bool = False,
    max_hits: int | None = None,
) -> list[tuple[int, float]]:
    """(id, BM25 score) of the best ``limit`` matches of ``text``: see ``keyword_sql``."""
    query = keyword_sql(
        memories, text, limit, access, max_rows=max_rows, as_typed=as_typed, max_hits=max_hits
    )
    if query is None:
        return []
    with connection.cursor() as cursor:
        cursor.execute(*query)
        return [(memory_id, float(rank)) for memory_id, rank in cursor.fetchall()]


def embedded_with(memories: QuerySet[Any, Any], model_name: str) -> QuerySet[Any, Any]:
    return memories.filter(embedding_model=model_name, embedding__isnull=False)


def estimated_rows(queryset: QuerySet[Any, Any], key: tuple[str, str] | None = None) -> int:
    """The planner's estimate of the rows ``queryset`` returns (planning only, no scan), kept
    as long as the table statistics; ``key``: the queryset's ``_query_key``, if known."""
    return _estimates.get(key or _query_key(queryset), partial(_planner_rows, queryset))


def _planner_rows(queryset: QuerySet[Any, Any]) -> int:
    plan = queryset.explain(format="json")
    return int(json.loads(plan)[0]["Plan"]["Plan Rows"])


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


ALL_BUCKETS = tuple(range(VECTOR_BUCKETS))


def pool_buckets(user_id: int, project_ids: Iterable[int] = ()) -> tuple[int, ...]:
    """The buckets of a user's own memories and of their projects' (``project_ids``)."""
    return tuple(sorted({vector_bucket(user_id), *(vector_bucket(pk) for pk in project_ids)}))


def hnsw_ef_search(limit: int, size: int, buckets: Sequence[int], table: str = MEMORY_TABLE) -> int:
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


# When a question asks when (English and Chinese).
_WHEN_QUESTION = re.compile(
    r"\b(when|what (?:date|day|time|year|month)|which (?:date|day|year|month)|how long ago|"
    r"since when)\b|什么时候|哪天|哪一天|几号|几月|哪年|哪一年|何时|多久|日期|时间",
    re.IGNORECASE,
)
# A date, absolute or relative, in a text.
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
DATE_IN_TEXT = re.compile(
    rf"\b(?:{_MONTHS})\b|\b\d{{4}}\b|\b\d{{1,2}}[/.-]\d{{1,2}}\b|"
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today|tomorrow|"
    r"tonight|weekend|ago|last (?:week|month|year|night)|next (?:week|month|year))\b|"
    r"\d+\s*[年月日号]|[上下本这]周|星期|周[一二三四五六日末]|[昨今明前后]天|[去今明]年|"
    r"[上下]个?月",
    re.IGNORECASE,
)
# A capitalised word: in a query, maybe a person's name.
_CAPITALISED = re.compile(r"\b[A-Z][^\W\d_]+\b")


@dataclass(frozen=True)
class QueryIntent:
    """What a query says beyond its words: the people it names (lower-cased), and whether it
    asks when. Memories by or about those people, and dated memories for a "when" question,
    rank higher (PERSON_BOOST, DATE_BOOST)."""

    names: frozenset[str] = frozenset()
    asks_when: bool = False

    def boost(self, text: str, dated: bool = False, speaker: str = "") -> tuple[float, float]:
        """(person, date) of a memory or turn: 1 when it matches what the query asks."""
        person = 0.0
        if self.names:
            said_by = speaker.lower() in self.names if speaker else False
            lowered = text.lower()
            if said_by or any(_names_in(name, lowered) for name in self.names):
                person = 1.0
        date = 1.0 if self.asks_when and (dated or DATE_IN_TEXT.search(text)) else 0.0
        return person, date

    def factor(self, person: float, date: float) -> float:
        """The share of its relevance a match keeps: 1 when it matches all the query asks."""
        best = 1.0 + PERSON_BOOST * bool(self.names) + DATE_BOOST * self.asks_when
        return (1.0 + PERSON_BOOST * person + DATE_BOOST * date) / best


def _names_in(name: str, lowered: str) -> bool:
    if is_cjk(name):
        return name in lowered
    return re.search(rf"\b{re.escape(name)}\b", lowered) is not None


NO_INTENT = QueryIntent()


def query_intent(text: str, known_names: Iterable[str] = ()) -> QueryIntent:
    """The intent of ``text``: the ``known_names`` (say, a conversation's participants) it
    mentions, and its capitalised words that are no stopword, as names."""
    lowered = text.lower()
    names = {name.lower() for name in known_names if name and _names_in(name.lower(), lowered)}
    names.update(
        word.lower()
        for word in _CAPITALISED.findall(text)
        if word.lower() not in ENGLISH_STOPWORDS and len(word) > 1
    )
    return QueryIntent(frozenset(names), bool(_WHEN_QUESTION.search(text)))


def score_parts(
    memory: Memory | RecalledMemory, relevance: float, now: datetime
) -> dict[str, float]:
    """Each factor of the score in 0..1 (weights in WEIGHTS)."""
    last_seen = max(memory.valid_from, memory.last_accessed_at or memory.valid_from)
    age_days = max((now - last_seen).total_seconds() / 86400, 0.0)
    return {
        "relevance": relevance,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "recency": 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS),
        "use": min(1.0, math.log1p(memory.access_count) / math.log1p(FULL_USE_COUNT)),
    }


def weighted_score(parts: dict[str, float]) -> float:
    return round(sum(WEIGHTS[name] * parts[name] for name in WEIGHTS), 6)


# The latest queries' vectors by the provider in use (another provider empties it): a
# preview searches memories and past turns with the same query.
_query_vectors: tuple[object, dict[str, list[float]]] = (None, {})
MAX_CACHED_VECTORS = 64


def _query_vector(text: str) -> tuple[list[float] | None, Degraded | None]:
    global _query_vectors
    if conflict := dimension_conflict():
        return None, Degraded("EMBEDDING_DIMENSION_CONFLICT", conflict, FIX_COMMAND)
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


def similar_memories(
    memories: QuerySet[Any, Any],
    text: str,
    *,
    limit: int,
    min_similarity: float,
    buckets: Sequence[int] = ALL_BUCKETS,
    exact_limit: int | None = None,
) -> tuple[list[tuple[int, float]], Degraded | None]:
    """(id, similarity) of the ``memories`` nearest in meaning to ``text``, nearest first,
    at least ``min_similarity``; none, and why, when vectors cannot be used. ``buckets`` and
    ``exact_limit`` as for ``vector_search``."""
    if not text.strip():
        return [], None
    query_vector, degraded = _query_vector(text)
    if query_vector is None:
        return [], degraded
    found = vector_search(
        memories, query_vector, get_provider().model_name, limit, buckets, exact_limit
    ).hits()
    return [(memory_id, sim) for memory_id, sim in found if sim >= min_similarity], None


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
) -> PreparedSearch:
    """The search of ``memories`` by keyword and by vector (as ``mode`` says), whose ``run``
    fuses the lists.

    ``access``: the searching user's access_lexemes (faster keyword search for a large user);
    ``buckets``: the vector buckets of their memories (``pool_buckets``). Any table with
    ``search_vector``, ``embedding``, ``embedding_model`` and ``vector_bucket`` columns is
    searched the same way: messages are (recall.episodes).
    ``weights``: of the keyword and the vector list in the fusion. ``max_match_rows``: at
    most this many rows (as statistics tell) for BM25 to score, whatever the table's size.
    ``exact_vector_limit``: as ``vector_search``'s ``exact_limit``.

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
        keyword = keyword_sql(memories, text, depth, access, max_rows=max_match_rows, rows=rows)
    vector, degraded = None, None
    if mode != "keyword" and text.strip():
        query_vector, degraded = _query_vector(text)
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


NO_MATCH = {"relevance": 0.0, "keyword_rank": None, "vector_rank": None, "similarity": None}


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (a time.perf_counter()), as timings show them."""
    return round((time.perf_counter() - started) * 1000, 2)


def _dated(memory: Memory | RecalledMemory) -> bool:
    if isinstance(memory, Memory):
        return bool(isinstance(memory.metadata, dict) and memory.metadata.get("event_date"))
    return memory.event_dated


def scored(
    memories: Iterable[MemoryT],
    matches: dict[int, dict[str, Any]],
    now: datetime,
    intent: QueryIntent = NO_INTENT,
) -> list[ScoredMemory[MemoryT]]:
    """Score each memory from its match (or none: relevance 0), best first, ties by id.
    ``intent``: a memory by or about the people the query names, or a dated one for a
    question asking when, keeps more of its relevance (``QueryIntent.factor``)."""
    result = []
    for memory in memories:
        match = matches.get(memory.pk, NO_MATCH)
        person, date = intent.boost(memory.content, _dated(memory))
        parts = score_parts(memory, match["relevance"] * intent.factor(person, date), now)
        score = weighted_score(parts)
        result.append(
            ScoredMemory(
                memory,
                score,
                {
                    **{name: round(value, 6) for name, value in parts.items()},
                    "keyword_rank": match["keyword_rank"],
                    "vector_rank": match["vector_rank"],
                    "similarity": match["similarity"],
                    "person": person,
                    "dated": date,
                },
            )
        )
    result.sort(key=lambda item: (-item.score, item.memory.pk))
    return result


def load(ids: Iterable[int]) -> list[Memory]:
    """The memories with these ids, without their vectors (large, and not needed to show them)."""
    memories = Memory.objects.filter(pk__in=list(ids))
    return list(memories.defer("embedding", "search_vector", "search_document"))


def search_memories(
    user: User,
    query: str,
    *,
    base_queryset: MemoryQuerySet | None = None,
    as_of: datetime | None = None,
    conversation: Conversation | None = None,
    filters: MemoryFilters = NO_FILTERS,
    limit: int = 20,
    min_score: float = 0.0,
    mode: str = "hybrid",
) -> SearchResult:
    """The memories that best answer ``query``, best first, each with its score and parts.

    This is the one entry point for semantic search (the API, chat commands,
    the settings page). ``mode`` = "keyword" or "vector" runs one side alone
    (used to measure each). Memories scoring under ``min_score`` are dropped.
    """
    started = time.perf_counter()
    project_ids = member_project_ids(user)
    pool = candidates(
        user,
        as_of=as_of,
        conversation=conversation,
        filters=filters,
        base_queryset=base_queryset,
        project_ids=project_ids,
    )
    access = access_lexemes(user, project_ids)
    ranking = prepare_search(
        pool,
        query,
        depth=max(2 * limit, 40),
        mode=mode,
        access=access,
        buckets=pool_buckets(user.pk, project_ids),
    ).run()
    results = [
        item
        for item in scored(
            load(ranking.matches), ranking.matches, as_of or timezone.now(), query_intent(query)
        )
        if item.score >= min_score
    ][:limit]
    return SearchResult(
        results, ranking.degraded, {**ranking.timings_ms, "total_ms": ms_since(started)}
    )


def chat_pool(
    user: User,
    *,
    project: Project | None,
    conversation: Conversation | None,
    as_of: datetime | None = None,
    project_ids: Sequence[int] | None = None,
) -> MemoryQuerySet:
    """What a chat may be given: personal memories, the named project's, the named conversation's.

    A project's memories are injected only into chats that name the project.
    """
    pool = candidates(
        user,
        as_of=as_of,
        conversation=conversation,
        all_conversations=False,
        project_ids=project_ids,
    )
    if project is None:
        return pool.exclude(scope=Scope.PROJECT)
    return pool.filter(~Q(scope=Scope.PROJECT) | Q(project=project))
