"""A match's score: its relevance (fused ranks, kept more for what the query asks: a person,
a date) mixed with importance, confidence, recency and use. Every part is returned so a
ranking can be explained.

What a query asks beyond its words (``QueryIntent``): the people of past conversations it
names, whether it asks when, and the days it speaks of. A named person is not a word to
match: their name is in every line they said or were greeted with, so it would rank such
lines by the name alone. The keyword search looks for the query's other words
(``QueryIntent.words``). (Keeping more of the relevance of matches by or about the person, as
a date's is kept, lost evidence on the dev file: recall@10 0.710 with it, 0.718 without, in
6 of 8 conversations left out.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Generic, Protocol, TypeVar

from core.cjk import is_cjk
from search.textsearch import search_terms

RECENCY_HALF_LIFE_DAYS = 30.0
# Uses at which the "use" part reaches 1.
FULL_USE_COUNT = 100

# How much more relevance a match keeps that names a date, for a question asking when, or is
# of the days the query speaks of (QueryIntent).
DATE_BOOST = 0.3

WEIGHTS = {"relevance": 0.7, "importance": 0.1, "confidence": 0.05, "recency": 0.1, "use": 0.05}


class Rankable(Protocol):
    """What scoring reads of a memory: a Memory, or the preview's plain row of its columns."""

    @property
    def pk(self) -> Any: ...
    @property
    def content(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def confidence(self) -> float: ...
    @property
    def valid_from(self) -> datetime: ...
    @property
    def last_accessed_at(self) -> datetime | None: ...
    @property
    def access_count(self) -> int: ...
    # The day what it tells happened (its metadata's ``event_date``), when it says.
    @property
    def event_date(self) -> date | None: ...


MemoryT = TypeVar("MemoryT", bound=Rankable)


@dataclass
class ScoredMemory(Generic[MemoryT]):
    memory: MemoryT
    score: float
    parts: dict[str, Any]


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


@dataclass(frozen=True)
class QueryIntent:
    """What a query says beyond its words: the people of past conversations it names
    (lower-cased), whether it asks when, and the times it speaks of (``during``: ranges of
    days, each telling whether a day is in it). ``words``: what the keyword search looks for, the query
    without those names. Matches that name a date for a "when" question, and those of the
    days it speaks of, keep more of their relevance (DATE_BOOST)."""

    names: frozenset[str] = frozenset()
    asks_when: bool = False
    during: tuple[Container[date], ...] = ()
    words: str = ""

    def dated(self, text: str, *, names_date: bool = False, day: date | None = None) -> float:
        """1 when a memory or turn is of the days the query speaks of (``day``: what it tells
        of, or when it was said), or names a date (``names_date``, or its text does) for a
        question asking when; else 0."""
        if day is not None and any(day in days for days in self.during):
            return 1.0
        if self.asks_when and (names_date or DATE_IN_TEXT.search(text) is not None):
            return 1.0
        return 0.0

    def factor(self, dated: float) -> float:
        """The share of its relevance a match keeps: 1 when it is what the query asks."""
        asks_date = self.asks_when or bool(self.during)
        return (1.0 + DATE_BOOST * dated) / (1.0 + DATE_BOOST * asks_date)


def _names_in(name: str, lowered: str) -> bool:
    if is_cjk(name):
        return name in lowered
    return re.search(rf"\b{re.escape(name)}\b", lowered) is not None


NO_INTENT = QueryIntent()


def query_intent(
    text: str, known_names: Iterable[str] = (), during: Sequence[Container[date]] = ()
) -> QueryIntent:
    """The intent of ``text``: the ``known_names`` (the people of past conversations) it
    names, and ``during``, the days it speaks of (found by the caller). Its words are the
    text without those names, unless nothing but stopwords would be left (a query about a
    person only still finds what mentions them)."""
    lowered = text.lower()
    names = {name.lower() for name in known_names if name and _names_in(name.lower(), lowered)}
    words = text
    for name in sorted(names, key=len, reverse=True):
        pattern = re.escape(name) if is_cjk(name) else rf"\b{re.escape(name)}\b"
        words = re.sub(pattern, " ", words, flags=re.IGNORECASE)
    if not search_terms(words):
        words = text
    return QueryIntent(frozenset(names), bool(_WHEN_QUESTION.search(text)), tuple(during), words)


def score_parts(memory: Rankable, relevance: float, now: datetime) -> dict[str, float]:
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


NO_MATCH = {"relevance": 0.0, "keyword_rank": None, "vector_rank": None, "similarity": None}


def scored(
    memories: Iterable[MemoryT],
    matches: dict[int, dict[str, Any]],
    now: datetime,
    intent: QueryIntent = NO_INTENT,
) -> list[ScoredMemory[MemoryT]]:
    """Score each memory from its match (or none: relevance 0), best first, ties by id.
    ``intent``: a memory of the days the query speaks of, or a dated one for a question
    asking when, keeps more of its relevance (``QueryIntent.factor``)."""
    result = []
    for memory in memories:
        match = matches.get(memory.pk, NO_MATCH)
        day = memory.event_date or memory.valid_from.date()
        dated = intent.dated(memory.content, names_date=memory.event_date is not None, day=day)
        parts = score_parts(memory, match["relevance"] * intent.factor(dated), now)
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
                    "dated": dated,
                },
            )
        )
    result.sort(key=lambda item: (-item.score, item.memory.pk))
    return result
