"""/settings/memories in a real browser: the fixes to its rough edges, at desktop and phone
sizes, with and without JavaScript."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from conversations.extraction.runs import execute_run, extraction_request
from memories.models import Memory
from memories.services import memory_create
from tests.conftest import ARTIFACTS, browser_login
from tests.extraction_helpers import conversation_with

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIST = "/settings/memories"
SHOTS = ARTIFACTS / "memory-page"


def remember(owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(owner=owner, content=content, actor=owner, **fields)


def rows(page: Any) -> Any:
    return page.locator(".memory-list .memory-row")


def open_list(page: Any, live_server: Any, user: Any, query: str = "") -> None:
    browser_login(page, live_server, user)
    page.goto(LIST + query)


def no_js_page(browser: Any, live_server: Any) -> Any:
    context = browser.new_context(
        java_script_enabled=False, base_url=live_server.url, locale="en-US"
    )
    context.set_default_timeout(10_000)
    return context


def test_apply_with_nothing_selected_toasts_in_place(
    page: Any, live_server: Any, alice: Any
) -> None:
    remember(alice, "Tea")
    open_list(page, live_server, alice)
    page.select_option("#bulk-action", "delete")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#toasts .toast")).to_contain_text("Select at least one memory first.")
    expect(page.locator("h1")).to_have_text("Memories")
    expect(rows(page)).to_have_count(1)
    assert Memory.objects.get().deleted_at is None


def test_notice_undo_toasts_and_updates_the_list(page: Any, live_server: Any, alice: Any) -> None:
    remember(alice, "Lives in Lyon")
    conversation = conversation_with(alice, ("user", "I prefer Vue for the frontend"))
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    open_list(page, live_server, alice)
    expect(rows(page)).to_have_count(2)
    expect(page.locator("#memory-tabs .tab.selected .count")).to_have_text("2")
    page.locator("#extraction-notice").get_by_role("button", name="Undo").click()
    expect(page.locator("#toasts .toast")).to_contain_text("Undone")
    expect(page.locator("#extraction-notice")).not_to_contain_text("Memory updated")
    expect(rows(page)).to_have_count(1)
    expect(page.locator("#memory-tabs .tab.selected .count")).to_have_text("1")


def test_an_invalid_add_stays_an_htmx_form(page: Any, live_server: Any, alice: Any) -> None:
    for n in range(12):
        remember(alice, f"Memory number {n}")
    open_list(page, live_server, alice)
    page.click("text=Add a memory")
    page.get_by_role("button", name="Remember this").click()
    expect(page.locator("#memory-add .error")).to_contain_text("Write what should be remembered.")
    expect(page.locator("details.add-memory")).to_have_attribute("open", "")
    page.fill("#add-content", "The survey uses CGCS2000")
    page.get_by_role("button", name="Remember this").click()
    expect(page.locator("#toasts")).to_contain_text("Memory added.")
    expect(rows(page).first).to_contain_text("The survey uses CGCS2000")
    # Still the same page: HTMX added it, no full-page post.
    assert page.evaluate("window.performance.getEntriesByType('navigation').length") == 1
    assert page.evaluate("!!document.querySelector('#memory-add[hx-post]')")


def test_restoring_the_last_trashed_memory_empties_the_trash_view(
    page: Any, live_server: Any, alice: Any
) -> None:
    memory = remember(alice, "Binned by mistake")
    open_list(page, live_server, alice)
    rows(page).first.locator(".memory-actions-menu > summary").click()
    rows(page).first.get_by_role("button", name="Delete").click()
    expect(page.locator("#toasts .toast")).to_contain_text("Memory deleted.")
    expect(page.locator("#memory-results .empty")).to_contain_text("No active memories.")
    page.click(".tabs >> text=Trash")
    expect(rows(page)).to_have_count(1)
    rows(page).first.get_by_role("button", name="Restore").click()
    expect(page.locator("#memory-results .empty")).to_contain_text("The trash is empty.")
    expect(page.locator("#memory-bulk")).to_have_count(0)
    expect(page.locator("#toasts .toast")).to_have_count(1)
    expect(page.locator("#toasts .toast")).to_contain_text("Memory restored.")
    assert Memory.objects.get(pk=memory.pk).deleted_at is None


def test_without_javascript_no_dead_controls_and_one_message(
    browser: Any, live_server: Any, alice: Any
) -> None:
    memory = remember(alice, "Works without scripts")
    remember(alice, "Another one")
    context = no_js_page(browser, live_server)
    page = context.new_page()
    try:
        open_list(page, live_server, alice)
        expect(page.get_by_text("Select all shown")).to_be_hidden()
        row = page.locator(f"#memory-{memory.pk}")
        row.locator("summary", has_text="Actions").click()
        row.get_by_role("button", name="Delete").click()
        expect(page.get_by_text("Memory deleted.")).to_have_count(1)
        expect(page.locator(".undo-offer")).to_be_visible()
        page.select_option("#bulk-action", "delete")
        page.get_by_role("button", name="Apply").click()
        expect(page.locator("h1")).to_have_text("Memories")
        expect(page.get_by_text("Select at least one memory first.")).to_be_visible()
    finally:
        context.close()


def _demo(alice: Any, bob: Any, project: Any) -> None:
    now = timezone.now()
    for n, (content, kind) in enumerate(
        [
            ("I always book a window seat on trains", "preference"),
            ("回复我时请使用简体中文，代码注释用英文", "preference"),
            ("Works as a surveyor in Lyon", "fact"),
            ("Unit tests must run against a real PostgreSQL, not SQLite", "lesson"),
            ("Learning Rust this year", "goal"),
            ("Decided to keep the API versioned under /v1", "decision"),
        ]
    ):
        memory = remember(alice, content, kind=kind, tags=["travel"] if n == 0 else [])
        Memory.objects.filter(pk=memory.pk).update(created_at=now - timezone.timedelta(days=n))
    remember(alice, "Prefers short answers", kind="pattern", status="pending", origin="extracted")
    memory_create(
        owner=bob,
        content="The survey uses CGCS2000 coordinates, not WGS84",
        kind="decision",
        scope="project",
        project=project,
        actor=bob,
    )
    conversation = conversation_with(alice, ("user", "I prefer Vue for the frontend"))
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_page_fits_a_phone_and_a_desktop(
    page: Any, live_server: Any, alice: Any, bob: Any, project: Any, language: str
) -> None:
    _demo(alice, bob, project)
    browser_login(page, live_server, alice)
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": live_server.url}]
    )
    suffix = "zh" if language == "zh-hans" else "en"
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(LIST)
    expect(rows(page)).to_have_count(8)
    # No totals card repeating the chips: the counts are on the chips.
    expect(page.locator("#memory-summary .kind-totals")).to_have_count(0)
    expect(page.locator(".chips .chip .count").first).to_be_visible()
    # Each row's meta is short; the rest is behind its expander; actions sit in a menu.
    first = rows(page).first
    expect(first.locator(".memory-actions-menu > summary")).to_be_visible()
    expect(first.locator(".memory-details")).to_be_hidden()
    page.screenshot(path=f"{SHOTS}/memories-1280-{suffix}.png", full_page=True)
    first.locator(".memory-actions-menu > summary").click()
    page.screenshot(path=f"{SHOTS}/memories-1280-{suffix}-menu.png")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(LIST)
    top = page.evaluate(
        "document.querySelector('.memory-list .memory-row').getBoundingClientRect().top"
    )
    assert top < page.evaluate("window.innerHeight"), top
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=f"{SHOTS}/memories-390-{suffix}.png")
    page.screenshot(path=f"{SHOTS}/memories-390-{suffix}-full.png", full_page=True)
    rows(page).first.locator(".memory-actions-menu > summary").click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=f"{SHOTS}/memories-390-{suffix}-menu.png")
