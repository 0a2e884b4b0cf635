"""Reconciliation: what each candidate does to the memories that exist.

For each candidate, against the memories of the same owner (personal) or the
same project:

- a reviewer rejected it before (a near-duplicate is rejected) → nothing is
  created; the rejected memory's history notes it came up again;
- a near-duplicate exists (word / CJK-bigram Jaccard ≥ MEMORY_DUPLICATE_JACCARD,
  cosine ≥ MEMORY_DUPLICATE_COSINE between embeddings, or the same subject
  and value) that gives the same details (numbers, days, times of day, things:
  see details.py) → that memory gains confidence and the new evidence;
- a memory says something else about the same attribute (the same subject, whatever
  the kind: ``duplicates.attribute_of``) →
  the later of the two (by ``valid_from``: when its message was sent)
  supersedes the earlier: a new memory from a later message supersedes the
  current one (at once when the new one is active; when it awaits review,
  on acceptance), and one from an earlier message that arrives afterwards
  is kept as history, superseded by the current one at once;
- otherwise → a new memory, pending when the owner wants review.

A new memory is valid from its source message's ``sent_at`` (the latest of
its evidence messages; now for a summary item), keeps the day the statement
is about in ``metadata["event_date"]`` and, when the statement is about
someone other than the account's user, their name in ``metadata["speaker"]``.

Callers run this inside one transaction with the run, so a run's changes
are all there or none are.

A run's candidates are looked up together: one query finds, for every
candidate of a pool, the memories sharing its rarest words and those about
the same subject; one more finds vector neighbours for the candidates still
unmatched (only those are embedded). The decisions are then made in order in Python, seeing what the
earlier candidates of the run created and superseded, and all writes go out
together through ``MemoryWrites``.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from pgvector.django import VectorField

from conversations.extraction import Candidate
from conversations.extraction.details import differ
from conversations.models import Conversation
from memories.duplicates import (
    EXACT_SEARCH_MAX_ROWS,
    attribute_of,
    jaccard,
    prefilter_query,
    same_attribute_subjects,
    words_of,
)
from memories.models import Memory, Origin, Scope, Status, state_sql
from memories.services import MemoryWrites, new_memory
from search.buckets import vector_bucket
from search.embeddings import dimension_conflict, get_provider
from search.table_statistics import StatisticsCache
from search.textsearch import SEARCH_CONFIG
from search.vectors import CLEARLY_LARGE
from teams.models import Project
from teams.permissions import can_write_project

logger = logging.getLogger(__name__)

ACTOR_LABEL = "extraction"
CONFIDENCE_BOOST = 0.1
# How many keyword matches are compared word by word with a candidate.
_TEXT_MATCH_LIMIT = 50
# The index of the pool's bucket (models.VECTOR_BUCKETS) returns its nearest rows, nearest
# first: a pool's near-duplicate is missed only when this many memories of other pools in
# the bucket are nearer still.
HNSW_EF_SEARCH = 64

_MEMORY = Memory._meta.db_table
# Planner estimates of pools' sizes, by (scope, owner or project id).
_pool_estimates: StatisticsCache[tuple[str, int], int] = StatisticsCache()
_COLUMNS = (
    "m.id, m.content, m.kind, m.status, m.metadata->>'subject', m.metadata->>'value',"
    " m.created_at, m.valid_from"
)
_POOLS = {
    Scope.USER: "m.scope = 'user' AND m.owner_id = %(pool)s",
    Scope.PROJECT: "m.scope = 'project' AND m.project_id = %(pool)s",
}
# Alive, in the pool, and either rejected or still current.
_CANDIDATE_ROWS = (
    f"{state_sql('alive', 'm')} AND {{pool}}"
    f" AND ({state_sql('rejected', 'm')} OR {state_sql('current', 'm')})"
)
# Each candidate's tsquery is parsed once (MATERIALIZED): written inside the lateral
# subquery, to_tsquery ran again for every row of the pool a plan filtered by owner read.
_WORDS_AND_SUBJECTS_SQL = f"""
WITH c AS MATERIALIZED (
    SELECT i, kind, subject,
           CASE WHEN query <> '' THEN to_tsquery('{SEARCH_CONFIG}', query) END AS tsquery
    FROM unnest(%(queries)s::text[], %(kinds)s::text[], %(subjects)s::text[])
        WITH ORDINALITY AS c(query, kind, subject, i)
)
SELECT c.i, found.* FROM c
CROSS JOIN LATERAL (
    (SELECT {_COLUMNS} FROM {_MEMORY} m
     WHERE {_CANDIDATE_ROWS} AND c.tsquery IS NOT NULL AND m.search_vector @@ c.tsquery
     LIMIT {_TEXT_MATCH_LIMIT})
    UNION
    (SELECT {_COLUMNS} FROM {_MEMORY} m
     WHERE {_CANDIDATE_ROWS} AND c.subject <> '' AND m.metadata ? 'subject'
       AND m.metadata->>'subject' = ANY(string_to_array(c.subject, '|')))
) found
"""
# The pool counted up to just past the exact-search limit, from an index (an upper bound:
# deleted, forgotten and superseded rows count too).
_POOL_SIZE_SQL = f"""
SELECT count(*) FROM (SELECT 1 FROM {_MEMORY} m WHERE {{pool}} LIMIT {EXACT_SEARCH_MAX_ROWS + 1}) pool
"""
# The planner's estimate of the pool's size (planning only).
_POOL_ESTIMATE_SQL = f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {_MEMORY} m WHERE {{pool}}"
# A filtered HNSW search returns the nearest rows of every owner and filters
# afterwards; an exact scan of a small pool is fast (one pass over the pool for
# all candidates) and never misses. Over a large pool an exact scan is slow, and
# the index finds near-duplicates, which are very close, reliably.
_EXACT_NEIGHBOURS_SQL = f"""
SELECT c.i, {_COLUMNS}, m.embedding <=> c.v AS distance
FROM {_MEMORY} m CROSS JOIN unnest(%(vectors)s::text[]::vector[]) WITH ORDINALITY AS c(v, i)
WHERE {_CANDIDATE_ROWS} AND m.embedding_model = %(model)s
  AND (m.embedding <=> c.v) <= %(max_distance)s
