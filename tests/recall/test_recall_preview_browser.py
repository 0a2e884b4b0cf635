""" "What would my assistant recall?" on /settings/memories (issue 44 item 24): the block a
message would bring, why each memory is in it, what was left out; a dry run."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from memories.models import Memory
from memories.services import memory_create
from recall.models import AccessLog
from tests.conftest import ARTIFACTS, browser_login, client_for

pytestmark = [pytest.mark.django_db(transaction=True)]


def _memories(alice: Any) -> None:
    memory_create(owner=alice, content="I prefer pytest over unittest", kind="preference")
    memory_create(owner=alice, content="Lunch is at noon", kind="fact")
    memory_create(owner=alice, content="Always answer in British English", pinned=True)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_panel_shows_what_would_be_recalled_without_recording_it(
    page: Any, live_server: Any, alice: Any, width: int
) -> None:
    _memories(alice)
    browser_login(page, live_server, alice)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/settings/memories")
    page.get_by_text("What would my assistant recall?").click()
    page.fill("#recall-message", "Write tests for the parser module")
    page.get_by_role("button", name="Show what would be recalled").click()
    result = page.locator("#recall-preview .recall-result")
    expect(result.locator(".recall-block")).to_contain_text("I prefer pytest over unittest")
    expect(result).to_contain_text("Shares words with the message")
    expect(result).to_contain_text("Pinned: always given")
    # Still the memories page: htmx swapped the panel in place.
    expect(page.locator("h1")).to_have_text("Memories")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"recall-preview-{width}.png"), full_page=True)
    assert not AccessLog.objects.exists()
    assert set(Memory.objects.values_list("access_count", flat=True)) == {0}


def test_without_javascript_it_is_a_page_and_empty_input_is_refused(alice: Any) -> None:
    _memories(alice)
    client = client_for(alice)
    page = client.get("/settings/memories/recall", {"message": "tests for the parser"})
    assert "I prefer pytest over unittest" in page.content.decode()
    assert "<h1>What would my assistant recall?</h1>" in page.content.decode()
    empty = client.get("/settings/memories/recall", {"message": " "}).content.decode()
    assert "Type a message to see what would be recalled." in empty
    zh = client.get(
        "/settings/memories/recall", {"message": "测试"}, headers={"Accept-Language": "zh-hans"}
    )
    assert "你的助手会想起什么？" in zh.content.decode()
    assert not AccessLog.objects.exists()
