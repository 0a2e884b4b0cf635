"""The injection preview: which memories go into the system prompt, and the block itself.

The query is the user's message plus up to 3 recent messages. Recall
(``search.hybrid.prepare_search``) finds and scores the matching memories; pinned memories
are always candidates and come first. Budgets bound the block: each scope has
its own (user 600, project 800, conversation 600 tokens by default), and when
the whole block is still over the total budget, conversation memories are
trimmed first, then project ones, personal memories last.

The block is deterministic: inside a section memories are ordered pinned
first, then by kind, then by id (not by score, which drifts as memories get
used), so the same data gives the same bytes and the same SHA-256 hash, and
an LLM's prompt cache keeps hitting.

Past turns (``recall.episodes``) follow the memories in their own section ("From past
conversations"), when the user's "Reference past conversations" setting is on and the
request's ``sources`` name them: within what the conversation budget leaves, the first
dropped over the total budget, in the order they were said. A turn a memory injected
was extracted from is not shown again.

With the user's "Show memory references in replies" (``show_citations``) on, the memories
are numbered [1], [2]… in block order after one line asking the model to cite them, and
the preview's ``references`` map each number to the memory's id, kind and page.

A token limited to personal memories or one project (``memories_for_token``) recalls only
those; the user's privacy pause injects nothing (reason ``privacy_paused``).

Tokens are estimated (``memories.tokens.estimate_tokens``, the estimate extraction's
windows use too), not counted with a model's tokenizer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

from django.contrib.auth import get_user_model
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from accounts.models import MemorySettings, TokenLimit
from conversations.models import Conversation
from memories.models import Kind, Memory, MemoryQuerySet, Scope, memory_page_url, one_line
from memories.permissions import memories_for_token
from memories.search import chat_pool
from memories.tokens import estimate_tokens
from recall.bookkeeping import record_access
from recall.episodes import Episode, episode_pool, start_episode_search, with_context
from search.buckets import pool_buckets
from search.embeddings import fallback_degraded
from search.hybrid import ms_since, prepare_search
from search.keyword import access_lexemes, start_query_lexemes
from search.ranking import ScoredMemory, query_intent, scored
from teams.models import Project
from teams.permissions import projects_readable_by

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from accounts.models import ApiToken


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


SCOPES: tuple[str, ...] = (Scope.USER.value, Scope.PROJECT.value, Scope.CONVERSATION.value)
DEFAULT_BUDGETS = {"user": 600, "project": 800, "conversation": 600}
DEFAULT_TOTAL_BUDGET = 2000
# Over the total budget, memories are dropped from these scopes first.
TRIM_ORDER = ("conversation", "project", "user")
RECENT_MESSAGES = 3
FORMATS = ("markdown", "xml", "json")
# What a preview may draw on: memories, and the turns of past conversations.
SOURCES = ("memories", "episodes")
EPISODES_TITLE = "From past conversations"
EPISODES_TAG = "past_conversations"

MARKDOWN_TITLES = {
    "user": "User Preferences",
    "project": "Project Knowledge",
    "conversation": "Relevant Context",
}
XML_TAGS = {
    "user": "user_memory",
    "project": "project-memory",
    "conversation": "conversation-memory",
}
KIND_ORDER = {kind: index for index, kind in enumerate(Kind.values)}

# Pinned memories are always candidates, up to this many (the first made).
PINNED_LIMIT = 100


# The columns the preview scores and shows of each memory found (RecalledMemory's), read by
# the search's own statement (``search.hybrid.prepare_search``'s ``rows_sql``), as plain rows.
RECALLED_SQL = (
    "SELECT found.*, "
    + ", ".join(
        f"memory.{column.name}"
        for column in fields(RecalledMemory)
        if column.name not in ("pk", "event_dated")
    )
    + ", memory.metadata ? 'event_date' "
    f"FROM found JOIN {Memory._meta.db_table} AS memory ON memory.id = found.id"
)
# The conversations whose participants' names a query may mention (the latest first).
NAME_CONVERSATIONS = 200
# The users whose context statement a process keeps (``context_statement``): about 1 KB each.
CONTEXT_STATEMENTS = 1024


def pinned_ids(pool: MemoryQuerySet) -> QuerySet[Any, Any]:
    """The first PINNED_LIMIT pinned memories of ``pool``: candidates whatever the query."""
    return pool.filter(pinned=True).order_by("id").values("id")[:PINNED_LIMIT]


@dataclass(frozen=True)
class PastConversations:
    """What a preview reads of the user's conversations before it searches their turns: the
    names of the people in the latest ones (and in ``conversation``), who a query may be
    about (``search.ranking.query_intent``), and whether there is any (not temporary) at all."""

    names: set[str]
    any: bool


def latest_participants(user: User) -> QuerySet[Any, Any]:
    """The participants (as JSON text) of the user's NAME_CONVERSATIONS latest conversations."""
    return (
        Conversation.objects.filter(owner=user, temporary=False)
        .order_by("-created_at")
        .values_list(Cast("participants", TextField()), flat=True)[:NAME_CONVERSATIONS]
    )


