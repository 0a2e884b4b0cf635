from __future__ import annotations

from typing import Any

import pytest
from django.contrib.postgres.search import SearchQuery

from memoryapp.models import Memory
from memoryapp.services import memory_create
from memoryapp.textsearch import SEARCH_CONFIG, search_document, terms, tsquery


def test_chinese_becomes_bigrams_and_english_stays_words() -> None:
    assert terms("我喜欢用 Vue3 写前端") == ["我喜", "喜欢", "欢用", "vue3", "写前", "前端"]
    assert search_document("项目") == "项目"


def test_queries_only_carry_letters_digits_and_cjk() -> None:
    assert tsquery("vue & ) | !") == "vue"
    assert tsquery("喜") == "喜:*"
    assert tsquery("dark mo", prefix=True) == "dark & mo:*"
    assert tsquery("!!!") == ""


def _search(text: str, prefix: bool = False) -> list[str]:
    query = SearchQuery(tsquery(text, prefix=prefix), search_type="raw", config=SEARCH_CONFIG)
    return list(Memory.objects.filter(search_vector=query).values_list("content", flat=True))


@pytest.mark.parametrize(
    ("query", "prefix", "expected"),
    [
        ("喜欢", False, ["我喜欢用 Vue 写前端"]),
        ("前", False, ["我喜欢用 Vue 写前端"]),
        ("坐标系", False, ["项目使用 CGCS2000 坐标系"]),
        ("preferences", False, ["Prefers dark mode in every editor"]),
        ("edit", True, ["Prefers dark mode in every editor"]),
        ("cgcs2000", False, ["项目使用 CGCS2000 坐标系"]),
        ("tag-only", False, ["Tagged memory"]),
    ],
)
def test_full_text_finds_english_chinese_and_tags(
    alice: Any, query: str, prefix: bool, expected: list[str]
) -> None:
    memory_create(owner=alice, content="我喜欢用 Vue 写前端", actor=alice)
    memory_create(owner=alice, content="项目使用 CGCS2000 坐标系", actor=alice)
    memory_create(owner=alice, content="Prefers dark mode in every editor", actor=alice)
    memory_create(owner=alice, content="Tagged memory", tags=["tag-only"], actor=alice)
    assert _search(query, prefix) == expected
