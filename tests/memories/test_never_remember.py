"""The "Don't remember" list (issue 44, item 25): topics or words a user never wants stored,
listed and edited in the memory settings, and applied by every way in through the same gate
(memories.gate.never_remember_rule): extraction's real runs, /remember, the API, the page and
an import; in English and Chinese."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import translation

from accounts.models import MemorySettings
from memories.gate import never_remember_rule
from memories.models import Memory
from tests.conftest import client_for
from tests.extraction_helpers import extracted
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db

RULES = "health\n小雨\nZalando"


def _set_rules(user: Any) -> None:
    MemorySettings.objects.filter(user=user).update(never_remember=RULES)


def test_the_list_is_shown_and_edited_in_the_memory_settings(alice: Any) -> None:
    client = client_for(alice)
    page = client.get("/settings/memories").content.decode()
    assert 'name="never_remember"' in page
    client.post(
        reverse("memory-settings"),
        {"memory_enabled": "on", "auto_extract": "on", "never_remember": " health \n\n小雨"},
    )
    assert MemorySettings.for_user(alice).never_remember_rules == ["health", "小雨"]
    assert "小雨" in client.get("/settings/memories").content.decode()


def test_the_settings_speak_chinese(alice: Any) -> None:
    with translation.override("zh-hans"):
        page = client_for(alice).get("/settings/memories", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "不要记住" in page.content.decode()


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("I get migraines about twice a month. I live in Leeds.", "Leeds"),
        ("我女儿叫小雨，今年五岁。我住在苏州。", "苏州"),
        ("I work at Zalando. I have a dog named Biscuit.", "Biscuit"),
    ],
)
def test_extraction_leaves_out_what_the_list_names(alice: Any, said: str, kept: str) -> None:
    _set_rules(alice)
    stored = [content for _kind, content in extracted(alice, ("user", said))]
    assert stored and all(kept in content for content in stored), stored


def test_remember_the_api_and_the_page_refuse_it(alice: Any) -> None:
    _set_rules(alice)
    api = ApiClient(alice)
    command = api.post("/commands", {"command": "/remember My doctor diagnosed asthma"})
    assert command.status_code == 422
    assert command.json()["error"]["code"] == "NEVER_REMEMBER"
    created = api.post("/memories", {"content": "小雨喜欢画画"})
    assert created.status_code == 422 and created.json()["error"]["details"]["rule"] == "小雨"
    page = client_for(alice).post(
        "/settings/memories/add", {"content": "I used to work at Zalando", "where": "personal"}
    )
    assert page.status_code == 400 and "Zalando" in page.content.decode()
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("text", "rules", "rule"),
    [
        ("Allergic to peanuts", ["health"], "health"),
        ("对花生过敏", ["健康"], "健康"),
        ("Works in healthcare IT", ["health"], ""),
        ("Has a cat named Mochi", ["Moch"], ""),
        ("Has a cat named Mochi", ["mochi"], "mochi"),
    ],
)
def test_the_rule_reads_topics_and_words(text: str, rules: list[str], rule: str) -> None:
    assert never_remember_rule(text, rules) == rule