def past_conversations(
    latest: Sequence[str], conversation: Conversation | None
) -> PastConversations:
    """``latest``: ``latest_participants``' rows."""
    # Each distinct list decoded once: most conversations have the same people, and decoding
    # 200 lists took ~2 ms of a preview.
    lists = [json.loads(participants) for participants in set(latest)]
    if conversation is not None:
        lists.append(conversation.participants)
    names = {
        str(participant["name"])
        for participants in lists
        if isinstance(participants, list)
        for participant in participants
        if isinstance(participant, dict) and participant.get("name")
    }
    return PastConversations(names, bool(latest))


@dataclass(frozen=True)
class PreviewContext:
    """What a preview reads before it searches: the user's memory settings, the projects they
    may read (``member_project_ids``) and their past conversations."""

    memory_settings: MemorySettings
    project_ids: list[int]
    past: PastConversations


@functools.lru_cache(maxsize=CONTEXT_STATEMENTS)
def context_statement(user_pk: int) -> tuple[str, tuple[Any, ...]]:
    """The SQL and parameters of ``preview_context``'s read for the user with ``user_pk``,
    made once per user: building and compiling the queryset took 1.4 of the read's 2.5 ms
    (benchmarks/recall_speed.py). Its SQL names only the user, whose settings, projects and
    conversations it reads anew each time."""
    user = get_user_model()(pk=user_pk)
    settings_with_context = MemorySettings.objects.filter(user_id=user_pk).annotate(
        readable_project_ids=ArraySubquery(projects_readable_by(user).values("id")),
        latest_participants=ArraySubquery(latest_participants(user)),
    )
    return settings_with_context.query.sql_with_params()


def preview_context(user: User, conversation: Conversation | None) -> PreviewContext:
    """Read in one round trip, on the request's connection: read side by side on three, they
    waited for each other's turn at the interpreter lock."""
    found = list(MemorySettings.objects.raw(*context_statement(user.pk)))
    if not found:  # Settings not made yet.
        MemorySettings.for_user(user)
        return preview_context(user, conversation)
    memory_settings = found[0]
    # The statement's columns beyond the model's fields, as raw() sets them.
    read = vars(memory_settings)
    return PreviewContext(
        memory_settings,
        read["readable_project_ids"],
        past_conversations(read["latest_participants"], conversation),
    )


CITE_LINE = "When your answer relies on a memory, cite its number, e.g. [1]."


