"""The injection preview: what goes into the system prompt before an LLM call, and why.

A preview is built in named steps:

1. context (``recall.context``): the user's settings, the projects they may read and the
   people of their past conversations; memory off, paused or a temporary chat give an empty
   block, saying why.
2. the query: the user's message plus up to 3 recent messages, and what it asks beyond its
   words (``search.ranking.QueryIntent``: the people it names, whether it asks when, the
   days it speaks of).
3. candidates: the memories (``recall.memories``) and the past turns (``recall.episodes``)
   that answer it, searched side by side, each scored on the same scale.
4. select (``recall.selection``): both on one scale, best first, until the budget is full;
   a memory and a turn it came from never both.
5. render (``recall.block``), then record: the access log and the memories' use counts,
   written after the answer (``recall.bookkeeping``), unless it is a dry run.

Past turns only when the user's "Reference past conversations" setting is on and the
request's ``sources`` name them. A token limited to personal memories or one project
(``memories_for_token``) recalls only those; the user's privacy pause injects nothing.

Tokens are estimated (``memories.tokens.estimate_tokens``, the estimate extraction's windows
use too), not counted with a model's tokenizer.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from accounts.models import TokenLimit
from conversations.models import Conversation
from memories.permissions import memories_for_token
from memories.search import chat_pool
from memories.tokens import estimate_tokens
from recall.block import SCOPES, block_order, references
from recall.bookkeeping import record_access
from recall.context import PreviewContext, preview_context
from recall.episodes import Episode, EpisodeSearch, episode_pool, start_episode_search
from recall.memories import RecalledMemory, scored_memories, search_memories
from recall.query_dates import query_dates
from recall.selection import Selection, memory_entry, select
from search.buckets import pool_buckets
from search.embeddings import fallback_degraded
from search.hybrid import PreparedSearch, ms_since
from search.keyword import access_lexemes, start_query_lexemes
from search.ranking import QueryIntent, ScoredMemory, query_intent
from search.vectors import Degraded
from teams.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from accounts.models import ApiToken

DEFAULT_BUDGETS = {"user": 600, "project": 800, "conversation": 600}
DEFAULT_TOTAL_BUDGET = 2000
RECENT_MESSAGES = 3
# What a preview may draw on: memories, and the turns of past conversations.
SOURCES = ("memories", "episodes")
# How many hits each memory search (keyword, vector) contributes, at least.
MEMORY_DEPTH = 40


@dataclass
class PreviewRequest:
    message: str
    recent_messages: Sequence[str] = ()
    conversation: Conversation | None = None
    project: Project | None = None
    temporary: bool = False
    budget: int = DEFAULT_TOTAL_BUDGET
    scope_budgets: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_BUDGETS))
    fmt: str = "markdown"
    limit: int = 50
    min_score: float = 0.0
    dry_run: bool = False
    as_of: datetime | None = None
    # What to draw on (SOURCES); past turns only when the user's setting allows them too.
    sources: Sequence[str] = SOURCES

    @property
    def depth(self) -> int:
        """How many hits each memory search (keyword, vector) contributes."""
        return max(self.limit, MEMORY_DEPTH)

    @property
    def query(self) -> str:
        recent = [text for text in self.recent_messages if text.strip()][-RECENT_MESSAGES:]
        return "\n".join([*recent, self.message])

    @property
    def is_temporary(self) -> bool:
        return self.temporary or (self.conversation is not None and self.conversation.temporary)


def injection_preview(
    user: User,
    request: PreviewRequest,
    *,
    api_token: ApiToken | None = None,
    client: str = "",
) -> dict[str, Any]:
    """Build the prompt block for ``request`` and say how it was chosen."""
    started = time.perf_counter()
    preview = _build(user, request, api_token=api_token, client=client)
    preview["timing_ms"]["total_ms"] = ms_since(started)
    return preview


def _build(
    user: User, request: PreviewRequest, *, api_token: ApiToken | None, client: str
) -> dict[str, Any]:
    if not request.is_temporary:
        # The query's words are looked up on a side connection meanwhile.
        start_query_lexemes(request.query)
    context_started = time.perf_counter()
    context = preview_context(user, request.conversation)
    timings = {"context_ms": ms_since(context_started)}
    if refusal := _refusal(context, request):
        return _empty(request, *refusal)
    if api_token is not None and api_token.limit == TokenLimit.PROJECT and request.project is None:
        # A token limited to one project recalls that project's memories.
        request.project = api_token.limit_project
    now = request.as_of or timezone.now()
    intent = query_intent(request.query, context.past.names, query_dates(request.message, now))
    found = find_candidates(user, request, context, intent, api_token, now, timings)
    ranking_started = time.perf_counter()
    memories = [
        item for item in found.memories if item.memory.pinned or item.score >= request.min_score
    ]
    episodes = [episode for episode in found.episodes if episode.score >= request.min_score]
    cite = context.memory_settings.show_citations
    selection = select(
        memories,
        episodes,
        limit=request.limit,
        budget=request.budget,
        scope_budgets=request.scope_budgets,
        fmt=request.fmt,
        cite=cite,
    )
    timings["ranking_ms"] = ms_since(ranking_started)
    block = selection.block(request.fmt, cite=cite)
    block_hash = hashlib.sha256(block.encode()).hexdigest()
    selected = [
        memory_entry(item, tokens)
        for scope in SCOPES
        for item, tokens in sorted(
            selection.memories[scope], key=lambda pair: block_order(pair[0].memory)
        )
    ]
    if (selected or selection.episodes) and not request.dry_run:
        _record(user, request, selection, block_hash, api_token=api_token, client=client)
    return _answer(request, selection, block, block_hash, selected, found.degraded, timings, cite)


def _refusal(context: PreviewContext, request: PreviewRequest) -> tuple[bool, str, str] | None:
    """(enabled, reason, message) when nothing may be injected."""
    memory_settings = context.memory_settings
    if not memory_settings.memory_enabled:
        return (
            False,
            "memory_disabled",
            "Memory is off for this user, their projects' memories included; "
            "turn it on at /settings/memories.",
        )
    if memory_settings.privacy_paused:
        return (
            False,
            "privacy_paused",
            "The user paused memory (privacy): nothing is injected until they resume it.",
        )
    if request.is_temporary:
        return (
            True,
            "temporary_conversation",
            "This is a temporary (private) conversation: no memory is injected.",
        )
    return None


@dataclass
class Found:
    """What a preview's searches found, each best first, and why vectors were not used."""

    memories: list[ScoredMemory[RecalledMemory]]
    episodes: list[Episode]
    degraded: Degraded | None


