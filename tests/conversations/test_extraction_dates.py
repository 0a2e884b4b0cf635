from __future__ import annotations

from datetime import date, datetime

import pytest

from conversations.extraction.dates import Dated, add_months, number, resolve

MONDAY = date(2023, 5, 8)

# (text, reference, rewritten, date, granularity)
CASES = [
    ("I went to a pottery class yesterday", MONDAY, "I went to a pottery class on 7 May 2023", date(2023, 5, 7), "day"),
    ("Yesterday I went to a pottery class.", MONDAY, "I went to a pottery class on 7 May 2023.", date(2023, 5, 7), "day"),
    ("We met last night", MONDAY, "We met on 7 May 2023", date(2023, 5, 7), "day"),
    ("My exam is tomorrow", MONDAY, "My exam is on 9 May 2023", date(2023, 5, 9), "day"),
    ("I ran a 10K last Saturday", MONDAY, "I ran a 10K on 6 May 2023", date(2023, 5, 6), "day"),
    ("I finished the draft on Sunday", MONDAY, "I finished the draft on 7 May 2023", date(2023, 5, 7), "day"),
    ("Her party is on Sunday", MONDAY, "Her party is on 14 May 2023", date(2023, 5, 14), "day"),
    ("I have an interview next Wednesday", MONDAY, "I have an interview on 17 May 2023", date(2023, 5, 17), "day"),
    ("We moved here last month", date(2024, 1, 15), "We moved here in December 2023", date(2023, 12, 1), "month"),
    ("I saw the doctor yesterday", date(2024, 3, 1), "I saw the doctor on 29 February 2024", date(2024, 2, 29), "day"),
    ("It happened yesterday", date(2024, 1, 1), "It happened on 31 December 2023", date(2023, 12, 31), "day"),
    ("We start next month", date(2023, 12, 20), "We start in January 2024", date(2024, 1, 1), "month"),
    ("I got married last year", MONDAY, "I got married in 2022", date(2022, 1, 1), "year"),
    ("I started climbing three years ago", MONDAY, "I started climbing in 2020", date(2020, 1, 1), "year"),
    ("I quit two months ago", date(2024, 1, 10), "I quit in November 2023", date(2023, 11, 1), "month"),
    ("I adopted her 10 days ago", MONDAY, "I adopted her on 28 April 2023", date(2023, 4, 28), "day"),
    ("I've been playing guitar for 5 years", MONDAY, "I've been playing guitar since 2018", date(2018, 1, 1), "year"),
    ("I have worked there since 2021", MONDAY, "I have worked there since 2021", date(2021, 1, 1), "year"),
    ("The manuscript is due on 31 January", date(2024, 9, 14), "The manuscript is due on 31 January 2025", date(2025, 1, 31), "day"),
    ("昨天我去了陶艺课", MONDAY, "2023年5月7日我去了陶艺课", date(2023, 5, 7), "day"),
    ("前天做了胃镜", date(2024, 3, 1), "2024年2月28日做了胃镜", date(2024, 2, 28), "day"),
    ("上周六去的", MONDAY, "2023年5月6日去的", date(2023, 5, 6), "day"),
    ("上星期六我们去爬山了", MONDAY, "2023年5月6日我们去爬山了", date(2023, 5, 6), "day"),
    ("下周一开会", MONDAY, "2023年5月15日开会", date(2023, 5, 15), "day"),
    ("上个月搬的家", date(2024, 1, 15), "2023年12月搬的家", date(2023, 12, 1), "month"),
    ("下个月出发", date(2023, 12, 5), "2024年1月出发", date(2024, 1, 1), "month"),
    ("去年去了日本", date(2024, 1, 3), "2023年去了日本", date(2023, 1, 1), "year"),
    ("明年结婚", MONDAY, "2024年结婚", date(2024, 1, 1), "year"),
    ("两年前我搬到了上海", MONDAY, "2021年我搬到了上海", date(2021, 1, 1), "year"),
    ("三天前摔了一跤", date(2024, 3, 2), "2024年2月28日摔了一跤", date(2024, 2, 28), "day"),
    ("去年9月参加了比赛", date(2024, 5, 1), "2023年9月参加了比赛", date(2023, 9, 1), "month"),
    ("中期检查是4月18号", date(2024, 2, 26), "中期检查是2024年4月18日", date(2024, 4, 18), "day"),
    # A preposition before the expression takes the place of its "on".
    ("since yesterday I walk", date(2023, 10, 17), "since 16 October 2023 I walk", date(2023, 10, 16), "day"),
    ("from tomorrow I walk", date(2023, 10, 17), "from 18 October 2023 I walk", date(2023, 10, 18), "day"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "reference", "rewritten", "day", "granularity"), CASES)
