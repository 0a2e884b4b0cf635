"""Episodic recall: the past turns of conversations that answer a query.

Memories are what extraction kept; the turns themselves often say more (what exactly was
said, when, by whom). The stored messages of conversations that are not temporary are
searched with the search engine memories use (``search.hybrid``: BM25 over the turns'
search vectors, the vector search over their embeddings when they find meaning, weighted
reciprocal rank fusion); a turn of the days the query speaks of, or that names a date for a
question asking when, keeps more of its relevance (``search.ranking.QueryIntent``).

Which turns: those of the user's own conversations, and of the conversations of the project
the chat names when the user may read it (as with project memories, a project's past is
brought only into chats about that project); sent at or before ``as_of``; never a temporary
conversation's; not the current conversation's latest turns (the client sends those itself).

An episode is one turn, shown with its neighbours when one answers the other
(``answers``): a short reply means little alone, and a question's answer follows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db.models import Q, Subquery

from conversations.models import Conversation, Message, MessageQuerySet, MessageRole
from core import side_connections
from memories.models import one_line
from search.buckets import ALL_BUCKETS, pool_buckets
from search.hybrid import PreparedSearch, Ranking, prepare_search, vector_weight
from search.ranking import RECENCY_HALF_LIFE_DAYS, WEIGHTS, QueryIntent
from teams.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The fusion's weights of the keyword and the vector list for turns (memories': 1.0, 0.5).
EPISODE_KEYWORD_WEIGHT = 1.0
EPISODE_VECTOR_WEIGHT = 0.5
# What a turn's score has beside its relevance, in place of a memory's importance,
# confidence and use: a turn is what was said (confidence 1), of middling importance.
EPISODE_IMPORTANCE = 0.9
EPISODE_CONFIDENCE = 1.0
# The current conversation's latest turns are left out: the client sends up to this many.
CURRENT_RECENT_TURNS = 20
# How many turns each search (keyword, vector) contributes.
EPISODE_DEPTH = 20
# A reply this short (in words) comes with the turn it answers.
SHORT_REPLY_WORDS = 20
# A turn is shown up to this many characters.
MAX_TURN_CHARS = 600
# The keyword search's terms match at most about this many turns (as statistics tell):
# BM25 costs ~10 µs a match, and a share of a large table grows with it.
EPISODE_MAX_MATCH_ROWS = 1000
# Turns over this many go to the HNSW index when it reaches enough of them (exact ranking
# costs ~3 µs a turn, HNSW ~3 ms), not over memories' EXACT_VECTOR_LIMIT (20,000).
EPISODE_EXACT_VECTOR_LIMIT = 2000


@dataclass(frozen=True)
class Turn:
    message_id: int
    conversation_id: int
    position: int
    role: str
    speaker: str
    sent_at: datetime
    text: str


@dataclass
class Episode:
    """A past turn that answers the query, with the turn it answers (``reply_to``) and the
    turn that answers it (``answered_by``) when shown."""

    turn: Turn
    score: float
    parts: dict[str, Any]
    reply_to: Turn | None = None
    answered_by: Turn | None = None
    tokens: int = 0
    # Its neighbours in its conversation (None at either end), read with it by the search
    # (``TURNS_SQL``): ``with_context`` decides whether to show them.
    before: Turn | None = field(default=None, repr=False)
    after: Turn | None = field(default=None, repr=False)

    @property
    def turns(self) -> list[Turn]:
        """The turns shown, in the order they were said."""
        return [turn for turn in (self.reply_to, self.turn, self.answered_by) if turn]

    @property
    def message_ids(self) -> list[int]:
        return [turn.message_id for turn in self.turns]

    def entry(self) -> dict[str, Any]:
        """As the preview's ``episodes`` list shows it."""
        turn = self.turn
        return {
            "id": turn.message_id,
            "message_id": turn.message_id,
            "message_ids": self.message_ids,
            "conversation_id": turn.conversation_id,
            "speaker": turn.speaker,
            "role": turn.role,
            "sent_at": turn.sent_at,
            "text": turn.text,
            "reply_to": _turn_entry(self.reply_to),
            "answered_by": _turn_entry(self.answered_by),
            "score": self.score,
            "score_parts": self.parts,
            "tokens": self.tokens,
        }


def _turn_entry(turn: Turn | None) -> dict[str, Any] | None:
    if turn is None:
        return None
    return {
        "message_id": turn.message_id,
        "speaker": turn.speaker,
        "sent_at": turn.sent_at,
        "text": turn.text,
    }


