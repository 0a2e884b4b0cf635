"""Reconciliation: what each candidate does to the memories that exist.

For each candidate, against the memories of the same owner (personal) or the
same project:

- a reviewer rejected it before (a near-duplicate is rejected) → nothing is
  created; the rejected memory's history notes it came up again;
- a near-duplicate exists (word / CJK-bigram Jaccard ≥ MEMORY_DUPLICATE_JACCARD,
  cosine ≥ MEMORY_DUPLICATE_COSINE between embeddings, or the same subject
  and value) → that memory gains confidence and the new evidence;
- a memory of the same kind says something else about the same subject →
  a new memory supersedes it (at once when the new one is active; when
  it awaits review, on acceptance);
- otherwise → a new memory, pending when the owner wants review.

Callers run this inside one transaction with the run, so a run's changes
are all there or none are.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import Q, QuerySet
from pgvector.django import CosineDistance

from accounts.models import Project
from memoryapp.embeddings import get_provider
from memoryapp.extraction import Candidate
from memoryapp.models import Conversation, Memory, Origin, Scope, Status
from memoryapp.services import (
    memory_create,
    memory_merge_evidence,
    memory_note_rejected_again,
    memory_supersede,
)
from memoryapp.textsearch import SEARCH_CONFIG, terms

logger = logging.getLogger(__name__)

ACTOR_LABEL = "extraction"
CONFIDENCE_BOOST = 0.1
# How many keyword matches are compared word by word with a candidate.
_TEXT_MATCH_LIMIT = 50
# Vector near-duplicates: exact distances over a pool up to this size, the HNSW index above it.
EXACT_SEARCH_MAX_ROWS = 2000
HNSW_EF_SEARCH = 200


@dataclass
class Tally:
    created: int = 0
    merged: int = 0
    superseded: int = 0
    skipped: int = 0


def jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _prefilter_query(candidate_terms: set[str], threshold: float) -> str:
    """Terms of which any near-duplicate must contain at least one, as a raw OR tsquery.

    A memory with Jaccard ≥ t shares at least t·|A| of the candidate's |A|
    terms, so it misses at most ⌊(1-t)·|A|⌋ of them: among any that many
    plus one terms it has one. The longest terms are the rarest, so the
    index returns few rows.
    """
    missable = int((1 - threshold) * len(candidate_terms))
    chosen = sorted(candidate_terms, key=lambda term: (-len(term), term))[: missable + 1]
    return " | ".join(chosen)


class Reconciler:
    """Reconciles one run's candidates for one conversation."""

    def __init__(self, *, conversation: Conversation, run_id: int, batch: uuid.UUID, review: bool):
        self.conversation = conversation
        self.owner = conversation.owner
        self.run_id = run_id
        self.batch = batch
        self.status = Status.PENDING if review else Status.ACTIVE
        project = conversation.project
        self.project: Project | None = (
            project if project is not None and project.can_write(self.owner) else None
        )
        self.tally = Tally()
        self._pool_sizes: dict[str, int] = {}

    def _pool(self, candidate: Candidate) -> tuple[str, QuerySet[Memory]]:
        alive = Memory.objects.alive()
        if candidate.about_project and self.project is not None:
            return Scope.PROJECT, alive.filter(scope=Scope.PROJECT, project=self.project)
        return Scope.USER, alive.filter(scope=Scope.USER, owner=self.owner)

    def reconcile(self, candidates: list[Candidate]) -> Tally:
        vectors = self._embed([candidate.content for candidate in candidates])
        for candidate, vector in zip(candidates, vectors, strict=True):
            self._reconcile_one(candidate, vector)
        return self.tally

    def _embed(self, texts: list[str]) -> list[list[float] | None]:
        if not texts:
            return []
        try:
            return list(get_provider().embed(texts))
        except Exception:
            # Reconciliation still works on words; the memories get embedded later.
            logger.warning("Embedding extraction candidates failed", exc_info=True)
            return [None] * len(texts)

    def _reconcile_one(self, candidate: Candidate, vector: list[float] | None) -> None:
        scope, pool = self._pool(candidate)
        evidence = candidate.evidence(conversation_id=self.conversation.pk, run_id=self.run_id)
        same = self._same_statement(candidate, scope, pool, vector)
        if same is not None and same.status == Status.REJECTED:
            memory_note_rejected_again(memory=same, actor_label=ACTOR_LABEL)
            self.tally.skipped += 1
            return
        if same is not None:
            memory_merge_evidence(
                memory=same,
                evidence=evidence,
                confidence_boost=CONFIDENCE_BOOST,
                actor_label=ACTOR_LABEL,
                batch=self.batch,
            )
            self.tally.merged += 1
            return
        contradicted = self._contradicted(candidate, pool)
        metadata: dict[str, Any] = {"run": self.run_id}
        if candidate.subject:
            metadata.update(subject=candidate.subject, value=candidate.value)
        if contradicted is not None and self.status == Status.PENDING:
            metadata["supersedes"] = contradicted.pk
        memory = memory_create(
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
            actor_label=ACTOR_LABEL,
            batch=self.batch,
        )
        self.tally.created += 1
        if contradicted is not None and self.status == Status.ACTIVE:
            memory_supersede(
                old=contradicted, new=memory, actor=None, actor_label=ACTOR_LABEL, batch=self.batch
            )
            self.tally.superseded += 1

    def _nearest(
        self, scope_key: str, current: QuerySet[Memory], vector: list[float]
    ) -> QuerySet[Memory]:
        """Where to look for vector neighbours: the whole pool when small, else the HNSW index.

        A filtered HNSW search returns the nearest rows of every owner and
        filters afterwards, so over a small pool it can miss; an exact scan
        of a small pool is fast. Over a large pool an exact scan is slow, and
        the index (searched wider than usual) finds near-duplicates, which are
        very close, reliably.
        """
        model = get_provider().model_name
        embedded = current.filter(embedding_model=model)
        if scope_key not in self._pool_sizes:
            self._pool_sizes[scope_key] = embedded.count()
        if self._pool_sizes[scope_key] <= EXACT_SEARCH_MAX_ROWS:
            return embedded
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.ef_search = %s", [HNSW_EF_SEARCH])
        nearest = (
            Memory.objects.filter(embedding_model=model)
            .order_by(CosineDistance("embedding", vector))
            .values("pk")[:HNSW_EF_SEARCH]
        )
        return embedded.filter(pk__in=nearest)

    def _same_statement(
        self,
        candidate: Candidate,
        scope_key: str,
        pool: QuerySet[Memory],
        vector: list[float] | None,
    ) -> Memory | None:
        """A current memory (or a rejected one) that says what the candidate says."""
        current = pool.filter(
            Q(status=Status.REJECTED) | Q(valid_until__isnull=True, superseded_by__isnull=True)
        )
        candidate_terms = set(terms(candidate.content))
        if candidate_terms:
            threshold = settings.MEMORY_DUPLICATE_JACCARD
            query = SearchQuery(
                _prefilter_query(candidate_terms, threshold),
                search_type="raw",
                config=SEARCH_CONFIG,
            )
            best: tuple[float, Memory] | None = None
            for memory in current.filter(search_vector=query)[:_TEXT_MATCH_LIMIT]:
                score = jaccard(candidate_terms, set(terms(memory.content)))
                if score >= threshold and (best is None or score > best[0]):
                    best = (score, memory)
            if best is not None:
                return best[1]
        if candidate.subject and candidate.value:
            same_subject = current.filter(
                kind=candidate.kind,
                metadata__subject=candidate.subject,
                metadata__value=candidate.value,
            ).first()
            if same_subject is not None:
                return same_subject
        if vector is not None:
            close = list(
                self._nearest(scope_key, current, vector)
                .annotate(distance=CosineDistance("embedding", vector))
                .filter(distance__lte=1 - settings.MEMORY_DUPLICATE_COSINE)[:_TEXT_MATCH_LIMIT]
            )
            if close:
                return min(close, key=lambda memory: memory.distance)
        return None

    def _contradicted(self, candidate: Candidate, pool: QuerySet[Memory]) -> Memory | None:
        if not candidate.subject:
            return None
        return (
            pool.filter(
                kind=candidate.kind,
                status__in=[Status.ACTIVE, Status.PENDING],
                valid_until__isnull=True,
                superseded_by__isnull=True,
                metadata__subject=candidate.subject,
            )
            .exclude(metadata__value=candidate.value)
            .order_by("-created_at")
            .first()
        )
