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

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from memories.filters import NO_FILTERS, MemoryFilters
from memories.models import Memory, MemoryQuerySet, Scope
from memories.permissions import memories_visible_to
from search.buckets import ALL_BUCKETS, pool_buckets
from search.embeddings import get_provider
from search.hybrid import ms_since, prepare_search
from search.keyword import access_lexemes
from search.ranking import ScoredMemory, query_intent, scored
from search.vectors import Degraded, embed_query, vector_search
from teams.models import Project
from teams.permissions import projects_readable_by

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from conversations.models import Conversation

MODES = ("hybrid", "keyword", "vector")


@dataclass
class SearchResult:
    # django-stubs types a model's fields after mypy checks a type variable's bound there.
    memories: list[ScoredMemory[Memory]]  # type: ignore[type-var]
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


def member_project_ids(user: User) -> list[int]:
    return list(projects_readable_by(user).values_list("id", flat=True))


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
    query_vector, degraded = embed_query(text)
    if query_vector is None:
        return [], degraded
    found = vector_search(
        memories, query_vector, get_provider().model_name, limit, buckets, exact_limit
    ).hits()
    return [(memory_id, sim) for memory_id, sim in found if sim >= min_similarity], None


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
        for item in scored(  # type: ignore[type-var]  # as SearchResult says
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
