"""Frequencies and durations stay words, through real runs, in both languages: only real
dates become dates (memories.when reads ``metadata["event_date"]``)."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from tests.extraction_helpers import extracted

KEPT_AS_SAID = [
    ("I usually go climbing on Sunday mornings.", "Sunday mornings"),
    ("I'm in the office three days a week.", "three days a week"),
    ("I get paid every two weeks.", "every two weeks"),
    ("Ingrid's birthday is on July 2.", "July 2"),
    ("我女儿叫小雨，今年五岁。", "今年五岁"),
    ("我每周三晚上去游泳。", "每周三晚上"),
    ("我们组每两周一次迭代评审，固定在周四下午。", "固定在周四下午"),
    ("我每个月5号还一次房贷。", "每个月5号"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("said", "words"), KEPT_AS_SAID)
def test_frequencies_and_yearly_days_are_not_dates(alice: Any, said: str, words: str) -> None:
    stored = extracted(alice, ("user", said))
    assert len(stored) == 1 and words in stored[0][1]
    assert not Memory.objects.filter(owner=alice, metadata__has_key="event_date").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("said", "day"),
    [
        ("I'm running the Cardiff Half on 4 October 2026.", "2026-10-04"),
        ("3.0 版本计划在2026年4月15日发布。", "2026-04-15"),
    ],
)
def test_real_dates_are_still_dates(alice: Any, said: str, day: str) -> None:
    assert extracted(alice, ("user", said))
    assert Memory.objects.get(owner=alice).metadata["event_date"] == day
