"""Relative time in a sentence, made absolute against when it was said.

"I went to a pottery class yesterday", said on 8 May 2023, is remembered as
"... on 7 May 2023", with 7 May 2023 as the event's date; "昨天我去了陶艺课"
becomes "2023年5月7日我去了陶艺课". ``resolve`` rewrites every expression it
understands, in English and Chinese, and reports the first one's date and how
precise it is: a day when known, else a week (its Monday), a month (its first
day) or a year (1 January).

Weekdays: "last Saturday" is the most recent Saturday before the day said;
"next Monday" and 下周一 the Monday of next week; "on Sunday" the most recent
past Sunday when the sentence speaks of the past, else the coming one. A day
or month without a year ("on 6 March", "4月18号") takes the year that puts it
nearest the reference (tense misleads here: "I signed up for the race in May").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

DAY, WEEK, MONTH, YEAR = "day", "week", "month", "year"

MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
]  # fmt: skip
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_CJK_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a few": 3, "couple of": 2, "few": 3,
}  # fmt: skip
_CJK_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
               "八": 8, "九": 9}  # fmt: skip


@dataclass(frozen=True)
class Dated:
    """A sentence with its time expressions made absolute, and the first one's date."""

    text: str
    date: date | None = None
    granularity: str = ""


def number(word: str) -> int | None:
    """1-99 written in digits, English words or Chinese numerals."""
    word = word.strip().lower()
    if word.isdigit():
        return int(word)
    if word in _EN_NUMBERS:
        return _EN_NUMBERS[word]
    if word and all(char in _CJK_DIGITS or char == "十" for char in word):
        if "十" not in word:
            return _CJK_DIGITS[word] if len(word) == 1 else None
        tens, _, ones = word.partition("十")
        value = (_CJK_DIGITS.get(tens, 0) if tens else 1) * 10
        return value + (_CJK_DIGITS.get(ones, 0) if ones else 0)
    return None


def add_months(day: date, months: int) -> date:
    """The first day of the month ``months`` after ``day``'s."""
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def english(day: date, granularity: str) -> str:
    if granularity == DAY:
        return f"on {day.day} {MONTHS[day.month - 1]} {day.year}"
    if granularity == WEEK:
        return f"in the week of {day.day} {MONTHS[day.month - 1]} {day.year}"
    if granularity == MONTH:
        return f"in {MONTHS[day.month - 1]} {day.year}"
    return f"in {day.year}"


def chinese(day: date, granularity: str) -> str:
    if granularity == DAY:
        return f"{day.year}年{day.month}月{day.day}日"
    if granularity == WEEK:
        return f"{day.year}年{day.month}月{day.day}日那周"
    if granularity == MONTH:
        return f"{day.year}年{day.month}月"
    return f"{day.year}年"


# Tense ------------------------------------------------------------------------------

_PAST = re.compile(
    r"\b(?:was|were|did|had|went|got|came|saw|made|took|gave|told|said|found|bought|sold|met|"
    r"left|ran|began|rang|won|lost|wrote|spent|flew|drove|ate|sent|paid|felt|kept|heard|"
    r"(?!(?:need|feed|speed|seed|indeed|exceed|proceed|succeed|bed|red|shed|hundred|wed)\b)"
    r"\w{2,}ed)\b"
    r"|[了过]|已经|的[。！!.]?$",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:will|'ll|going to|gonna|plan(?:ning)?|hope|hoping|want|next|tomorrow|is on|'s on|"
    r"are on|starts?|arrives?|comes? out)\b|要|会|将|打算|准备|计划|想",
    re.IGNORECASE,
)


def tense(text: str) -> int:
    """-1 when the sentence speaks of the past, 1 of the future, 0 when it does not say."""
    if _FUTURE.search(text):
        return 1
    if _PAST.search(text):
        return -1
    return 0


# Expressions --------------------------------------------------------------------------

_EN_NUM = r"(?P<n>\d{1,2}|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_CJK_NUM = r"(?P<n>\d{1,2}|[一二两三四五六七八九十]{1,3})"
_WEEKDAY = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?!s)"
_MONTH = r"(?P<month>(?-i:January|February|March|April|May|June|July|August|September|October|November|December))"

