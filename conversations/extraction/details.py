"""The details of a statement that make it another statement: numbers, days, times of day
and the things it is about.

Two statements that share most words ("I drink mango tea on Monday", "I eat mango snacks
at 8 o'clock") or whose vectors are close may still say different things. Reconciliation
merges a candidate into a memory only when neither has a detail the other lacks or says
otherwise: a number (digits, English number words, Chinese numerals with their unit), a
weekday, a month, a relative day (tomorrow, 明天), a part of the day (am/pm, 早上/晚上),
or a thing (a noun-like word that replaces another: tea → juice, 茶 → 汁).
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.cjk import CJK_LETTER
from search.textsearch import is_stopword

_WEEKDAYS = {
    "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2, "wednesday": 3, "wed": 3,
    "thursday": 4, "thu": 4, "thur": 4, "thurs": 4, "friday": 5, "fri": 5,
    "saturday": 6, "sunday": 7,
}  # fmt: skip
_MONTHS = {
    "january": 1, "february": 2, "feb": 2, "march": 3, "april": 4, "apr": 4,
    "june": 6, "july": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_NUMBER_WORDS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "twice": 2, "half": 0.5, "dozen": 12,
}  # fmt: skip
_RELATIVE_DAYS = {
    "today": "0", "tonight": "0", "tomorrow": "+1", "yesterday": "-1",
    "今天": "0", "今晚": "0", "明天": "+1", "明早": "+1", "后天": "+2", "昨天": "-1",
    "前天": "-2", "大后天": "+3",
}  # fmt: skip
_DAY_PARTS = {
    "am": "am", "a.m.": "am", "morning": "am", "mornings": "am", "pm": "pm", "p.m.": "pm",
    "afternoon": "afternoon", "afternoons": "afternoon", "evening": "evening",
    "evenings": "evening", "night": "night", "nights": "night", "noon": "noon",
    "midnight": "midnight", "早上": "am", "上午": "am", "早晨": "am", "中午": "noon",
    "下午": "afternoon", "傍晚": "evening", "晚上": "evening", "夜里": "night", "凌晨": "night",
}  # fmt: skip
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
# A Chinese numeral counts when a unit or measure word follows it (一起, 一直 are not numbers).
_CN_NUMBER = re.compile(
    r"([零〇一二两三四五六七八九十百千万]+)(?=[点个次杯天年月号日岁分周本只块元人遍份斤米里公小半瓶碗片页门节位])"
)
_CN_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_DIGITS = re.compile(r"\d+(?:[.,:]\d+)?")
_WORD = re.compile(r"[a-z]+(?:\.[a-z]\.)?")
_CJK = CJK_LETTER  # What counts as CJK: core.cjk.
# Words that change how a statement is said, not what it is about: they never count as a
# thing that differs.
_PHRASING = frozenset(
    [
        "always",
        "usually",
        "often",
        "sometimes",
        "never",
        "every",
        "each",
        "daily",
        "weekly",
        "monthly",
        "really",
        "also",
        "still",
        "now",
        "currently",
        "just",
        "like",
        "likes",
        "liked",
        "love",
        "loves",
        "prefer",
        "prefers",
        "preferred",
        "enjoy",
        "enjoys",
        "use",
        "uses",
        "used",
        "using",
        "want",
        "wants",
        "need",
        "needs",
        "go",
        "goes",
        "going",
        "get",
        "gets",
        "got",
        "have",
        "has",
        "had",
        "make",
        "makes",
        "made",
        "take",
        "takes",
        "took",
        "do",
        "does",
        "did",
        "usual",
        "user",
        "users",
    ]
)
# Chinese characters of phrasing, pronouns, particles and common verbs, likewise.
_CN_PHRASING = frozenset(
    "我你他她它们的了着过是在有也都还就又很最更太每常总经先再会能要想去来到把被给让和与跟"
    "从对为以及或而且但并吧呢吗啊呀喜欢爱用做个这那些一天早上下午晚时候点周"
)


def _stem(word: str) -> str:
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    return word.removesuffix("e")


def _cn_number(text: str) -> float:
    total, current = 0, 0
    for char in text:
        if char in _CN_DIGITS:
            current = _CN_DIGITS[char]
        else:
            total += (current or 1) * _CN_UNITS[char]
            current = 0
    return total + current


def _number(value: float | str) -> str:
    number = float(str(value).replace(",", "."))
    return str(int(number)) if number == int(number) else str(number)


@lru_cache(maxsize=4096)
def details(text: str) -> dict[str, frozenset[str]]:
    """The statement's details, by kind."""
    lowered = text.lower()
    found: dict[str, set[str]] = {
        "number": set(), "weekday": set(), "month": set(), "day": set(), "part": set(),
        "thing": set(),
    }  # fmt: skip
    for match in _CN_WEEKDAY.finditer(lowered):
        found["weekday"].add(str("一二三四五六".find(match[1]) + 1 or 7))
    lowered_cn = _CN_WEEKDAY.sub(" ", lowered)
    for word, day in _RELATIVE_DAYS.items():
        if _CJK.match(word) and word in lowered_cn:
            found["day"].add(day)
            lowered_cn = lowered_cn.replace(word, " ")
    for word, part in _DAY_PARTS.items():
        if _CJK.match(word) and word in lowered_cn:
            found["part"].add(part)
    for match in _CN_NUMBER.finditer(lowered_cn):
        found["number"].add(_number(_cn_number(match[1])))
    for match in _DIGITS.finditer(lowered_cn):
        time = match[0].split(":")
        found["number"].add(":".join(_number(part) for part in time))
    for match in re.finditer(r"\d+\s*(am|pm|a\.m\.|p\.m\.)", lowered_cn):
        found["part"].add(_DAY_PARTS[match[1]])
    for word in _WORD.findall(lowered_cn):
        bare = word.removesuffix("s") if word.removesuffix("s") in _WEEKDAYS else word
        if bare in _WEEKDAYS:
            found["weekday"].add(str(_WEEKDAYS[bare]))
        elif word in _MONTHS:
            found["month"].add(str(_MONTHS[word]))
        elif word in _NUMBER_WORDS:
            found["number"].add(_number(_NUMBER_WORDS[word]))
        elif word in _RELATIVE_DAYS:
            found["day"].add(_RELATIVE_DAYS[word])
        elif word in _DAY_PARTS and word not in ("am", "pm"):  # "I am": only after a time
            found["part"].add(_DAY_PARTS[word])
        elif len(word) >= 3 and not is_stopword(word) and word not in _PHRASING:
            found["thing"].add(_stem(word))
    for char in _CJK.findall(lowered_cn):
        if char not in _CN_PHRASING and char not in _CN_DIGITS and char not in _CN_UNITS:
            found["thing"].add(char)
    return {kind: frozenset(values) for kind, values in found.items()}


def differ(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` say different things in a detail: one has a number, day,
    month or time of day the other lacks or gives otherwise, or each names a thing the
    other does not (a replacement, not a word added in passing)."""
    first, second = details(a), details(b)
    for kind in ("number", "weekday", "month", "day", "part"):
        if first[kind] != second[kind]:
            return True
    return bool(first["thing"] - second["thing"]) and bool(second["thing"] - first["thing"])
