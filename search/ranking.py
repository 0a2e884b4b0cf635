"""A match's score: its relevance (fused ranks, kept more for what the query asks: a person,
a date) mixed with importance, confidence, recency and use. Every part is returned so a
ranking can be explained."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from core.cjk import is_cjk
from search.textsearch import ENGLISH_STOPWORDS

RECENCY_HALF_LIFE_DAYS = 30.0
# Uses at which the "use" part reaches 1.
FULL_USE_COUNT = 100

# How much more relevance a memory by or about a person the query names keeps, and a dated
# one for a question asking when (QueryIntent).
PERSON_BOOST = 0.3
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
    # Its metadata names the date of what it tells (``event_date``).
    @property
    def event_dated(self) -> bool: ...


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
# A capitalised word: in a query, maybe a person's name.
_CAPITALISED = re.compile(r"\b[A-Z][^\W\d_]+\b")


@dataclass(frozen=True)
class QueryIntent:
    """What a query says beyond its words: the people it names (lower-cased), and whether it
    asks when. Memories by or about those people, and dated memories for a "when" question,
    rank higher (PERSON_BOOST, DATE_BOOST)."""

    names: frozenset[str] = frozenset()
    asks_when: bool = False

    def boost(self, text: str, dated: bool = False, speaker: str = "") -> tuple[float, float]:
        """(person, date) of a memory or turn: 1 when it matches what the query asks."""
        person = 0.0
        if self.names:
            said_by = speaker.lower() in self.names if speaker else False
            lowered = text.lower()
            if said_by or any(_names_in(name, lowered) for name in self.names):
                person = 1.0
        date = 1.0 if self.asks_when and (dated or DATE_IN_TEXT.search(text)) else 0.0
        return person, date

    def factor(self, person: float, date: float) -> float:
        """The share of its relevance a match keeps: 1 when it matches all the query asks."""
        best = 1.0 + PERSON_BOOST * bool(self.names) + DATE_BOOST * self.asks_when
        return (1.0 + PERSON_BOOST * person + DATE_BOOST * date) / best


def _names_in(name: str, lowered: str) -> bool:
    if is_cjk(name):
        return name in lowered
    return re.search(rf"\b{re.escape(name)}\b", lowered) is not None


NO_INTENT = QueryIntent()


def query_intent(text: str, known_names: Iterable[str] = ()) -> QueryIntent:
    """The intent of ``text``: the ``known_names`` (say, a conversation's participants) it
    mentions, and its capitalised words that are no stopword, as names."""
    lowered = text.lower()
    names = {name.lower() for name in known_names if name and _names_in(name.lower(), lowered)}
    names.update(
        word.lower()
        for word in _CAPITALISED.findall(text)
        if word.lower() not in ENGLISH_STOPWORDS and len(word) > 1
    )
    return QueryIntent(frozenset(names), bool(_WHEN_QUESTION.search(text)))


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
    ``intent``: a memory by or about the people the query names, or a dated one for a
    question asking when, keeps more of its relevance (``QueryIntent.factor``)."""
    result = []
    for memory in memories:
        match = matches.get(memory.pk, NO_MATCH)
        person, date = intent.boost(memory.content, memory.event_dated)
        parts = score_parts(memory, match["relevance"] * intent.factor(person, date), now)
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
                    "person": person,
                    "dated": date,
                },
            )
        )
    result.sort(key=lambda item: (-item.score, item.memory.pk))
    return result
