"""The list machinery: filters in the URL, search in English and Chinese, highlighting."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import QueryDict

from memories.filters import MemoryFilters
from memories.memory_list import SearchMatch, highlight
from memories.models import Memory
from memories.services import memory_create
from teams.models import Project


def test_filters_read_the_query_string_and_ignore_unknown_values() -> None:
    project = Project(slug="track-survey", name="Track Survey")
    params = QueryDict(
        "q=%20tea%20%20time&kind=fact&kind=bogus&kind=fact&kind=goal&scope=project:track-survey"
        "&state=trash&sort=importance&page=3"
    )
    filters = MemoryFilters.from_query(params, [project])
    assert filters == MemoryFilters(
        q="tea time",
        kinds=("fact", "goal"),
        scope="project:track-survey",
        state="trash",
        sort="importance",
        page=3,
    )
    bad = MemoryFilters.from_query(QueryDict("scope=project:other&state=x&sort=y&page=zz"))
    assert bad == MemoryFilters()


def test_querystring_round_trips_and_leaves_defaults_out() -> None:
    filters = MemoryFilters(q="tea", kinds=("fact", "goal"), state="pending", page=2)
    assert MemoryFilters.from_query(QueryDict(filters.querystring())) == filters
    assert MemoryFilters().querystring() == ""
    assert filters.querystring(page=1, kinds=()) == "q=tea&state=pending"


def test_page_is_bounded() -> None:
    assert MemoryFilters.from_query(QueryDict("page=-4")).page == 1
    assert MemoryFilters.from_query(QueryDict("page=100000")).page == 50


def test_highlight_escapes_and_marks_words_and_chinese() -> None:
    assert highlight("<script>alert(1)</script> tea", "script") == (
        "&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt; tea"
    )
    assert highlight("I prefer teapots", "TEA") == "I prefer <mark>teapots</mark>"
    assert highlight("我喜欢用 Vue 写前端", "喜欢") == "我<mark>喜欢</mark>用 Vue 写前端"
    # A search for "amp" never marks inside the escaped entity of "&".
    assert highlight("R&D amp", "amp") == "R&amp;D <mark>amp</mark>"
    assert highlight("plain", "") == "plain"


@pytest.mark.django_db
def test_search_finds_english_prefixes_chinese_and_tags(alice: Any) -> None:
    tea = memory_create(owner=alice, content="I prefer green tea in the morning", kind="preference")
    vue = memory_create(owner=alice, content="前端项目使用 Vue 框架", kind="fact")
    tagged = memory_create(owner=alice, content="Deploys on Fridays are banned", tags=["release"])
    everything = Memory.objects.all()

    def found(text: str) -> set[int]:
        match = SearchMatch.among(everything, text)
        return set(everything.filter(match.condition).values_list("pk", flat=True))

    assert found("gre") == {tea.pk}
    assert found("green tea") == {tea.pk}
    assert found("前端") == {vue.pk}
    assert found("框") == {vue.pk}
    assert found("releas") == {tagged.pk}
    assert found("coffee") == set()
    assert found("!!!") == set()
