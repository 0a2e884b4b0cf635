"""The time a question is about, as date ranges relative to when it is asked."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from recall.query_dates import DateRange, query_dates
from search.ranking import query_intent

# A Sunday: "this week" and weekdays around it are easy to check by hand.
SUNDAY = date(2024, 3, 3)
D = date


@pytest.mark.parametrize(
    ("question", "reference", "expected"),
    [
        # English: a month, a year, a week, a day, relative or stated.
        ("What did Caroline do last May?", D(2023, 7, 3), [(D(2023, 5, 1), D(2023, 6, 1))]),
        ("What happened in 2023?", SUNDAY, [(D(2023, 1, 1), D(2024, 1, 1))]),
        (
            "What did we talk about two weeks ago?",
            D(2024, 3, 13),
            [(D(2024, 2, 26), D(2024, 3, 4))],
        ),
        ("What did I eat yesterday?", SUNDAY, [(D(2024, 3, 2), D(2024, 3, 3))]),
        ("Where did we go last month?", SUNDAY, [(D(2024, 2, 1), D(2024, 3, 1))]),
        ("What did she cook last Saturday?", SUNDAY, [(D(2024, 3, 2), D(2024, 3, 3))]),
        ("Which book did I start on 6 March 2024?", SUNDAY, [(D(2024, 3, 6), D(2024, 3, 7))]),
        (
            "Did she go to Paris in May 2023 or in June 2023?",
            SUNDAY,
            [(D(2023, 5, 1), D(2023, 6, 1)), (D(2023, 6, 1), D(2023, 7, 1))],
        ),
        # Chinese.
        ("去年我们去了哪里？", D(2024, 5, 1), [(D(2023, 1, 1), D(2024, 1, 1))]),
        ("上个月你推荐了什么书？", D(2024, 5, 10), [(D(2024, 4, 1), D(2024, 5, 1))]),
        ("三天前我说了什么？", SUNDAY, [(D(2024, 2, 29), D(2024, 3, 1))]),
        ("上周六我们吃了什么？", SUNDAY, [(D(2024, 2, 24), D(2024, 2, 25))]),
        ("2023年5月我在哪里？", SUNDAY, [(D(2023, 5, 1), D(2023, 6, 1))]),
        # Open ranges: the words before (English) or after (Chinese) the expression.
        ("Where has she lived since 2020?", SUNDAY, [(D(2020, 1, 1), None)]),
        ("What changed after 2021?", SUNDAY, [(D(2022, 1, 1), None)]),
        ("What did he buy before March 2024?", SUNDAY, [(None, D(2024, 3, 1))]),
        ("What must be done by June 2024?", SUNDAY, [(None, D(2024, 7, 1))]),
        ("2022年以来她搬过几次家？", SUNDAY, [(D(2022, 1, 1), None)]),
        ("去年之后他换了工作吗？", SUNDAY, [(D(2024, 1, 1), None)]),
        ("去年之前你在哪里工作？", SUNDAY, [(None, D(2023, 1, 1))]),
        # How often is not when; no time at all.
        ("What does she do every Monday?", SUNDAY, []),
        ("他每周跑步三次吗？", SUNDAY, []),
        ("What is Nadia's novel about?", SUNDAY, []),
    ],
)
def test_time_expressions_become_date_ranges(question, reference, expected):
    assert [(r.start, r.end) for r in query_dates(question, reference)] == expected
    assert query_intent(question).asks_when is False


@pytest.mark.parametrize(
    "question",
    [
        "When did Melanie paint a sunrise?",
        "What year did Jon start his dance studio?",
        "什么时候去的北京？",
        "她哪天生日？",
    ],
)
def test_a_when_question_asks_when_without_a_range(question):
    assert query_dates(question, SUNDAY) == ()
    assert query_intent(question).asks_when


def test_a_when_question_may_also_name_a_range():
    question = "When in 2023 did Caroline move?"
    assert query_intent(question).asks_when
    assert [(r.start, r.end) for r in query_dates(question, SUNDAY)] == [
        (D(2023, 1, 1), D(2024, 1, 1))
    ]


def test_the_reference_may_be_a_moment_and_a_range_holds_its_days():
    (last_month,) = query_dates(
        "What did we do last month?", datetime(2024, 3, 3, 23, 30, tzinfo=UTC)
    )
    assert last_month.words == "last month"
    assert D(2024, 2, 1) in last_month and D(2024, 2, 29) in last_month
    assert D(2024, 3, 1) not in last_month and D(2024, 1, 31) not in last_month
    assert datetime(2024, 2, 10, 12, tzinfo=UTC) in last_month
    assert D(1999, 1, 1) in DateRange(None, D(2000, 1, 1), "before 2000")