"""
# The search width is set for the run's transaction in the same round trip.
_INDEXED_NEIGHBOURS_SQL = f"""
SELECT set_config('hnsw.ef_search', '{HNSW_EF_SEARCH}', true);
SELECT c.i, found.* FROM unnest(%(vectors)s::text[]::vector[]) WITH ORDINALITY AS c(v, i)
CROSS JOIN LATERAL (
    SELECT {_COLUMNS}, near.distance FROM (
        SELECT n.id, n.embedding <=> c.v AS distance FROM {_MEMORY} n
        WHERE n.vector_bucket = %(bucket)s AND n.embedding_model = %(model)s
        ORDER BY n.embedding <=> c.v
        LIMIT {HNSW_EF_SEARCH}
    ) near JOIN {_MEMORY} m ON m.id = near.id
    WHERE {_CANDIDATE_ROWS} AND m.embedding_model = %(model)s AND near.distance <= %(max_distance)s
    LIMIT {_TEXT_MATCH_LIMIT}
) found
"""


@dataclass
class Tally:
    created: int = 0
    merged: int = 0
    superseded: int = 0
    skipped: int = 0


@dataclass(eq=False)
class Known:
    """A memory as reconciliation sees it: one that exists, or one this run creates."""

    content: str
    kind: str
    status: str
    subject: str
    value: str
    created_at: datetime
    valid_from: datetime
    existing_id: int | None = None
    created: Memory | None = None
    superseded: bool = False

    @property
    def words(self) -> frozenset[str]:
        return words_of(self.content)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Known:
        pk, content, kind, status, subject, value, created_at, valid_from = row[:8]
        return cls(
            content,
            kind,
            status,
            subject or "",
            value or "",
            created_at,
            valid_from,
            existing_id=pk,
        )

    @property
    def memory(self) -> Memory:
        """The memory writes name: the new one itself, or an existing one by its id (and
        valid_from, which superseding another by it needs)."""
        if self.created is not None:
            return self.created
        return Memory(pk=self.existing_id, valid_from=self.valid_from)

    @property
    def current(self) -> bool:
        """Still says what is true (or was rejected): what a candidate is compared with."""
        return self.status == Status.REJECTED or not self.superseded


@dataclass
class Lookup:
    """What the database holds that may matter to one candidate."""

    by_words: list[Known] = field(default_factory=list)
    by_subject: list[Known] = field(default_factory=list)
    by_vector: list[tuple[float, Known]] = field(default_factory=list)


class Reconciler:
    """Reconciles one run's candidates for one conversation."""

    def __init__(
        self,
        *,
        conversation: Conversation,
        run_id: int,
        batch: uuid.UUID,
        review: bool,
        sent_at: dict[int, datetime] | None = None,
    ):
        self.conversation = conversation
        # When each window message was sent, by id: what a memory is valid from.
        self.sent_at = sent_at or {}
        self.owner = conversation.owner
        self.run_id = run_id
        self.batch = batch
        self.status = Status.PENDING if review else Status.ACTIVE
        project = conversation.project
        self.project: Project | None = (
            project if project is not None and can_write_project(self.owner, project) else None
        )
        self.threshold = settings.MEMORY_DUPLICATE_JACCARD
        self.tally = Tally()
        self.writes = MemoryWrites(actor_label=ACTOR_LABEL, batch=batch)
        self._known: dict[int, Known] = {}
        self._created: dict[str, list[Known]] = defaultdict(list)

    def _scope(self, candidate: Candidate) -> str:
        if candidate.about_project and self.project is not None:
            return Scope.PROJECT
        return Scope.USER

    def _pool_parameter(self, scope: str) -> int:
        return self.project.pk if scope == Scope.PROJECT and self.project else self.owner.pk

    def reconcile(self, candidates: list[Candidate]) -> Tally:
        if not candidates:
            return self.tally
        vectors: list[list[float] | None] = [None] * len(candidates)
        lookups = [Lookup() for _candidate in candidates]
        by_scope: dict[str, list[int]] = defaultdict(list)
        for index, candidate in enumerate(candidates):
            by_scope[self._scope(candidate)].append(index)
        for scope, indexes in by_scope.items():
            self._find_words_and_subjects(scope, [candidates[i] for i in indexes], indexes, lookups)
            # Only a candidate that no memory matches by words needs its vector: to look for
            # neighbours, and to be stored with the memory it may become. (One created all
            # the same, rarely, gets an embedding job.)
            unmatched = [i for i in indexes if self._same_in(candidates[i], lookups[i]) is None]
            if not unmatched:
                continue
            embedded = self._embed([candidates[i].content for i in unmatched])
            for index, vector in zip(unmatched, embedded, strict=True):
                vectors[index] = vector
            searched = [i for i in unmatched if vectors[i] is not None]
            if searched:
                self._find_neighbours(scope, [vectors[i] for i in searched], searched, lookups)
        for candidate, lookup, vector in zip(candidates, lookups, vectors, strict=True):
            self._reconcile_one(candidate, lookup, vector)
        self.writes.save()
        return self.tally

    def _embed(self, texts: list[str]) -> list[list[float] | None]:
        if dimension_conflict():
            # The stored vectors cannot be compared with these; embed_memories --rebuild fixes it.
            return [None] * len(texts)
        try:
            return list(get_provider().embed(texts))
        except Exception:
            # Reconciliation still works on words; the memories get embedded later.
            logger.warning("Embedding extraction candidates failed", exc_info=True)
            return [None] * len(texts)

    def _rows(self, sql: str, scope: str, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(
                sql.replace("{pool}", _POOLS[Scope(scope)]),
                {"pool": self._pool_parameter(scope), **parameters},
            )
            while cursor.nextset():  # The rows of the last statement.
                pass
            return cursor.fetchall()

    def _known_from(self, row: tuple[Any, ...]) -> Known:
        """One object per memory, however many candidates found it."""
        if row[0] not in self._known:
            self._known[row[0]] = Known.from_row(row)
        return self._known[row[0]]

    def _find_words_and_subjects(
        self, scope: str, candidates: list[Candidate], indexes: list[int], lookups: list[Lookup]
    ) -> None:
        rows = self._rows(
            _WORDS_AND_SUBJECTS_SQL,
            scope,
            {
                "queries": [
                    prefilter_query(words_of(c.content), self.threshold) for c in candidates
                ],
                "kinds": [c.kind for c in candidates],
                # Every subject about the same attribute, whatever the kind.
                "subjects": ["|".join(same_attribute_subjects(c.subject)) for c in candidates],
            },
        )
        for position, *memory_row in sorted(rows, key=lambda row: (row[0], row[1])):
            index, candidate = indexes[position - 1], candidates[position - 1]
            known = self._known_from(tuple(memory_row))
            if candidate.subject and attribute_of(known.subject) == attribute_of(candidate.subject):
                lookups[index].by_subject.append(known)
            if known.words & words_of(candidate.content):
                lookups[index].by_words.append(known)

    def _find_neighbours(
        self,
        scope: str,
        vectors: list[list[float] | None],
        indexes: list[int],
        lookups: list[Lookup],
    ) -> None:
        model = get_provider().model_name
        sql = _INDEXED_NEIGHBOURS_SQL if self._pool_is_large(scope) else _EXACT_NEIGHBOURS_SQL
        vector_field = VectorField()
        rows = self._rows(
            sql,
            scope,
            {
                "vectors": [vector_field.get_prep_value(vector) for vector in vectors],
                "model": model,
                "bucket": vector_bucket(self._pool_parameter(scope)),
                "max_distance": 1 - settings.MEMORY_DUPLICATE_COSINE,
            },
        )
        for position, *memory_row, distance in rows:
            lookups[indexes[position - 1]].by_vector.append(
                (distance, self._known_from(tuple(memory_row)))
            )

    def _pool_is_large(self, scope: str) -> bool:
        """Whether the pool holds more than EXACT_SEARCH_MAX_ROWS memories: so when the
        planner's estimate (kept a few minutes) says clearly more, as ``vector_plan`` decides
        for recall; counted otherwise. Counting took a round trip and ~0.6 ms of a big pool's
        run."""
        estimate = _pool_estimates.get(
            (scope, self._pool_parameter(scope)), partial(self._estimated_pool_size, scope)
        )
        if estimate > CLEARLY_LARGE * EXACT_SEARCH_MAX_ROWS:
            return True
        return int(self._rows(_POOL_SIZE_SQL, scope, {})[0][0]) > EXACT_SEARCH_MAX_ROWS

    def _estimated_pool_size(self, scope: str) -> int:
        (plan,) = self._rows(_POOL_ESTIMATE_SQL, scope, {})[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        return int(plan[0]["Plan"]["Plan Rows"])

    def _same_in(self, candidate: Candidate, lookup: Lookup) -> Known | None:
        """A current memory (or a rejected one) that says what the candidate says."""
        created = self._created[self._scope(candidate)]
        candidate_terms = words_of(candidate.content)
        best: tuple[float, Known] | None = None
        for known in [*lookup.by_words, *created]:
            score = jaccard(candidate_terms, known.words)
            if (
                known.current
                and score >= self.threshold
                and (best is None or score > best[0])
                and not differ(candidate.content, known.content)
            ):
                best = (score, known)
        if best is not None:
            return best[1]
        if candidate.subject and candidate.value:
            for known in [*lookup.by_subject, *created]:
                if (
                    known.current
                    and known.kind == candidate.kind
                    and known.subject == candidate.subject
                    and known.value == candidate.value
                    and not differ(candidate.content, known.content)
                ):
                    return known
        close = [
            (distance, known)
            for distance, known in lookup.by_vector
            if known.current and not differ(candidate.content, known.content)
        ]
        if close:
            return min(close, key=lambda pair: pair[0])[1]
        return None

    def _contradicted(self, candidate: Candidate, lookup: Lookup) -> Known | None:
        """The current memory about the same attribute, whatever its kind, that says
        something else (``duplicates.attribute_of``)."""
        if not candidate.subject:
            return None
        created = self._created[self._scope(candidate)]
        found = [
            known
            for known in [*lookup.by_subject, *created]
            if known.status in (Status.ACTIVE, Status.PENDING)
            and not known.superseded
            and attribute_of(known.subject) == attribute_of(candidate.subject)
            and known.value != candidate.value
        ]
        return max(found, key=lambda known: (known.valid_from, known.created_at), default=None)

    def _valid_from(self, candidate: Candidate) -> datetime:
        """When its latest source message was sent; now for a statement without one (and
        for a message dated in the future by a client's clock: recall injects only what is
        valid now)."""
        now = timezone.now()
        sent = [self.sent_at[i] for i in candidate.message_ids if i in self.sent_at]
        return min(max(sent), now) if sent else now

    def _reconcile_one(
        self, candidate: Candidate, lookup: Lookup, vector: list[float] | None
    ) -> None:
        evidence = candidate.evidence(conversation_id=self.conversation.pk, run_id=self.run_id)
        same = self._same_in(candidate, lookup)
        if same is not None and same.status == Status.REJECTED:
            self.writes.note_rejected_again(same.memory)
            self.tally.skipped += 1
            return
        if same is not None:
            self.writes.merge_evidence(
                same.memory, evidence=evidence, confidence_boost=CONFIDENCE_BOOST
            )
            self.tally.merged += 1
            return
        contradicted = self._contradicted(candidate, lookup)
        scope = self._scope(candidate)
        metadata: dict[str, Any] = {"run": self.run_id}
        if candidate.subject:
            metadata.update(subject=candidate.subject, value=candidate.value)
        if candidate.event_date is not None:
            metadata["event_date"] = candidate.event_date.isoformat()
        if candidate.speaker:
            metadata["speaker"] = candidate.speaker
        valid_from = self._valid_from(candidate)
        # The later statement supersedes the earlier one, whichever arrived first.
        newer_exists = contradicted is not None and contradicted.valid_from > valid_from
        memory = new_memory(
            owner=self.owner,
            content=candidate.content,
            kind=candidate.kind,
            scope=scope,
            project=self.project if scope == Scope.PROJECT else None,
            conversation=self.conversation,
            tags=candidate.tags,
            confidence=candidate.confidence,
            origin=Origin.EXTRACTED,
            status=self.status,
            evidence=[evidence],
            metadata=metadata,
            valid_from=valid_from,
        )
        if vector is not None and memory.content == candidate.content:
            # Embedded already for the lookup: no embedding job needed.
            memory.embedding, memory.embedding_model = vector, get_provider().model_name
        self.writes.create(
            memory, supersedes=contradicted.memory if contradicted and not newer_exists else None
        )
        created = Known(
            memory.content,
            memory.kind,
            memory.status,
            candidate.subject,
            candidate.value,
            memory.created_at,
            memory.valid_from,
            created=memory,
        )
        self._created[scope].append(created)
        self.tally.created += 1
        if contradicted is not None and newer_exists:
            if contradicted.status != Status.ACTIVE:
                return  # Neither supersedes the other until the later one is accepted.
            # An earlier message's statement, read after a later one: history, not news.
            self.writes.supersede(old=memory, new=contradicted.memory)
            created.superseded = True
            self.tally.superseded += 1
        elif contradicted is not None and self.status == Status.ACTIVE:
            self.writes.supersede(old=contradicted.memory, new=memory)
            contradicted.superseded = True
            self.tally.superseded += 1
