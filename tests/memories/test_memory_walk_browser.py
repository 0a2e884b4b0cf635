"""/settings/memories in a real browser, as a new user meets it under `make run` (issue 44)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from conversations.extraction.runs import execute_run, extraction_request
from memories.models import Memory
from memories.services import memory_create
from tests.conftest import browser_login, save_screenshot
from tests.extraction_helpers import conversation_with

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIST = "/settings/memories"


def remember(owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(owner=owner, content=content, actor=owner, **fields)


def rows(page: Any) -> Any:
    return page.locator(".memory-list .memory-row")


def test_under_debug_an_invalid_add_renders_in_place(
    page: Any, live_server: Any, alice: Any, settings: Any
) -> None:
    # `make run` turns DEBUG on, which loads django-htmx's handler of 400 answers.
    settings.DEBUG = True
    remember(alice, "Tea")
    browser_login(page, live_server, alice)
    page.goto(LIST)
    assert page.locator("script[data-debug]").count() == 1
    page.click("text=Add a memory")
    page.get_by_role("button", name="Remember this").click()
    expect(page.locator("#memory-add .error")).to_contain_text("Write what should be remembered.")
    expect(page.locator("h1")).to_have_text("Memories")
    expect(rows(page)).to_have_count(1)
    # An invalid edit too: the row's form stays in the list, with its error.
    rows(page).first.locator(".memory-actions-menu > summary").click()
    rows(page).first.get_by_role("link", name="Edit").click()
    page.fill(".memory-row textarea[name=content]", "")
    rows(page).first.get_by_role("button", name="Save").click()
    expect(rows(page).first.locator(".error")).to_be_visible()
    expect(page.locator("h1")).to_have_text("Memories")


def extracted(owner: Any, text: str) -> None:
    conversation = conversation_with(owner, ("user", text))
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_memory_updated_notice_can_be_dismissed(
    page: Any, live_server: Any, alice: Any, width: int
) -> None:
    extracted(alice, "I prefer Vue for the frontend")
    extracted(alice, "I live in Lyon and work as a surveyor")
    page.set_viewport_size({"width": width, "height": 844})
    browser_login(page, live_server, alice)
    page.goto(LIST)
    notice = page.locator("#extraction-notice")
    # Two runs' notices are one box: the newest, a count, the earlier ones folded.
    expect(notice.locator(".notice-box")).to_have_count(1)
    expect(notice.locator(".notice-title")).to_contain_text("2 updates")
    expect(notice.locator(".notice:visible")).to_have_count(1)
    expect(notice.locator(".notice-earlier > summary")).to_have_text("Show 1 earlier update")
    save_screenshot(page, f"notice-{width}")
    # Playwright clicks only what is on top at the button's centre: nothing covers Dismiss.
    notice.get_by_role("button", name="Dismiss").click(timeout=3_000)
    expect(notice).not_to_contain_text("Memory updated")


def test_a_duplicate_add_clears_the_earlier_toast(page: Any, live_server: Any, alice: Any) -> None:
    browser_login(page, live_server, alice)
    page.goto(LIST)
    page.click("text=Add a memory")
    page.fill("#add-content", "Drinks oolong tea")
    page.get_by_role("button", name="Remember this").click()
    expect(page.locator("#toasts")).to_contain_text("Memory added.")
    page.fill("#add-content", "Drinks oolong tea")
    page.get_by_role("button", name="Remember this").click()
    expect(page.locator("#memory-add .known")).to_contain_text("You already have this")
    expect(page.locator("#toasts .toast")).to_have_count(0)


def test_deleting_the_last_trashed_memory_forever_empties_the_trash(
    page: Any, live_server: Any, alice: Any
) -> None:
    remember(alice, "Kept")
    memory = remember(alice, "Binned for good")
    memory.deleted_at = timezone.now()
    memory.save(update_fields=["deleted_at"])
    browser_login(page, live_server, alice)
    page.goto(f"{LIST}?state=trash")
    expect(page.locator("#bulk-matching")).to_have_text("All 1 matching")
    rows(page).first.locator(".memory-actions-menu > summary").click()
    rows(page).first.get_by_role("link", name="Delete forever…").click()
    page.get_by_role("button", name="Delete forever").click()
    expect(page.locator("#toasts .toast")).to_contain_text("Memory deleted forever.")
    expect(page.locator("#memory-results .empty")).to_contain_text("The trash is empty.")
    expect(page.locator("#memory-bulk")).to_have_count(0)
    assert not Memory.objects.filter(pk=memory.pk).exists()
