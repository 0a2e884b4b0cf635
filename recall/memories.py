"""The memories a preview may inject, searched and scored (``search.hybrid``,
``search.ranking``), read as plain rows.

Which memories: what the chat may be given (``memories.search.chat_pool``: personal ones,
the named project's, the named conversation's), narrowed to what the API token may read.
Pinned memories are always candidates, whatever the query.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import date, datetime
from typing import Any

from django.db.models import QuerySet

from memories.models import Memory, MemoryQuerySet, evidence_message_ids, parse_event_date
from search.hybrid import KEYWORD_WEIGHT, PreparedSearch, Ranking, prepare_search, vector_weight
from search.ranking import QueryIntent, ScoredMemory, scored

# Pinned memories are always candidates, up to this many (the first made).
PINNED_LIMIT = 100
# The vector list's weight in the fusion (the keyword list's is 1): what is said in other words.
MEMORY_VECTOR_WEIGHT = 0.5


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
    # Its evidence (JSON, maybe still as text): the messages it was extracted from.
    evidence: Any = None
    # The day what it tells happened (its metadata's ``event_date``), when it says.
    event_date: date | None = None

    @property
    def source_message_ids(self) -> list[int]:
        """The messages it was extracted from."""
        evidence = json.loads(self.evidence) if isinstance(self.evidence, str) else self.evidence
        return evidence_message_ids(evidence)


# The columns the preview scores and shows of each memory found (RecalledMemory's), read by
# the search's own statement (``rows_sql``), as plain rows.
_READ_COLUMNS = [column.name for column in fields(RecalledMemory)][1:-1]
RECALLED_SQL = (
    "SELECT found.*, "
    + ", ".join(f"memory.{name}" for name in _READ_COLUMNS)
    + ", memory.metadata ->> 'event_date' "
    f"FROM found JOIN {Memory._meta.db_table} AS memory ON memory.id = found.id"
)


def pinned_ids(pool: MemoryQuerySet) -> QuerySet[Any, Any]:
    """The first PINNED_LIMIT pinned memories of ``pool``: candidates whatever the query."""
    return pool.filter(pinned=True).order_by("id").values("id")[:PINNED_LIMIT]


def search_memories(
    pool: MemoryQuerySet,
    query: str,
    intent: QueryIntent,
    *,
    depth: int,
    access: Iterable[str],
    buckets: tuple[int, ...],
) -> PreparedSearch:
    """The search of ``pool`` for ``query`` (its words as ``intent`` says), its pinned
    memories with what it finds."""
    return prepare_search(
        pool,
        query,
        depth=depth,
        access=tuple(access),
        buckets=buckets,
        rows_sql=RECALLED_SQL,
        also=pinned_ids(pool),
        keyword_text=intent.words,
        weights=(KEYWORD_WEIGHT, vector_weight(MEMORY_VECTOR_WEIGHT)),
    )


def scored_memories(
    ranking: Ranking, intent: QueryIntent, now: datetime
) -> list[ScoredMemory[RecalledMemory]]:
    """The memories found (and the pinned ones), scored, best first (ties by id)."""
    candidates = [
        RecalledMemory(
            pk=pk,
            **dict(zip(_READ_COLUMNS, row[:-1], strict=True)),
            event_date=parse_event_date(row[-1]),
        )
        for pk, row in ranking.rows.items()
    ]
    return scored(candidates, ranking.matches, now, intent)
