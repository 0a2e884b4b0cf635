from __future__ import annotations

from typing import Any

import pytest
from django.contrib.postgres.search import SearchQuery

from memories.models import Memory
from memories.services import memory_create, memory_set_pinned, memory_update
from search.textsearch import SEARCH_CONFIG, search_document, terms, tsquery


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


def test_search_vector_follows_edits_in_english_and_chinese(alice: Any) -> None:
    memory = memory_create(owner=alice, content="Prefers dark mode", actor=alice)
    assert _search("dark") == ["Prefers dark mode"]
    memory = memory_update(
        memory=memory,
        changes={"content": "我喜欢用 Vue 写前端", "tags": ["frontend"]},
        expected_revision=None,
        actor=alice,
    )
    assert _search("dark") == []
    assert _search("前端") == _search("frontend") == ["我喜欢用 Vue 写前端"]
    memory_set_pinned(memory=memory, pinned=True, actor=alice)
    Memory.objects.filter(pk=memory.pk).update(importance=0.1)
    assert _search("喜欢") == ["我喜欢用 Vue 写前端"]


def test_search_vector_cannot_be_written_apart_from_its_document(alice: Any) -> None:
    memory = memory_create(owner=alice, content="Uses GDAL for imports", actor=alice)
    Memory.objects.filter(pk=memory.pk).update(search_vector=None)
    assert _search("gdal") == ["Uses GDAL for imports"]
    Memory.objects.filter(pk=memory.pk).update(search_document="项目 使用")
    assert _search("gdal") == [] and _search("项目") == ["Uses GDAL for imports"]