_EXPRESSIONS: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in [
        ("day_offset", r"\b(?:the day before yesterday|the day after tomorrow|yesterday|today|tomorrow|tonight|last night)(?: (?:morning|afternoon|evening|night))?\b"),
        ("this_part", r"\bthis (?:morning|afternoon|evening)\b"),
        ("weekday", rf"\b(?P<which>last|this past|this coming|this|next|on|this last)(?: the)? {_WEEKDAY}\b"),
        ("ago", rf"\b{_EN_NUM} (?P<unit>day|week|month|year)s? ago\b"),
        ("in_n", rf"\bin {_EN_NUM} (?P<unit>day|week|month|year)s?(?: time)?\b"),
        ("for_n", rf"(?<=\bbeen )(?:\w+ ){{0,4}}?\bfor {_EN_NUM} (?P<unit>month|year)s?\b"),
        ("relative", r"\b(?P<which>last|this|next) (?P<unit>week|month|year)\b"),
        ("day_month", rf"\b(?:on )?(?:the )?(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {_MONTH}(?:,? (?P<year>(?:19|20)\d\d))?\b"),
        ("month_day", rf"\b(?:on )?{_MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<year>(?:19|20)\d\d))?\b"),
        ("month", rf"\b(?P<prep>in|since|from|by|until|till|before|after|of|last|this|next|early|late|mid|end of) {_MONTH}(?: (?P<year>(?:19|20)\d\d))?\b"),
        ("dom", r"\b(?:on )?the (?P<day>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b(?! of)"),
        ("year", r"\b(?P<prep>in|since|from|by|until|till|before|after|back in|around) (?P<year>(?:19|20)\d\d)\b"),
        ("cjk_full", r"(?:(?P<year>(?:19|20)\d\d)年|(?P<rel>去年|今年|明年|前年))?(?P<month>\d{1,2}|[一二三四五六七八九十]{1,2})月(?P<day>\d{1,2}|[一二三四五六七八九十]{1,3})[日号]"),
        ("cjk_month", r"(?:(?P<year>(?:19|20)\d\d)年|(?P<rel>去年|今年|明年|前年))?(?<![\d个])(?P<month>\d{1,2}|十[一二]|[一二三四五六七八九十])月(?:份)?(?![\d一二三四五六七八九十日号])"),
        ("cjk_day_offset", r"大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日|今天早上|明天|明早|明晚|后天|大后天"),
        ("cjk_weekday", r"(?P<which>上上|上|这|本|下下|下)?(?:个)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"),
        ("cjk_relative_week", r"(?P<which>上上|上|这|本|下下|下)(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天末])"),
        ("cjk_relative_month", r"(?P<which>上上|上|这|本|下下|下)(?:个)?月(?!\d)"),
        ("cjk_relative_year", r"大前年|前年|去年|今年|明年|后年"),
        ("cjk_ago", rf"{_CJK_NUM}(?:个)?(?P<unit>天|周|星期|礼拜|月|年)(?P<dir>前|以前|之前|后|以后|之后)"),
        ("cjk_year", r"(?P<year>(?:19|20)\d\d)年(?!\d{1,2}月)"),
        ("cjk_dom", r"(?<![\d月])(?P<day>[1-9]|[12]\d|3[01])号(?![线楼门口码院])"),
    ]
]  # fmt: skip
# How often, not when: "three days a week", "in twice a month", "every Monday", 每周三次,
# 一周两天, 每周二、周四, 每月5号. No expression inside one is a date.
RECURRING = re.compile(
    rf"\b(?:{_EN_NUM}|once|twice|several|many) (?:(?:full |half |whole )?"
    r"(?:times?|days?|nights?|evenings?|mornings?|afternoons?|weekends?|hours?|sessions?|runs?|"
    r"shifts?|classes|lessons?) )?(?:a|an|per|each|every) (?:day|week|fortnight|month|year)\b"
    r"|\bevery (?:other |second |single )?(?:monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)(?:(?:,| and| or) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))*"
    r"|(?:每|一)个?(?:周|星期|礼拜)(?:[一二三四五六日天](?:[、和或及与跟](?:周|星期|礼拜)?[一二三四五六日天])*"
    r"|[一二两三四五六七八九十几\d]+(?:次|天|回|趟|遍|个|晚))"
    r"|(?:每|一)个?(?:天|月|年)[一二两三四五六七八九十几\d]+(?:次|回|趟|遍|天|号|日)"
    # "every two weeks", "on Sunday mornings", "at weekends", 每两周, 每个周末.
    r"|\bevery (?:\d+|two|three|four|few|couple of) (?:days|weeks|months|years)\b"
    r"|\b(?:on |at )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"(?: (?:mornings|afternoons|evenings|nights)|s)\b|\b(?:on|at) (?:weekends|weekdays)\b"
    r"|每[一二两三四五六七八九十几\d]*个?(?:周|星期|礼拜|天|日|月|年)(?:末|[一二两三四五六七八九十几\d]+(?:次|回|趟|遍|天|号|日))?",
    re.IGNORECASE,
)
# Not a date either: an age this year (今年五岁), and a day of the year that comes back every
# year (a birthday or an anniversary "on July 2", 生日是7月2日) when no year is said.
_AGE = re.compile(
    r"(?:今年|this year)(?=\s*(?:才|已经|刚)?[一二两三四五六七八九十\d]+\s*(?:岁|周岁))"
)
_YEARLY = re.compile(r"\b(?:birthday|anniversary|name day)\b|生日|纪念日", re.IGNORECASE)
_YEARLY_DAYS = ("day_month", "month_day", "cjk_full")
# One cheap test first: most sentences name no time at all.
_ANY = re.compile(
    re.sub(r"\(\?P<\w+>", "(?:", "|".join(f"(?:{p.pattern})" for _, p in _EXPRESSIONS)),
    re.IGNORECASE,
)