@dataclass
class EpisodeSearch:
    episodes: list[Episode]
    ranking: Ranking | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodePool:
    """The turns a chat may be reminded of, and the vector buckets they are in: a turn is in
    its conversation's owner's (``Message.vector_bucket``), so a project's, whose members
    and former members own its conversations, may be in any."""

    messages: MessageQuerySet
    buckets: tuple[int, ...]


def episode_pool(
    user: User,
    *,
    project: Project | None,
    project_ids: Sequence[int],
    conversation: Conversation | None = None,
    as_of: datetime | None = None,
) -> EpisodePool:
    """The turns a chat may be reminded of (see the module docstring)."""
    # The message's own copy of its owner (``Message.owner``), not its conversation's.
    visible = Q(owner=user)
    buckets = pool_buckets(user.pk)
    if project is not None and project.pk in project_ids:
        visible |= Q(conversation__project=project)
        buckets = ALL_BUCKETS
    messages = Message.objects.searchable().filter(visible)
    if as_of is not None:
        messages = messages.filter(sent_at__lte=as_of)
    if conversation is not None:
        # A subquery each search runs (an index lookup), not a query before the searches.
        last = conversation.messages.order_by("-position").values("position")[:1]
        messages = messages.exclude(
            conversation=conversation, position__gt=Subquery(last) - CURRENT_RECENT_TURNS
        )
    # Unordered: Message's default ordering (by conversation's created_at, position) made
    # every search sort all its candidates (100,000 vectors: a 150 MB sort on disk).
    return EpisodePool(messages.order_by(), buckets)


def _speaker(participants: Any, role: str, speaker: str) -> str:
    if speaker:
        return speaker
    for participant in participants if isinstance(participants, list) else []:
        if isinstance(participant, dict) and participant.get("role") == role:
            return str(participant.get("name") or "")
    return str(MessageRole(role).label) if role in MessageRole.values else role.title()


def _short(text: str) -> str:
    text = one_line(text)
    return text if len(text) <= MAX_TURN_CHARS else text[: MAX_TURN_CHARS - 1].rstrip() + "…"


# The columns of each turn the search found (``search.hybrid.prepare_search``'s ``rows_sql``):
# the turn, its conversation's participants, and the turns before and after it (if any), in
# the search's own statement. The participants by a subquery per turn, not a join: for a
# user with 5,000 conversations the planner hashed all of them for 100 turns.
_NEIGHBOUR_COLUMNS = "{n}.id, {n}.role, {n}.speaker, {n}.sent_at, {n}.content"
TURNS_SQL = (
    "SELECT found.*, turn.conversation_id, turn.position, turn.role, turn.speaker, "
    "turn.sent_at, turn.content, "
    f"(SELECT participants FROM {Conversation._meta.db_table} AS conversation "
    "WHERE conversation.id = turn.conversation_id), "
    f"{_NEIGHBOUR_COLUMNS.format(n='before')}, {_NEIGHBOUR_COLUMNS.format(n='after')} "
    f"FROM found JOIN {Message._meta.db_table} AS turn ON turn.id = found.id "
    f"LEFT JOIN {Message._meta.db_table} AS before "
    "ON before.conversation_id = turn.conversation_id AND before.position = turn.position - 1 "
    f"LEFT JOIN {Message._meta.db_table} AS after "
    "ON after.conversation_id = turn.conversation_id AND after.position = turn.position + 1"
)


def read_turns(
    rows: dict[int, tuple[Any, ...]],
) -> dict[int, tuple[Turn, Turn | None, Turn | None]]:
    """Each turn of TURNS_SQL's ``rows`` (by id), with the turns before and after it."""
    loaded = {}
    # Each distinct list of participants decoded once: the turns of a search mostly come from
    # conversations of the same people.
    decoded: dict[str, Any] = {}
    for pk, row in rows.items():
        conversation_id, position, role, speaker, sent_at, content, participants = row[:7]
        if isinstance(participants, str):
            if participants not in decoded:
                decoded[participants] = json.loads(participants)
            participants = decoded[participants]
        at = (conversation_id, position, participants)
        turn = _turn(at, 0, (pk, role, speaker, sent_at, content))
        assert turn is not None
        loaded[pk] = (turn, _turn(at, -1, row[7:12]), _turn(at, 1, row[12:17]))
    return loaded


