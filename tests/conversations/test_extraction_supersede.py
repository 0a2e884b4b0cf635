"""A new statement about the same attribute supersedes the old one whatever kind each was
stored as, by one rule (memories.duplicates.replaced_by / attribute_of) for extraction's real
runs, /remember, the API and the page, in both languages."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from tests.conftest import client_for
from tests.extraction_helpers import extracted
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db


def _in_effect(user: Any) -> list[str]:
    return sorted(Memory.objects.filter(owner=user).in_effect().values_list("content", flat=True))


def test_a_preference_supersedes_a_fact_about_the_same_thing(alice: Any) -> None:
    extracted(alice, ("user", "I like to use Vue 3 for frontends."))
    extracted(alice, ("user", "Actually, I now prefer React."))
    assert _in_effect(alice) == ["Prefers React"]


def test_what_one_uses_supersedes_what_one_preferred(alice: Any) -> None:
    extracted(alice, ("user", "For Python tests I prefer unittest: no extra dependencies."))
    extracted(alice, ("user", "Update on that: I write all my tests with pytest now."))
    effect = _in_effect(alice)
    assert not any("unittest" in content for content in effect), effect
    assert any("pytest" in content for content in effect), effect


def test_a_move_and_a_new_job_in_one_sentence_both_supersede(alice: Any) -> None:
    extracted(alice, ("user", "I live in Berlin and I work at Zalando."))
    extracted(
        alice,
        ("user", "We are moving from Berlin to Munich next month, I got a new job at Siemens"),
    )
    effect = _in_effect(alice)
    assert any("Munich" in content for content in effect), effect
    assert any("Siemens" in content for content in effect), effect
    assert not any("Zalando" in content or "Lives in Berlin" in content for content in effect)


def test_an_extracted_move_supersedes_one_added_on_the_page(alice: Any) -> None:
    client_for(alice).post(
        "/settings/memories/add", {"content": "我住在上海", "kind": "", "where": "personal"}
    )
    extracted(alice, ("user", "我们上个月已经搬到深圳了。"))
    assert [content for content in _in_effect(alice) if "上海" in content] == []
    assert any("深圳" in content for content in _in_effect(alice))


@pytest.mark.parametrize("way", ["remember", "api"])
def test_remember_and_the_api_supersede_an_extracted_memory(alice: Any, way: str) -> None:
    extracted(alice, ("user", "I'm a big fan of Vue for frontends."))
    api = ApiClient(alice)
    if way == "remember":
        api.post("/commands", {"command": "/remember I prefer React these days"})
    else:
        api.post("/memories", {"content": "I prefer React these days", "kind": "preference"})
    assert _in_effect(alice) == ["I prefer React these days"]
