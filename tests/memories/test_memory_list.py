"""The list machinery: filters in the URL, search in English and Chinese, highlighting."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import QueryDict

from memories import memory_list
from memories.filters import MemoryFilters
from memories.memory_list import SearchMatch, highlight
from memories.models import Memory
from memories.services import memory_create
from search.keyword import keyword_hits
from teams.models import Project
from tests.recall_helpers import remember


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


@pytest.mark.django_db
def test_one_chinese_character_finds_the_words_it_ends(alice: Any) -> None:
    """茶 is the last character of 乌龙茶 and 绿茶: no bigram of theirs starts with it."""
    oolong = memory_create(owner=alice, content="我喜欢乌龙茶")
    green = memory_create(owner=alice, content="早上喝绿茶，下午喝咖啡")
    memory_create(owner=alice, content="不喝咖啡")
    everything = Memory.objects.all()
    match = SearchMatch.among(everything, "茶")
    assert set(everything.filter(match.condition).values_list("pk", flat=True)) == {
        oolong.pk,
        green.pk,
    }


@pytest.mark.django_db
def test_the_word_being_typed_is_ranked_as_a_prefix_without_concepts(alice: Any) -> None:
    short = memory_create(owner=alice, content="kubernetes")
    wordy = memory_create(
        owner=alice, content="the onboarding notes mention kubernetes among many other tools"
    )
    postgres = memory_create(owner=alice, content="postgres backups run nightly")
    chinese = memory_create(owner=alice, content="数据库每晚备份")
    teapot = memory_create(owner=alice, content="a teapot on the green shelf")
    everything = Memory.objects.all()

    def ranked(text: str, **options: Any) -> list[int]:
        return [pk for pk, _score in keyword_hits(everything, text, 10, **options)]

    # "kuber" is no word of any memory: as typed it is the start of one, ranked by BM25.
    assert ranked("kuber") == []
    assert ranked("kuber", as_typed=True) == [short.pk, wordy.pk]
    assert SearchMatch.among(everything, "kuber").keyword == (short.pk, wordy.pk)
    # The last word typed is the prefix, even when said before too.
    assert teapot.pk in ranked("tea green tea", as_typed=True)
    # A concept's other words rank what the box's words do not match: recall only.
    assert ranked("数据库") == [chinese.pk, postgres.pk]
    assert ranked("数据库", as_typed=True) == [chinese.pk]


@pytest.mark.django_db
def test_a_common_word_ranks_at_most_the_cap_and_the_best_matches_first(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_list, "MAX_MATCH_ROWS", 5)
    best = memory_create(owner=alice, content="oolong tea from Taiwan")
    teas = [memory_create(owner=alice, content=f"tea number {n}") for n in range(12)]
    everything = Memory.objects.all()
    match = SearchMatch.among(everything, "tea oolong")
    # Only 5 of the 13 matches were scored: the one holding both words, then the newest.
    assert match.keyword[0] == best.pk
    assert set(match.keyword) == {best.pk, *(memory.pk for memory in teas[-4:])}
    # Every match is still listed, the best first and the unranked after, newest first.
    listed = list(match.best_first(everything.filter(match.condition)).values_list("pk", flat=True))
    assert listed[0] == best.pk and len(listed) == 13
    assert listed[5:] == [memory.pk for memory in reversed(teas[:8])]


@pytest.mark.django_db
def test_meaning_is_searched_only_when_the_words_find_few(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_list, "FEW_WORD_MATCHES", 2)
    remember(alice, "The cluster uses kubernetes")
    everything = Memory.objects.all()
    assert SearchMatch.among(everything, "kubernetse").similar
    for n in range(2):
        memory_create(owner=alice, content=f"kubernetse note {n}")
    assert SearchMatch.among(everything, "kubernetse").similar == ()