def find_candidates(
    user: User,
    request: PreviewRequest,
    context: PreviewContext,
    intent: QueryIntent,
    api_token: ApiToken | None,
    now: datetime,
    timings: dict[str, float],
) -> Found:
    """The memories and the past turns that answer the query, scored: the memories searched
    on the request's connection while the turns are searched on a side connection."""
    memory_search = _memory_search(user, request, context, intent, api_token)
    # Started once the memories' search is made: the side connection's thread makes the turns'
    # search while this one waits for the memories' statement, not before it.
    episode_search = _episode_search(user, request, context, intent, api_token)
    found = Found([], [], None)
    if memory_search is not None:
        ranking = memory_search.run()
        timings.update(ranking.timings_ms)
        found.memories = scored_memories(ranking, intent, now)
        found.degraded = ranking.degraded
    if episode_search is not None:
        started = time.perf_counter()
        turns = episode_search(now)
        timings["episodes_ms"] = ms_since(started)
        found.episodes = turns.episodes
        if found.degraded is None and turns.ranking is not None:
            found.degraded = turns.ranking.degraded
    return found


def _memory_search(
    user: User,
    request: PreviewRequest,
    context: PreviewContext,
    intent: QueryIntent,
    api_token: ApiToken | None,
) -> PreparedSearch | None:
    if "memories" not in request.sources:
        return None
    pool = chat_pool(
        user,
        project=request.project,
        conversation=request.conversation,
        as_of=request.as_of,
        project_ids=context.project_ids,
    )
    return search_memories(
        memories_for_token(pool, api_token),
        request.query,
        intent,
        depth=request.depth,
        access=access_lexemes(user, context.project_ids),
        # The pool's projects: the one the chat names, if any.
        buckets=pool_buckets(user.pk, [request.project.pk] if request.project else []),
    )


