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


RECORD = """() => { window.__htmx = [];
  for (const type of ["htmx:beforeRequest", "htmx:beforeSwap", "htmx:afterSettle"]) {
    document.body.addEventListener(type, event => window.__htmx.push({
      type, path: event.detail.pathInfo ? event.detail.pathInfo.requestPath : "",
      t: performance.now() }));
  } }"""


def _timed(page: Any, action: Any, done: Any) -> tuple[float, list[str]]:
    """Milliseconds from the action's answer to its last swap settled, and the requests made."""
    page.evaluate("window.__htmx = []")
    action()
    done()
    page.wait_for_timeout(400)  # any follow-up request would start meanwhile
    events = page.evaluate("window.__htmx")
    requests = [e["path"] for e in events if e["type"] == "htmx:beforeRequest"]
    answered = next(e["t"] for e in events if e["type"] == "htmx:beforeSwap")
    settled = max(e["t"] for e in events if e["type"] == "htmx:afterSettle")
    return settled - answered, requests


def test_add_edit_and_delete_are_done_by_their_own_answer(
    page: Any, live_server: Any, alice: Any
) -> None:
    """One answer carries what changed, out of band: no follow-up reloads (issue 44 item 22)."""
    remember(alice, "Kept")
    browser_login(page, live_server, alice)
    page.goto(LIST)
    page.evaluate(RECORD)
    page.click("text=Add a memory")
    page.fill("#add-content", "Drinks oolong tea")
    add_ms, add_requests = _timed(
        page,
        lambda: page.get_by_role("button", name="Remember this").click(),
        lambda: expect(page.locator("#memory-tabs .tab.selected .count")).to_have_text("2"),
    )
    expect(rows(page).first).to_contain_text("Drinks oolong tea")
    expect(page.locator("#memory-summary")).to_contain_text("2 active memories")

    row = rows(page).first
    row.locator(".memory-actions-menu > summary").click()
    row.get_by_role("link", name="Edit").click()
    page.fill(".memory-row textarea[name=content]", "Drinks green tea")
    edit_ms, edit_requests = _timed(
        page,
        lambda: rows(page).first.get_by_role("button", name="Save").click(),
        lambda: expect(rows(page).first).to_contain_text("Drinks green tea"),
    )

    rows(page).first.locator(".memory-actions-menu > summary").click()
    delete_ms, delete_requests = _timed(
        page,
        lambda: rows(page).first.get_by_role("button", name="Delete").click(),
        lambda: expect(page.locator("#memory-tabs .tab.selected .count")).to_have_text("1"),
    )
    expect(page.locator("#memory-summary")).to_contain_text("1 active memory")
    print(f"answer to settled: add {add_ms:.0f}, edit {edit_ms:.0f}, delete {delete_ms:.0f} ms")
    assert add_requests == ["/settings/memories/add"]
    # Only the "Memory updated" notice refreshes itself after an edit or a delete.
    assert edit_requests[1:] in ([], [LIST]) and delete_requests[1:] in ([], [LIST])
    assert max(add_ms, edit_ms, delete_ms) < 300


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_every_kind_chip_and_state_tab_is_in_view(
    page: Any, live_server: Any, alice: Any, language: str
) -> None:
    """No sideways strip cutting them off (issue 44 item 23)."""
    for kind in ("preference", "fact", "lesson", "decision", "pattern", "goal", "context"):
        remember(alice, f"A {kind}", kind=kind)
    browser_login(page, live_server, alice)
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": live_server.url}]
    )
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(LIST)
    outside = page.evaluate(
        """[...document.querySelectorAll('.chips .chip, .tabs .tab')].filter(e => {
             const box = e.getBoundingClientRect();
             return box.left < 0 || box.right > window.innerWidth; }).map(e => e.textContent.trim())"""
    )
    assert outside == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    save_screenshot(page, f"chips-390-{language}")