def _turn(at: tuple[int, int, Any], offset: int, columns: Sequence[Any]) -> Turn | None:
    """The turn ``offset`` from the one at ``at`` (its conversation, position and the
    conversation's participants), from its ``columns``; None when there is none."""
    conversation_id, position, participants = at
    message_id, role, speaker, sent_at, content = columns
    if message_id is None:
        return None
    return Turn(
        message_id,
        conversation_id,
        position + offset,
        role,
        _speaker(participants, role, speaker),
        sent_at,
        _short(content),
    )


def answers(turn: Turn, previous: Turn) -> bool:
    """Whether ``turn`` is best shown with ``previous``, the turn before it: another
    speaker's question, or any of theirs when the reply is short."""
    if previous.speaker == turn.speaker:
        return False
    return previous.text.rstrip().endswith(("?", "？")) or (
        len(turn.text.split()) <= SHORT_REPLY_WORDS
    )


def episode_score(relevance: float, sent_at: datetime, now: datetime) -> tuple[float, float]:
    """(score, recency) of a turn: memories' weights (``search.ranking.WEIGHTS``), with a
    turn's importance and confidence (EPISODE_IMPORTANCE, EPISODE_CONFIDENCE), its recency
    from when it was said, and no use."""
    age_days = max((now - sent_at).total_seconds() / 86400, 0.0)
    recency = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
    score = (
        WEIGHTS["relevance"] * relevance
        + WEIGHTS["importance"] * EPISODE_IMPORTANCE
        + WEIGHTS["confidence"] * EPISODE_CONFIDENCE
        + WEIGHTS["recency"] * recency
    )
    return round(score, 6), recency


def search_episodes(
    pool: EpisodePool, query: str, keyword_text: str | None = None
) -> PreparedSearch:
    """The search of the turns of ``pool`` that answer ``query``, with their columns
    (TURNS_SQL); ``keyword_text``: what the keyword search looks for, if not all of it."""
    return prepare_search(
        pool.messages,
        query,
        depth=EPISODE_DEPTH,
        buckets=pool.buckets,
        weights=(EPISODE_KEYWORD_WEIGHT, vector_weight(EPISODE_VECTOR_WEIGHT)),
        max_match_rows=EPISODE_MAX_MATCH_ROWS,
        exact_vector_limit=EPISODE_EXACT_VECTOR_LIMIT,
        rows_sql=TURNS_SQL,
        keyword_text=keyword_text,
    )


def start_episode_search(
    pool: EpisodePool, query: str, intent: QueryIntent
) -> Callable[[datetime], EpisodeSearch]:
    """Start searching the turns of ``pool`` that answer ``query`` on a side connection: its
    thread makes the statement and runs it while the caller waits for its own (the memories'
    search, made before this starts); the function returned takes the time the preview is
    asked at and gives the turns, best first (ties by id)."""
    ranking = side_connections.start(_run_search, pool, query, intent.words)
    return lambda now: scored_episodes(ranking.result(), intent, now)


def _run_search(pool: EpisodePool, query: str, keyword_text: str) -> Ranking:
    return search_episodes(pool, query, keyword_text).run()


def scored_episodes(ranking: Ranking, intent: QueryIntent, now: datetime) -> EpisodeSearch:
    turns = read_turns(ranking.rows)
    episodes = []
    for message_id, match in ranking.matches.items():
        if message_id not in turns:
            continue
        turn, before, after = turns[message_id]
        dated = intent.dated(turn.text, day=turn.sent_at.date())
        relevance = match["relevance"] * intent.factor(dated)
        score, recency = episode_score(relevance, turn.sent_at, now)
        parts = {
            "relevance": round(relevance, 6),
            "recency": round(recency, 6),
            "keyword_rank": match["keyword_rank"],
            "vector_rank": match["vector_rank"],
            "similarity": match["similarity"],
            "dated": dated,
        }
        episodes.append(Episode(turn, score, parts, before=before, after=after))
    episodes.sort(key=lambda episode: (-episode.score, episode.turn.message_id))
    return EpisodeSearch(episodes, ranking, dict(ranking.timings_ms))


def with_context(episode: Episode, hidden: set[int]) -> None:
    """Show the episode's neighbours where one answers the other (``answers``), unless
    they are ``hidden`` (shown already, or what a memory injected came from)."""
    before, after = episode.before, episode.after
    if before is not None and before.message_id not in hidden and answers(episode.turn, before):
        episode.reply_to = before
    if after is not None and after.message_id not in hidden and answers(after, episode.turn):
        episode.answered_by = after