def _episode_search(
    user: User,
    request: PreviewRequest,
    context: PreviewContext,
    intent: QueryIntent,
    api_token: ApiToken | None,
) -> Callable[[datetime], EpisodeSearch] | None:
    """The past turns' search, started; None when the preview draws on none."""
    limited = api_token.limit if api_token is not None else ""
    project = None if limited else request.project
    if (
        "episodes" not in request.sources
        or not context.memory_settings.reference_past_conversations
        # The user's own conversations are no project's: not for a project-limited token.
        or limited == TokenLimit.PROJECT
        # Without a conversation of theirs, nor a project's, there is no past turn to search.
        or not (context.past.any or (project is not None and project.pk in context.project_ids))
    ):
        return None
    pool = episode_pool(
        user,
        project=project,
        project_ids=context.project_ids,
        conversation=request.conversation,
        as_of=request.as_of,
    )
    return start_episode_search(pool, request.query, intent)


def _record(
    user: User,
    request: PreviewRequest,
    selection: Selection,
    block_hash: str,
    *,
    api_token: ApiToken | None,
    client: str,
) -> None:
    """Bookkeeping: the access log and the memories' use counts, written after the answer."""
    record_access(
        user=user,
        memory_ids=[item.memory.pk for items in selection.memories.values() for item, _ in items],
        api_token=api_token,
        client=client,
        conversation=request.conversation,
        block_hash=block_hash,
        message_ids=[m for episode in selection.episodes for m in episode.message_ids],
        query=request.message,
    )


def _answer(
    request: PreviewRequest,
    selection: Selection,
    block: str,
    block_hash: str,
    selected: list[dict[str, Any]],
    degraded: Degraded | None,
    timings: dict[str, float],
    cite: bool,
) -> dict[str, Any]:
    return {
        "enabled": True,
        "reason": None,
        "message": None,
        "format": request.fmt,
        "block": block,
        "hash": block_hash,
        "memories": selected,
        "references": references(selected) if cite else [],
        "episodes": [episode.entry() for episode in selection.episodes],
        "dropped": selection.dropped,
        "tokens": {
            **{
                scope: sum(tokens for _item, tokens in items)
                for scope, items in selection.memories.items()
            },
            "episodes": sum(episode.tokens for episode in selection.episodes),
            "total": estimate_tokens(block),
        },
        "budget": {"total": request.budget, **request.scope_budgets},
        "degraded": degraded.as_dict() if degraded else fallback_degraded(),
        "dry_run": request.dry_run,
        "timing_ms": timings,
    }


def _empty(request: PreviewRequest, enabled: bool, reason: str, message: str) -> dict[str, Any]:
    return {
        "enabled": enabled,
        "reason": reason,
        "message": message,
        "format": request.fmt,
        "block": "",
        "hash": hashlib.sha256(b"").hexdigest(),
        "memories": [],
        "references": [],
        "episodes": [],
        "dropped": [],
        "tokens": {**dict.fromkeys(SCOPES, 0), "episodes": 0, "total": 0},
        "budget": {"total": request.budget, **request.scope_budgets},
        "degraded": None,
        "dry_run": request.dry_run,
        "timing_ms": {},
    }