def test_relative_dates_are_made_absolute(
    text: str, reference: date, rewritten: str, day: date, granularity: str
) -> None:
    dated = resolve(text, reference)
    assert (dated.text, dated.date, dated.granularity) == (rewritten, day, granularity)


def test_a_datetime_reference_and_text_without_dates() -> None:
    assert resolve("today I cooked", datetime(2023, 5, 8, 21, 30)).date == MONDAY
    assert resolve("I like tea", MONDAY).date is None
    assert resolve("May I ask something?", MONDAY).date is None
    assert resolve("坐地铁3号线", MONDAY).date is None
    assert resolve("I swim on Saturdays", MONDAY).date is None


def test_without_a_reference_only_full_dates_count() -> None:
    assert resolve("I went there yesterday", None).text == "I went there yesterday"
    assert resolve("I went there yesterday", None).date is None
    assert resolve("We married on 3 June 2019", None).date == date(2019, 6, 3)


def test_numbers_and_months() -> None:
    assert [
        number(word) for word in ("3", "three", "a couple of", "两", "十", "十二", "二十一")
    ] == [
        3,
        3,
        2,
        2,
        10,
        12,
        21,
    ]
    assert add_months(date(2024, 1, 31), -1) == date(2023, 12, 1)
    assert add_months(date(2023, 11, 30), 3) == date(2024, 2, 1)


def test_a_day_of_the_month_alone_follows_the_tense() -> None:
    assert resolve("Her op is on the 21st", date(2024, 3, 9)).text == "Her op is on 21 March 2024"
    assert resolve("She moved in on the 28th", date(2024, 3, 9)).date == date(2024, 2, 28)
    assert resolve("I start on the 3rd", date(2024, 12, 20)).date == date(2025, 1, 3)


# How often something happens is no date: the sentence is left as said.
FREQUENCIES = [
    "I go climbing three days a week",
    "I'll be in three days a week, Monday to Wednesday",
    "I'm in the office 2 days per week",
    "I go to yoga twice a month",
    "I swim every Monday and Thursday",
    "我每周三次去健身房",
    "我一周去两天健身房",
    "我每周三去健身房",
    "每周二、周四晚上上课",
    "我每个月5号发工资",
]
# Durations and dates beside them still read as before.
NOT_FREQUENCIES = [
    ("I stayed in Paris for three days", None),
    ("I went to Paris three days ago", date(2023, 5, 5)),
    ("I'll be back in three days", date(2023, 5, 11)),
    ("三天前我去了巴黎", date(2023, 5, 5)),
    ("三天后我要去巴黎", date(2023, 5, 11)),
    ("我周三去了健身房", date(2023, 5, 3)),
    ("周三天气很好，我去了公园", date(2023, 5, 3)),
    ("I swim every Monday, and I went on Monday too", date(2023, 5, 1)),
]


@pytest.mark.parametrize("text", FREQUENCIES)
def test_a_frequency_is_not_a_date(text: str) -> None:
    assert resolve(text, MONDAY) == Dated(text)


@pytest.mark.parametrize(("text", "day"), NOT_FREQUENCIES)
def test_durations_and_dates_beside_frequencies(text: str, day: date | None) -> None:
    dated = resolve(text, MONDAY)
    assert dated.date == day
    if day is None:
        assert dated.text == text