def render(
    sections: dict[str, list[RecalledMemory]],
    fmt: str,
    episodes: Sequence[Episode] = (),
    *,
    cite: bool = False,
) -> str:
    """The prompt block for the memories of each scope, then the past turns ``episodes`` in
    the order given ("" when there is nothing). ``cite`` (the user's "Show memory
    references in replies"): the memories are numbered [1], [2]… in block order, with one
    line asking the model to cite them."""
    filled = [(scope, sections.get(scope, [])) for scope in SCOPES if sections.get(scope)]
    if not filled and not episodes:
        return ""
    numbers = iter(range(1, 1 + sum(len(memories) for _scope, memories in filled)))

    def n() -> str:
        return f"[{next(numbers)}] " if cite else ""

    if fmt == "json":
        document: dict[str, Any] = {"cite": CITE_LINE} if cite and filled else {}
        for scope, memories in filled:
            document[scope] = [
                {"n": next(numbers), "kind": m.kind, "content": one_line(m.content)}
                if cite
                else {"kind": m.kind, "content": one_line(m.content)}
                for m in memories
            ]
        if episodes:
            document[EPISODES_TAG] = [_episode_json(episode) for episode in episodes]
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    if fmt == "xml":
        blocks = [f"<cite>{CITE_LINE}</cite>"] if cite and filled else []
        for scope, memories in filled:
            lines = "\n".join(f"- {n()}[{m.kind}] {escape(one_line(m.content))}" for m in memories)
            blocks.append(f"<{XML_TAGS[scope]}>\n{lines}\n</{XML_TAGS[scope]}>")
        if episodes:
            turns = "\n".join(_episode_xml(episode) for episode in episodes)
            blocks.append(f"<{EPISODES_TAG}>\n{turns}\n</{EPISODES_TAG}>")
        return "\n".join(blocks) + "\n"
    parts = []
    if filled:
        parts.append("## Memory")
        if cite:
            parts.append(CITE_LINE)
    for scope, memories in filled:
        parts.append(f"\n### {MARKDOWN_TITLES[scope]}")
        parts.extend(f"- {n()}{one_line(m.content)}" for m in memories)
    if episodes:
        parts.append(f"\n## {EPISODES_TITLE}" if filled else f"## {EPISODES_TITLE}")
        parts.extend(episode_line(episode) for episode in episodes)
    return "\n".join(parts) + "\n"


