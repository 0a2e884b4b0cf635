"""The time a question is about: its time expressions as date ranges.

"What did Caroline do last May?", asked on 3 July 2023, is about 1 May to 31 May 2023;
"去年我们去了哪里？" about the year before; "When did Melanie paint a sunrise?" names no range
(whether a question asks when is the ranking's own rule, ``search.ranking.query_intent``).

The expressions are found and resolved by extraction's date engine
(``conversations.extraction.dates.find``), so words mean the same dates in what was said and
in what is asked. Each date spans what its precision says: a day, a week (Monday to Sunday),
a month or a year. A word before it opens the range: "since 2022", "from May" (from its start
on), "after 2021" (from its end on), "before March" (up to its start), "by June", "until
2024" (up to its end); in Chinese the word after it: 2022年以来 (since), 去年之后 / 以后
(after), 去年之前 / 以前 (before).

Here, not in search/ beside the ranking: the date engine belongs to extraction
(``conversations``), above search in the layers; the preview (``recall``) makes the query's
intent and can hand the ranges down.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from conversations.extraction.dates import DAY, MONTH, WEEK, Expression, add_months, find

# The words that open a range: English says them before the expression (the engine's
# "month" and "year" kinds keep them), Chinese after it. The range starts (FROM) or ends
# (UNTIL) where the period named starts or where it ends.
FROM_START, FROM_END, UNTIL_START, UNTIL_END = "from start", "from end", "until start", "until end"
OPENINGS = {
    "since": FROM_START, "from": FROM_START, "after": FROM_END,
    "before": UNTIL_START, "by": UNTIL_END, "until": UNTIL_END, "till": UNTIL_END,
}  # fmt: skip
CJK_OPENINGS = {"以来": FROM_START, "之后": FROM_END, "以后": FROM_END, "之前": UNTIL_START,
                "以前": UNTIL_START}  # fmt: skip


@dataclass(frozen=True)
class DateRange:
    """From ``start`` (inclusive) to ``end`` (exclusive); None is open on that side."""

    start: date | None
    end: date | None
    words: str  # What the question said.

    def __contains__(self, day: object) -> bool:
        if not isinstance(day, date):
            return False
        if isinstance(day, datetime):
            day = day.date()
        return (self.start is None or day >= self.start) and (self.end is None or day < self.end)


def period_end(start: date, granularity: str) -> date:
    """The day after the period of ``granularity`` that begins on ``start``."""
    if granularity == DAY:
        return start + timedelta(days=1)
    if granularity == WEEK:
        return start + timedelta(weeks=1)
    if granularity == MONTH:
        return add_months(start, 1)
    return date(start.year + 1, 1, 1)


def _opening(question: str, expression: Expression) -> str:
    """How the words around the expression open its range ("" when they do not)."""
    prep = (expression.match.groupdict().get("prep") or "").lower()
    if expression.kind == "for_n":  # "been there for two years": since then
        return FROM_START
    if prep in OPENINGS:
        return OPENINGS[prep]
    after = question[expression.end :].lstrip()
    return next((how for word, how in CJK_OPENINGS.items() if after.startswith(word)), "")


def date_range(question: str, expression: Expression) -> DateRange:
    start, end = expression.date, period_end(expression.date, expression.granularity)
    words = expression.match.group(0)
    opening = _opening(question, expression)
    if opening == FROM_START:
        return DateRange(start, None, words)
    if opening == FROM_END:
        return DateRange(end, None, words)
    if opening == UNTIL_START:
        return DateRange(None, start, words)
    if opening == UNTIL_END:
        return DateRange(None, end, words)
    return DateRange(start, end, words)


def query_dates(question: str, reference: date | datetime) -> tuple[DateRange, ...]:
    """The date ranges ``question`` names, relative to ``reference`` (when it is asked)."""
    if isinstance(reference, datetime):
        reference = reference.date()
    return tuple(dict.fromkeys(date_range(question, e) for e in find(question, reference)))
