"""Whether a memory says what another already says, or replaces it: one test for extraction
and for hand.

Extraction's reconciliation (``conversations.extraction.reconcile``) and a
memory added by hand (the page's "Add a memory", ``/remember``) ask the same
question of the same pool of memories (the owner's personal ones, or a
project's): is there a near-duplicate? Near means word / CJK-bigram Jaccard ≥
``MEMORY_DUPLICATE_JACCARD``, or embedding cosine ≥ ``MEMORY_DUPLICATE_COSINE``.

And whether a new statement replaces one: two statements about the same *attribute* (the
subject extraction reads, ``metadata["subject"]``: where the user lives, their job, what they
use or prefer for frontends) that say different things (``metadata["value"]``). The
attribute does not depend on the kind: "Likes Vue 3 for frontends" (whatever kind it was
stored as) and "Prefers React" are both about the frontend framework (``attribute_of``).
"""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings
from django.contrib.postgres.search import SearchQuery

from memories.models import STATE_CONDITIONS, Memory, MemoryQuerySet, Status
from memories.search import similar_memories
from search.textsearch import SEARCH_CONFIG, terms

# How many word-sharing memories are compared by Jaccard (the rarest terms select them).
WORD_CANDIDATES = 200
# Vector near-duplicates: exact distances over a pool up to this size, the HNSW index above
# it; for a memory added by hand as for a run's candidates (conversations.extraction.reconcile).
EXACT_SEARCH_MAX_ROWS = 2000
# Subjects "<family>:<topic>" that say what is preferred, liked, chosen or used for a topic:
# one attribute, "topic:<topic>", whatever the family (and so the kind).
_TOPIC_FAMILIES = ("preference", "likes", "decision", "project", "uses")


def attribute_of(subject: str) -> str:
    """What a statement with ``subject`` is about, whatever its kind ("" for none)."""
    family, _, rest = subject.partition(":")
    return f"topic:{rest}" if family in _TOPIC_FAMILIES and rest else subject


def same_attribute_subjects(subject: str) -> list[str]:
    """Every subject about the attribute ``subject`` is about (so an index on the subject
    finds them all)."""
    attribute = attribute_of(subject)
    if not attribute.startswith("topic:"):
        return [subject]
    return [f"{family}:{attribute.removeprefix('topic:')}" for family in _TOPIC_FAMILIES]


def replaced_by(pool: MemoryQuerySet, subject: str, value: str) -> list[Memory]:
    """The current memories of ``pool`` that a statement saying ``value`` of ``subject``
    replaces: about the same attribute, saying something else."""
    if not subject or not value:
        return []
    current = pool.filter(
        STATE_CONDITIONS["alive"] & STATE_CONDITIONS["current"],
        status__in=[Status.ACTIVE, Status.PENDING],
        metadata__has_key="subject",
        metadata__subject__in=same_attribute_subjects(subject),
    )
    return [memory for memory in current if memory.metadata.get("value") != value]


@lru_cache(maxsize=4096)
def words_of(text: str) -> frozenset[str]:
    """The terms Jaccard compares; the same memories come up run after run."""
    return frozenset(terms(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def prefilter_query(candidate_terms: frozenset[str], threshold: float) -> str:
    """Terms of which any near-duplicate must contain at least one, as a raw OR tsquery.

    A memory with Jaccard ≥ t shares at least t·|A| of the candidate's |A|
    terms, so it misses at most ⌊(1-t)·|A|⌋ of them: among any that many
    plus one terms it has one. The longest terms are the rarest, so the
    index returns few rows.
    """
    missable = int((1 - threshold) * len(candidate_terms))
    chosen = sorted(candidate_terms, key=lambda term: (-len(term), term))[: missable + 1]
    return " | ".join(chosen)


def find_duplicate(pool: MemoryQuerySet, content: str) -> Memory | None:
    """The current memory of ``pool`` (active or pending, not superseded) that says what
    ``content`` says, the closest by words first, then by meaning; None if there is none."""
    current = pool.filter(
        STATE_CONDITIONS["alive"] & STATE_CONDITIONS["current"],
        status__in=[Status.ACTIVE, Status.PENDING],
    )
    threshold = settings.MEMORY_DUPLICATE_JACCARD
    content_terms = words_of(content)
    if content_terms:
        query = SearchQuery(
            prefilter_query(content_terms, threshold), search_type="raw", config=SEARCH_CONFIG
        )
        sharing = current.filter(search_vector=query).values_list("pk", "content")
        scored = [
            (jaccard(content_terms, words_of(text)), pk) for pk, text in sharing[:WORD_CANDIDATES]
        ]
        best = max(scored, default=None)
        if best is not None and best[0] >= threshold:
            return current.get(pk=best[1])
    near, _degraded = similar_memories(
        current,
        content,
        limit=1,
        min_similarity=settings.MEMORY_DUPLICATE_COSINE,
        exact_limit=EXACT_SEARCH_MAX_ROWS,
    )
    return current.filter(pk=near[0][0]).first() if near else None
