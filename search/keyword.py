"""Keyword search: Okapi BM25 over PostgreSQL full text (``textsearch``), in SQL."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

from core import side_connections
from core.cjk import is_cjk
from search.table_statistics import (
    PoolRows,
    corpus_statistics,
    pool_rows,
    table_statistics,
)
from search.textsearch import (
    ACCESS_DOCUMENT_SQL,
    SEARCH_CONFIG,
    expansions,
    search_document,
    search_terms,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

# When every term of a query is that common, the rarest few are searched anyway.
KEEP_WHEN_ALL_COMMON = 3
# The keyword search's cost grows with the rows its terms match: it uses the rarest few, and
# no more than statistics say match this many rows together (BM25 costs ~10 µs a match). A
# cap on rows, not on a share of the table: a share of a small table (1.5% of 6,000 turns is
# 90) left out the words a question is about, however cheap they were to search.
MAX_QUERY_TERMS = 8
MAX_MATCH_ROWS = 15_000
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


@dataclass(frozen=True)
class QueryTerm:
    """A lexeme to search for, as a raw tsquery, and its weight (1, or EXPANSION_WEIGHT for
    a concept's other words, ``textsearch.expansions``)."""

    tsquery: str
    weight: float = 1.0


def _query_terms(
    text: str, table: str, max_rows: int | None = None, as_typed: bool = False
) -> list[QueryTerm]:
    """The terms to search for ``text``: its rarest, at most MAX_QUERY_TERMS, then the first
    MAX_EXPANSION_TERMS words of the concepts it names, all together in at most
    ``max_rows`` rows (MAX_MATCH_ROWS by default, as far as statistics tell): BM25's cost
    grows with its matches (a big user's concepts' words, unbounded, made it 2.4x slower).
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

    most = (max_rows or MAX_MATCH_ROWS) / statistics.rows
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
MAX_CACHED_QUERIES = 64


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
    if len(_lexemes) >= MAX_CACHED_QUERIES:
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


def access_lexemes(user: AbstractBaseUser, project_ids: Sequence[int]) -> tuple[str, ...]:
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