def references(selected: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each number of a cited block stands for: the memory's id, kind and page."""
    return [
        {"n": n, "id": entry["id"], "kind": entry["kind"], "url": memory_page_url(entry["id"])}
        for n, entry in enumerate(selected, start=1)
    ]


def _day(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


def episode_line(episode: Episode) -> str:
    """An episode in Markdown: "- [date] Speaker: text", after the turn it answers if shown."""
    turn, before = episode.turn, episode.reply_to
    said = f"{turn.speaker}: {turn.text}"
    if before is not None:
        said = f"{before.speaker}: {before.text} → {said}"
    return f"- [{_day(turn.sent_at)}] {said}"


def _episode_xml(episode: Episode) -> str:
    turns = [episode.reply_to, episode.turn] if episode.reply_to else [episode.turn]
    lines = "\n".join(f"{escape(turn.speaker)}: {escape(turn.text)}" for turn in turns)
    return f"<episode date={quoteattr(_day(episode.turn.sent_at))}>\n{lines}\n</episode>"


def _episode_json(episode: Episode) -> dict[str, Any]:
    item: dict[str, Any] = {
        "date": _day(episode.turn.sent_at),
        "speaker": episode.turn.speaker,
        "text": episode.turn.text,
    }
    if episode.reply_to is not None:
        item["reply_to"] = {"speaker": episode.reply_to.speaker, "text": episode.reply_to.text}
    return item


def episode_tokens(episode: Episode) -> int:
    return estimate_tokens(episode_line(episode) + "\n")


def episode_order(episode: Episode) -> tuple[datetime, int]:
    """Past turns are shown in the order they were said."""
    return (episode.turn.sent_at, episode.turn.message_id)


def memory_tokens(memory: RecalledMemory) -> int:
    return estimate_tokens(f"- {one_line(memory.content)}\n")


def block_order(memory: RecalledMemory) -> tuple[int, int, int]:
    return (0 if memory.pinned else 1, KIND_ORDER.get(memory.kind, len(KIND_ORDER)), memory.pk)


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
    # Number the memories for the model to cite (the user's show_citations; set by _build).
    cite: bool = False

    @property
    def depth(self) -> int:
        """How many hits each search (keyword, vector) contributes."""
        return max(self.limit, 40)

    @property
    def query(self) -> str:
        recent = [text for text in self.recent_messages if text.strip()][-RECENT_MESSAGES:]
        return "\n".join([*recent, self.message])


def _entry(item: ScoredMemory[RecalledMemory], tokens: int) -> dict[str, Any]:
    memory = item.memory
    return {
        "id": memory.pk,
        "kind": memory.kind,
        "scope": memory.scope,
        "project_id": memory.project_id,
        "pinned": memory.pinned,
        "content": memory.content,
        "score": item.score,
        "score_parts": item.parts,
        "tokens": tokens,
    }


def _empty(request: PreviewRequest, *, enabled: bool, reason: str, message: str) -> dict[str, Any]:
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


def _select(
    ranked: list[ScoredMemory[RecalledMemory]], request: PreviewRequest
) -> tuple[dict[str, list[tuple[ScoredMemory[RecalledMemory], int]]], list[dict[str, Any]]]:
    """Apply the limit, then each scope's budget, then the total budget (trim order)."""
    chosen: dict[str, list[tuple[ScoredMemory[RecalledMemory], int]]] = {
        scope: [] for scope in SCOPES
    }
    dropped: list[dict[str, Any]] = []
    used = dict.fromkeys(chosen, 0)
    for position, item in enumerate(ranked):
        tokens = memory_tokens(item.memory)
        scope = item.memory.scope
        if position >= request.limit:
            dropped.append({**_entry(item, tokens), "reason": "limit"})
        elif used[scope] + tokens > request.scope_budgets[scope]:
            dropped.append({**_entry(item, tokens), "reason": "scope_budget"})
        else:
            chosen[scope].append((item, tokens))
            used[scope] += tokens
    over = estimate_tokens(_render_chosen(chosen, request.fmt, cite=request.cite)) > request.budget
    for scope in TRIM_ORDER:
        while over and chosen[scope]:
            item, tokens = chosen[scope].pop()
            dropped.append({**_entry(item, tokens), "reason": "total_budget"})
            over = (
                estimate_tokens(_render_chosen(chosen, request.fmt, cite=request.cite))
                > request.budget
            )
    return chosen, dropped


def _render_chosen(
    chosen: dict[str, list[tuple[ScoredMemory[RecalledMemory], int]]],
    fmt: str,
    episodes: Sequence[Episode] = (),
    *,
    cite: bool = False,
) -> str:
    return render(
        {
            scope: sorted((item.memory for item, _tokens in items), key=block_order)
            for scope, items in chosen.items()
        },
        fmt,
        sorted(episodes, key=episode_order),
        cite=cite,
    )


def evidence_message_ids(memories: Iterable[RecalledMemory]) -> dict[int, set[int]]:
    """The messages each memory was extracted from (its evidence's message ids)."""
    found: dict[int, set[int]] = {}
    for memory in memories:
        evidence = memory.evidence
        if isinstance(evidence, str):
            evidence = json.loads(evidence)
        messages = found.setdefault(memory.pk, set())
        for item in evidence if isinstance(evidence, list) else []:
            if not isinstance(item, dict):
                continue
            raw = [*(item.get("messages") or []), *(item.get("message_ids") or [])]
            raw.append(item.get("message_id"))
            messages.update(int(value) for value in raw if str(value).isdigit())
    return found


def _drop_outscored_memories(
    chosen: dict[str, list[tuple[ScoredMemory[RecalledMemory], int]]],
    found: Sequence[Episode],
    sources: dict[int, set[int]],
) -> set[int]:
    """Of a memory and a turn it was extracted from, the better scored is injected: a chosen
    memory that a found turn outscores leaves ``chosen`` (pinned ones stay). The messages
    the remaining memories came from, which no turn may repeat."""
    best_turn: dict[int, float] = {episode.turn.message_id: episode.score for episode in found}
    for scope, items in chosen.items():
        chosen[scope] = [
            (item, tokens)
            for item, tokens in items
            if item.memory.pinned
            or not any(
                best_turn.get(message_id, -1.0) > item.score
                for message_id in sources.get(item.memory.pk, ())
            )
        ]
    kept = {item.memory.pk for items in chosen.values() for item, _tokens in items}
    return {message_id for pk in kept for message_id in sources.get(pk, ())}


def _select_episodes(
    found: Sequence[Episode],
    covered: set[int],
    request: PreviewRequest,
    room: int,
) -> list[Episode]:
    """The best past turns: none a chosen memory came from (``covered``), each turn shown
    once, at most ``request.limit`` of them in ``room`` tokens."""
    candidates = [
        episode
        for episode in found
        if episode.turn.message_id not in covered and episode.score >= request.min_score
    ][: 2 * request.limit]
    with_context(candidates)
    picked: list[Episode] = []
    shown = set(covered)
    used = 0
    for episode in candidates:
        if len(picked) >= request.limit:
            break
        if episode.turn.message_id in shown:
            continue
        if episode.reply_to is not None and episode.reply_to.message_id in shown:
            episode.reply_to = None
        episode.tokens = episode_tokens(episode)
        if used + episode.tokens > room:
            continue
        picked.append(episode)
        used += episode.tokens
        shown.update(episode.message_ids)
    return picked


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
    temporary = request.temporary or (
        request.conversation is not None and request.conversation.temporary
    )
    if not temporary:
        # The query's words are looked up on a side connection meanwhile.
        start_query_lexemes(request.query)
    context_started = time.perf_counter()
    context = preview_context(user, request.conversation)
    context_ms = ms_since(context_started)
    memory_settings = context.memory_settings
    if not memory_settings.memory_enabled:
        return _empty(
            request,
            enabled=False,
            reason="memory_disabled",
            message="Memory is off for this user; turn it on at /settings/memories.",
        )
    if memory_settings.privacy_paused:
        return _empty(
            request,
            enabled=False,
            reason="privacy_paused",
            message="The user paused memory (privacy): nothing is injected until they resume it.",
        )
    if temporary:
        return _empty(
            request,
            enabled=True,
            reason="temporary_conversation",
            message="This is a temporary (private) conversation: no memory is injected.",
        )
    request.cite = memory_settings.show_citations
    limit = api_token.limit if api_token is not None else ""
    if limit == TokenLimit.PROJECT and request.project is None and api_token is not None:
        # A token limited to one project recalls that project's memories.
        request.project = api_token.limit_project
    project_ids = context.project_ids
    past = context.past
    now = request.as_of or timezone.now()
    memory_search = None
    if "memories" in request.sources:
        pool = chat_pool(
            user,
            project=request.project,
            conversation=request.conversation,
            as_of=request.as_of,
            project_ids=project_ids,
        )
        pool = memories_for_token(pool, api_token)
        access = access_lexemes(user, project_ids)
        # The pool's projects: the one the chat names, if any.
        buckets = pool_buckets(user.pk, [request.project.pk] if request.project else [])
        memory_search = prepare_search(
            pool,
            request.query,
            depth=request.depth,
            access=access,
            buckets=buckets,
            rows_sql=RECALLED_SQL,
            also=pinned_ids(pool),
        )
    episode_search = None
    turns_project = None if limit else request.project
    if (
        "episodes" in request.sources
        and memory_settings.reference_past_conversations
        # The user's own conversations are no project's: not for a project-limited token.
        and limit != TokenLimit.PROJECT
        # Without a conversation of theirs, nor a project's, there is no past turn to search.
        and (past.any or (turns_project is not None and turns_project.pk in project_ids))
    ):
        episodes_started = time.perf_counter()
        # Started once the memories' search is made: the side connection's thread makes the
        # turns' search while this one waits for the memories' statement, not before it.
        episode_search = start_episode_search(
            episode_pool(
                user,
                project=turns_project,
                project_ids=project_ids,
                conversation=request.conversation,
                as_of=request.as_of,
            ),
            request.query,
        )
    timings = {"context_ms": context_ms}
    ranking = None
    if memory_search is not None:
        ranking = memory_search.run()
        timings.update(ranking.timings_ms)
    ranking_started = time.perf_counter()
    intent = query_intent(request.query, past.names)
    degraded = None
    ranked: list[ScoredMemory[RecalledMemory]] = []
    if ranking is not None:
        degraded = ranking.degraded
        candidates = [RecalledMemory(pk, *row) for pk, row in ranking.rows.items()]
        ranked = [
            item
            for item in scored(candidates, ranking.matches, now, intent)
            if item.memory.pinned or item.score >= request.min_score
        ]
        ranked.sort(key=lambda item: (not item.memory.pinned, -item.score, item.memory.pk))
    chosen, dropped = _select(ranked, request)
    timings["ranking_ms"] = ms_since(ranking_started)
    episodes: list[Episode] = []
    if episode_search is not None:
        search = episode_search(intent, now)
        covered: set[int] = set()
        if search.episodes:
            sources = evidence_message_ids(
                item.memory for items in chosen.values() for item, _ in items
            )
            covered = _drop_outscored_memories(chosen, search.episodes, sources)
        used = sum(tokens for _item, tokens in chosen["conversation"])
        episodes = _select_episodes(
            search.episodes, covered, request, request.scope_budgets["conversation"] - used
        )
        # Over the total budget, past turns go first (the memories alone fit: ``_select``).
        episodes.sort(key=lambda episode: (-episode.score, episode.turn.message_id))
        while episodes and estimate_tokens(
            _render_chosen(chosen, request.fmt, episodes, cite=request.cite)
        ) > (request.budget):
            episodes.pop()
        timings["episodes_ms"] = ms_since(episodes_started)
        if degraded is None and search.ranking is not None:
            degraded = search.ranking.degraded
    episodes.sort(key=episode_order)
    block = _render_chosen(chosen, request.fmt, episodes, cite=request.cite)
    block_hash = hashlib.sha256(block.encode()).hexdigest()
    selected = [
        _entry(item, tokens)
        for scope in SCOPES
        for item, tokens in sorted(chosen[scope], key=lambda pair: block_order(pair[0].memory))
    ]
    if (selected or episodes) and not request.dry_run:
        # Bookkeeping: written after the answer (recall.bookkeeping).
        record_access(
            user=user,
            memory_ids=[entry["id"] for entry in selected],
            api_token=api_token,
            client=client,
            conversation=request.conversation,
            block_hash=block_hash,
            message_ids=[m for episode in episodes for m in episode.message_ids],
            query=request.message,
        )
    return {
        "enabled": True,
        "reason": None,
        "message": "",
        "format": request.fmt,
        "block": block,
        "hash": block_hash,
        "memories": selected,
        "references": references(selected) if request.cite else [],
        "episodes": [episode.entry() for episode in episodes],
        "dropped": dropped,
        "tokens": {
            **{scope: sum(tokens for _item, tokens in items) for scope, items in chosen.items()},
            "episodes": sum(episode.tokens for episode in episodes),
            "total": estimate_tokens(block),
        },
        "budget": {"total": request.budget, **request.scope_budgets},
        "degraded": degraded.as_dict() if degraded else fallback_degraded(),
        "dry_run": request.dry_run,
        "timing_ms": timings,
    }
