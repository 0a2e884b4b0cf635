"""Recall's ranking: BM25 over any query term, stopwords, concepts across languages, what a
question asks (a person, a date), and the settings page's search ranked the same way."""

from __future__ import annotations

from typing import Any

import pytest

from memories.memory_list import SearchMatch
from memories.models import Memory
from memories.search import candidates, search_memories
from recall.injection import PreviewRequest, injection_preview
from search import keyword, ranking
from search.textsearch import expansions, search_document
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db


def _injected(user: Any, message: str) -> list[str]:
    preview = injection_preview(user, PreviewRequest(message=message, dry_run=True))
    return [entry["content"] for entry in preview["memories"]]


def _keyword_order(user: Any, text: str) -> list[int]:
    return [pk for pk, _score in keyword.keyword_hits(candidates(user), text, 10)]


def test_readme_pytest_example_is_recalled_for_writing_tests(alice: Any) -> None:
    remember(alice, "I prefer pytest over unittest")
    remember(alice, "The parser lives in a separate repository")  # shares a word only
    remember(alice, "Lunch is at noon")

    injected = _injected(alice, "Write tests for the parser module")

    assert "I prefer pytest over unittest" in injected
    assert "Lunch is at noon" not in injected


@pytest.mark.parametrize(
    "message",
    [
        "docker build",
        "My docker build fails behind the corporate network",
        "docker 构建失败了怎么办",
    ],
)
def test_docker_build_finds_the_chinese_docker_memory(alice: Any, message: str) -> None:
    proxy = remember(alice, "Docker 构建需要使用 proxy-env 代理")
    remember(alice, "我喜欢喝咖啡")
    remember(alice, "The office network is slow on Mondays")

    assert _keyword_order(alice, message)[0] == proxy.pk
    assert _injected(alice, message)[0] == "Docker 构建需要使用 proxy-env 代理"


def test_a_rare_content_word_beats_a_shared_name(alice: Any) -> None:
    remember(alice, "How long has John been climbing")
    pottery = remember(alice, "John started pottery in May")
    remember(alice, "John likes his coffee black")

    assert _keyword_order(alice, "When did John start pottery")[0] == pottery.pk
    assert search_memories(alice, "When did John start pottery").memories[0].memory == pottery


def test_any_term_matches_and_more_terms_rank_higher(alice: Any) -> None:
    both = remember(alice, "Invoices go to the finance team")
    one = remember(alice, "The finance meeting is on Monday")
    other = remember(alice, "Invoices are archived yearly")
    remember(alice, "Nothing to do with it")

    order = _keyword_order(alice, "finance invoices")

    assert order[0] == both.pk
    assert set(order) == {both.pk, one.pk, other.pk}


def test_stopwords_are_ignored_in_both_languages(alice: Any) -> None:
    remember(alice, "What is the plan for the week")
    remember(alice, "我们什么时候开会")

    assert search_document("what is the plan") == "plan"
    assert "什么" not in search_document("我们什么时候开会")
    assert "时候" not in search_document("我们什么时候开会")
    assert keyword.keyword_hits(candidates(alice), "what is the", 10) == []
    assert keyword.keyword_hits(candidates(alice), "我们什么时候", 10) == []


def test_concepts_expand_across_languages_but_never_repeat_the_query() -> None:
    assert {"pytest", "unittest", "测试"} <= set(expansions("write tests"))
    assert "构建" in expansions("docker build")
    assert "build" in expansions("构建失败")
    assert "docker" not in expansions("docker build")


def test_a_named_person_and_a_when_question_favour_their_memories(alice: Any) -> None:
    remember(alice, "Maria moved the tomato plants inside")
    dated = remember(alice, "Maria moved to Lisbon in March 2024")
    remember(alice, "Pedro moved to Lisbon too")

    # A person of past conversations is named; a place is a word to look for.
    intent = ranking.query_intent("When did Maria move to Lisbon?", ["Maria", "Pedro"])
    assert intent.names == {"maria"} and intent.asks_when
    assert "maria" not in intent.words.lower() and "Lisbon" in intent.words

    assert search_memories(alice, "When did Maria move to Lisbon?").memories[0].memory == dated


def test_settings_search_ranks_any_term_and_badges_meaning_only(alice: Any) -> None:
    tea = remember(alice, "I prefer green tea in the morning")
    green = remember(alice, "The garden is green")
    remember(alice, "Unrelated note about taxes")
    everything = Memory.objects.all()

    match = SearchMatch.among(everything, "green tea")
    ordered = list(
        match.best_first(everything.filter(match.condition)).values_list("pk", flat=True)
    )

    assert ordered[:2] == [tea.pk, green.pk]
    # Word matches found by meaning too never carry the "Similar meaning" badge.
    assert match.by_meaning_only([tea.pk, green.pk]) == frozenset()
    typo = SearchMatch.among(everything, "gren tee")
    if tea.pk in typo.similar:
        assert tea.pk in typo.by_meaning_only([tea.pk])