_CJK_DAY_OFFSETS = {
    "大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "今天": 0, "今晚": 0, "今早": 0,
    "今日": 0, "今天早上": 0, "明天": 1, "明早": 1, "明晚": 1, "后天": 2, "大后天": 3,
}  # fmt: skip
_CJK_WHICH = {"上上": -2, "上": -1, "这": 0, "本": 0, None: 0, "下": 1, "下下": 2}
_CJK_YEARS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_UNITS = {"天": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _shift(reference: date, unit: str, amount: int) -> tuple[date, str]:
    if unit == "day":
        return reference + timedelta(days=amount), DAY
    if unit == "week":
        return _monday(reference + timedelta(weeks=amount)), WEEK
    if unit == "month":
        return add_months(reference, amount), MONTH
    return date(reference.year + amount, 1, 1), YEAR


def _with_year(reference: date, month: int, day: int, when: int) -> date | None:
    """The date of day/month nearest the reference on the side the tense says."""
    options = [d for y in (-1, 0, 1) if (d := _safe_date(reference.year + y, month, day))]
    if not options:
        return None
    if when < 0:
        options = [d for d in options if d <= reference] or options
    elif when > 0:
        options = [d for d in options if d >= reference - timedelta(days=7)] or options
    return min(options, key=lambda d: abs((d - reference).days))


def _english_day_offset(text: str) -> int:
    text = text.lower()
    if text.startswith("the day before"):
        return -2
    if text.startswith("the day after"):
        return 2
    if text.startswith(("yesterday", "last night")):
        return -1
    if text.startswith("tomorrow"):
        return 1
    return 0


def _weekday(reference: date, weekday: int, which: str, when: int) -> date:
    """The day a weekday names: see the module's docstring."""
    if which in ("next",):
        return _monday(reference) + timedelta(weeks=1, days=weekday)
    before = reference - timedelta(days=(reference.weekday() - weekday) % 7 or 7)
    after = reference + timedelta(days=(weekday - reference.weekday()) % 7 or 7)
    if which in ("last", "this past", "this last"):
        return before
    if which == "this coming":
        return after
    if which == "this":
        current = _monday(reference) + timedelta(days=weekday)
        return current if when >= 0 or current <= reference else before
    return before if when < 0 else after


def _resolve_one(
    name: str, match: re.Match[str], reference: date, when: int
) -> tuple[date, str] | None:
    groups = match.groupdict()
    if name == "day_offset":
        return reference + timedelta(days=_english_day_offset(match.group(0))), DAY
    if name == "this_part":
        return reference, DAY
    if name == "weekday":
        weekday = WEEKDAYS.index(groups["wd"].lower())
        return _weekday(reference, weekday, groups["which"].lower(), when), DAY
    if name in ("ago", "in_n", "for_n"):
        amount = number(groups["n"])
        if amount is None:
            return None
        sign = 1 if name == "in_n" else -1
        return _shift(reference, groups["unit"].lower(), sign * amount)
    if name == "relative":
        amount = {"last": -1, "this": 0, "next": 1}[groups["which"].lower()]
        return _shift(reference, groups["unit"].lower(), amount)
    if name in ("day_month", "month_day"):
        month = MONTHS.index(groups["month"]) + 1
        if groups.get("year"):
            found = _safe_date(int(groups["year"]), month, int(groups["day"]))
        else:
            # Past verbs come with future dates too ("signed up for the race on 12 May").
            found = _with_year(reference, month, int(groups["day"]), 0)
        return (found, DAY) if found else None
    if name == "month":
        month = MONTHS.index(groups["month"]) + 1
        if groups.get("year"):
            return date(int(groups["year"]), month, 1), MONTH
        prep = groups["prep"].lower()
        when = -1 if prep == "last" else 1 if prep == "next" else 0
        found = _with_year(reference.replace(day=1), month, 1, when)
        return (found, MONTH) if found else None
    if name in ("year", "cjk_year"):
        return date(int(groups["year"]), 1, 1), YEAR
    if name == "cjk_day_offset":
        return reference + timedelta(days=_CJK_DAY_OFFSETS[match.group(0)]), DAY
    if name == "cjk_weekday":
        weekday = _CJK_WEEKDAYS[groups["wd"]]
        which = groups["which"]
        if which is None:
            return _weekday(reference, weekday, "on", when), DAY
        weeks = _CJK_WHICH[which]
        return _monday(reference) + timedelta(weeks=weeks, days=weekday), DAY
    if name == "cjk_relative_week":
        return _shift(reference, "week", _CJK_WHICH[groups["which"]])
    if name == "cjk_relative_month":
        return _shift(reference, "month", _CJK_WHICH[groups["which"]])
    if name == "cjk_relative_year":
        return _shift(reference, "year", _CJK_YEARS[match.group(0)])
    if name == "cjk_ago":
        amount = number(groups["n"])
        if amount is None:
            return None
        sign = -1 if "前" in groups["dir"] else 1
        return _shift(reference, _UNITS[groups["unit"]], sign * amount)
    if name in ("cjk_full", "cjk_month"):
        numbered = number(groups["month"])
        day = number(groups["day"]) if groups.get("day") else 1
        if numbered is None or day is None or not 1 <= numbered <= 12:
            return None
        if groups.get("year"):
            found = _safe_date(int(groups["year"]), numbered, day)
        elif groups.get("rel"):
            found = _safe_date(reference.year + _CJK_YEARS[groups["rel"]], numbered, day)
        else:
            base = reference if name == "cjk_full" else reference.replace(day=1)
            found = _with_year(base, numbered, day, 0)
        return (found, DAY if name == "cjk_full" else MONTH) if found else None
    if name in ("cjk_dom", "dom"):
        day = int(groups["day"])
        this_month = _safe_date(reference.year, reference.month, day)
        if this_month is None:
            return None
        if when < 0 and this_month > reference:
            previous = add_months(reference, -1)
            return _safe_date(previous.year, previous.month, day) or this_month, DAY
        if when > 0 and this_month < reference:
            following = add_months(reference, 1)
            return _safe_date(following.year, following.month, day) or this_month, DAY
        return this_month, DAY
    return None


def _rewrite(name: str, match: re.Match[str], found: date, granularity: str) -> str:
    text = match.group(0)
    if name.startswith("cjk_"):
        if name == "cjk_year" or (name in ("cjk_full", "cjk_month") and match.group("year")):
            return text
        return chinese(found, granularity)
    if name == "year":
        return text
    if name == "for_n":
        head = text[: text.lower().rfind("for ")]
        since = f"{MONTHS[found.month - 1]} {found.year}" if granularity == MONTH else found.year
        return f"{head}since {since}"
    if name == "month":
        prep = match.group("prep")
        if prep.lower() in ("last", "this", "next"):
            prep = "in"
        return f"{prep} {MONTHS[found.month - 1]} {found.year}"
    if name in ("day_month", "month_day") and not match.group(0).lower().startswith("on"):
        return english(found, granularity).removeprefix("on ")
    return english(found, granularity)


@dataclass(frozen=True)
class Expression:
    """A time expression of a text: where it is, which kind (``_EXPRESSIONS``' names), and
    the date it names with how precise that is."""

    start: int
    end: int
    kind: str
    match: re.Match[str]
    date: date
    granularity: str


def find(text: str, reference: date | None) -> list[Expression]:
    """The time expressions of ``text`` resolved against ``reference``, first to last; none
    inside a phrase saying how often ("every Monday", 每周三次). Without a reference, only
    the dates a text states with their year."""
    if not _ANY.search(text):
        return []
    when = tense(text)
    found: list[Expression] = []
    recurring = [match.span() for match in RECURRING.finditer(text)]
    taken = recurring + [match.span() for match in _AGE.finditer(text)]
    yearly = bool(_YEARLY.search(text))
    for name, pattern in _EXPRESSIONS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            if recurring and name == "cjk_weekday" and not match.group("which"):
                continue  # A schedule's day ("每两周一次，固定在周四"), not a date.
            if yearly and not match.groupdict().get("year") and name in _YEARLY_DAYS:
                continue
            if reference is None:
                if not match.groupdict().get("year") or name in ("month",):
                    continue
                resolved = _resolve_one(name, match, date(int(match.group("year")), 1, 1), when)
            else:
                resolved = _resolve_one(name, match, reference, when)
            if resolved is None:
                continue
            taken.append((start, end))
            found.append(Expression(start, end, name, match, *resolved))
    return sorted(found, key=lambda expression: expression.start)


# "on track for Friday" reads "on track for 20 October 2023", not "for on 20 October".
_DOUBLED_PREPOSITION = re.compile(
    r"\b(for|by|until|till|since|before|after|from|to|on) (?:on|in) (?=(?:the week of )?\d)",
    re.IGNORECASE,
)


def resolve(text: str, reference: date | datetime | None) -> Dated:
    """``text`` with its relative dates made absolute against ``reference``.

    Without a reference nothing is rewritten, but a date the text states in
    full ("on 6 March 2024", "2024年3月6日") is still reported.
    """
    if isinstance(reference, datetime):
        reference = reference.date()
    spans = [
        (
            e.start,
            e.end,
            _rewrite(e.kind, e.match, e.date, e.granularity) if reference else e.match[0],
            e.date,
            e.granularity,
        )
        for e in find(text, reference)
    ]
    if not spans:
        return Dated(text)
    first = spans[0]
    pieces, last = [], 0
    for start, end, replacement, _, _ in spans:
        pieces.append(text[last:start])
        pieces.append(replacement)
        last = end
    pieces.append(text[last:])
    rewritten = _DOUBLED_PREPOSITION.sub(r"\1 ", "".join(pieces))
    if first[0] == 0 and first[2].startswith(("on ", "in ")) and rewritten.startswith(first[2]):
        # "Yesterday I went ..." reads "I went ... on 7 May 2023".
        rest = rewritten[len(first[2]) :].lstrip(" ,")
        if rest[:1].isalpha():
            tail = re.search(r"[.!?。！？]*$", rest)
            cut = tail.start() if tail else len(rest)
            rewritten = f"{rest[:cut]} {first[2]}{rest[cut:]}"
    return Dated(rewritten, first[3], first[4])
