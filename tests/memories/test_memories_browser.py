"""/settings/memories in a real browser (Playwright + Chromium), with and without JavaScript."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import MemorySettings
from conversations.models import Conversation, Message
from memories.models import Memory
from memories.services import memory_create, memory_update
from tests.conftest import browser_login, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIST = "/settings/memories"


def remember(owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(owner=owner, content=content, actor=owner, **fields)


def rows(page: Any) -> Any:
    return page.locator(".memory-list .memory-row")


def menu(row: Any) -> Any:
    """A row's actions menu, opened (the actions live there since the redesign)."""
    row.locator(".memory-actions-menu > summary").click()
    return row.locator(".memory-actions")


def open_list(page: Any, live_server: Any, user: Any, query: str = "") -> None:
    browser_login(page, live_server, user)
    page.goto(LIST + query)


def test_search_narrows_the_list(page: Any, live_server: Any, alice: Any) -> None:
    remember(alice, "I prefer green tea in the morning", kind="preference")
    remember(alice, "我喜欢用 Vue 写前端", kind="preference")
    remember(alice, "The office is in Lyon")
    open_list(page, live_server, alice)
    expect(rows(page)).to_have_count(3)
    page.fill("#memory-search", "gre")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first.locator("mark")).to_have_text("green")
    expect(page).to_have_url(f"{live_server.url}{LIST}?q=gre")
    page.fill("#memory-search", "前端")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Vue")
    page.fill("#memory-search", "")
    expect(rows(page)).to_have_count(3)


def test_search_finds_by_meaning_and_offers_best_match(
    page: Any, live_server: Any, alice: Any
) -> None:
    remember(alice, "The cluster uses kubernetes")
    remember(alice, "I prefer green tea in the morning")
    open_list(page, live_server, alice)
    chosen_sort = page.locator("#memory-sort option:checked")
    expect(chosen_sort).to_have_text("Sort: Newest")
    page.fill("#memory-search", "kubernetse")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Similar meaning")
    expect(page).to_have_url(f"{live_server.url}{LIST}?q=kubernetse")
    expect(chosen_sort).to_have_text("Sort: Best match")
    page.select_option("#memory-sort", label="Sort: Newest")
    expect(page).to_have_url(f"{live_server.url}{LIST}?q=kubernetse&sort=newest")
    page.fill("#memory-search", "")
    expect(rows(page)).to_have_count(2)
    expect(page.locator("#memory-sort")).not_to_contain_text("Best match")


def test_kind_filter_and_state_tab_live_in_the_url(page: Any, live_server: Any, alice: Any) -> None:
    remember(alice, "Tea please", kind="preference")
    remember(alice, "Lives in Lyon", kind="fact")
    binned = remember(alice, "Old preference", kind="preference")
    Memory.objects.filter(pk=binned.pk).update(deleted_at=timezone.now())
    open_list(page, live_server, alice)
    page.click(".chips >> text=Preference")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Tea please")
    expect(page).to_have_url(f"{live_server.url}{LIST}?kind=preference")
    page.click(".tabs >> text=Trash")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Old preference")
    expect(page).to_have_url(f"{live_server.url}{LIST}?kind=preference&state=trash")
    page.go_back()
    expect(page).to_have_url(f"{live_server.url}{LIST}?kind=preference")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Tea please")
    page.reload()
    expect(rows(page)).to_have_count(1)
    expect(page.locator(".chip.selected")).to_contain_text("Preference")


def test_delete_then_undo_brings_it_back_in_place(page: Any, live_server: Any, alice: Any) -> None:
    for content in ("Third", "Second", "First"):
        remember(alice, content)
    open_list(page, live_server, alice)
    expect(rows(page)).to_have_count(3)
    menu(rows(page).nth(1)).get_by_role("button", name="Delete").click()
    expect(rows(page)).to_have_count(2)
    toast = page.locator("#toasts .toast")
    expect(toast).to_contain_text("Memory deleted.")
    expect(page.locator("#memory-tabs .tab.selected .count")).to_have_text("2")
    toast.get_by_role("button", name="Undo").click()
    expect(rows(page)).to_have_count(3)
    expect(rows(page).nth(1)).to_contain_text("Second")
    expect(page.locator("#toasts")).to_contain_text("Undone: 1 memory is back as it was.")
    expect(page.locator("#memory-tabs .tab.selected .count")).to_have_text("3")


def test_restore_from_trash(page: Any, live_server: Any, alice: Any) -> None:
    memory = remember(alice, "Binned by mistake")
    Memory.objects.filter(pk=memory.pk).update(deleted_at=timezone.now())
    open_list(page, live_server, alice, "?state=trash")
    expect(rows(page)).to_have_count(1)
    rows(page).first.get_by_role("button", name="Restore").click()
    expect(rows(page)).to_have_count(0)
    expect(page.locator("#toasts")).to_contain_text("Memory restored.")
    page.click(".tabs >> text=Active")
    expect(rows(page).first).to_contain_text("Binned by mistake")


def test_edit_and_the_stale_edit_conflict(page: Any, live_server: Any, alice: Any) -> None:
    memory = remember(alice, "Prefers tea")
    open_list(page, live_server, alice)
    row = page.locator(f"#memory-{memory.pk}")
    menu(row).get_by_role("link", name="Edit").click()
    row.get_by_label("Memory", exact=True).fill("Prefers green tea")
    row.get_by_label("Kind").select_option("preference")
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".memory-content")).to_have_text("Prefers green tea")
    expect(row.locator(".kind")).to_contain_text("Preference")

    menu(row).get_by_role("link", name="Edit").click()
    row.get_by_label("Memory", exact=True).fill("Prefers jasmine tea")
    memory_update(
        memory=memory, changes={"content": "Prefers coffee now"}, expected_revision=None, actor=None
    )
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".conflict")).to_contain_text("changed somewhere else")
    expect(row.locator(".current-version")).to_have_text("Prefers coffee now")
    expect(row.get_by_label("Memory", exact=True)).to_have_value("Prefers jasmine tea")
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".memory-content")).to_have_text("Prefers jasmine tea")
    assert Memory.objects.get(pk=memory.pk).content == "Prefers jasmine tea"


def test_clear_all_then_undo(page: Any, live_server: Any, alice: Any) -> None:
    for n in range(3):
        remember(alice, f"Memory {n}")
    open_list(page, live_server, alice)
    page.click(".page-menu > summary")
    page.click("text=Clear all…")
    expect(page.locator("#memory-clear")).to_contain_text(
        "This moves 3 personal memories to the trash."
    )
    page.click("text=Move 3 memories to the trash")
    expect(rows(page)).to_have_count(0)
    expect(page.locator("#memory-clear")).to_have_count(0)
    page.locator("#toasts").get_by_role("button", name="Undo").click()
    expect(rows(page)).to_have_count(3)
    assert not Memory.objects.filter(deleted_at__isnull=False).exists()


def test_add_a_memory(page: Any, live_server: Any, alice: Any, project: Any) -> None:
    open_list(page, live_server, alice)
    expect(page.locator(".empty-start")).to_contain_text("No memories yet")
    page.click("text=Add a memory")
    page.fill("#add-content", "The survey uses CGCS2000")
    page.select_option("#add-kind", "decision")
    page.select_option("#add-where", label="Track Survey")
    page.click("text=Remember this")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("The survey uses CGCS2000")
    expect(rows(page).first).to_contain_text("Track Survey")
    expect(page.locator("#add-content")).to_have_value("")
    expect(page.locator("#toasts")).to_contain_text("Memory added.")


def test_load_more(page: Any, live_server: Any, alice: Any) -> None:
    for n in range(25):
        remember(alice, f"Memory number {n:02d}")
    open_list(page, live_server, alice)
    expect(rows(page)).to_have_count(20)
    expect(page.locator("#load-more")).to_contain_text("20 of 25 shown")
    page.click("text=Load more")
    expect(rows(page)).to_have_count(25)
    expect(page.locator("#load-more")).to_have_count(0)
    expect(rows(page).last).to_contain_text("Memory number 00")
    # A later undo keeps both pages: the reloader now asks for page 2.
    menu(rows(page).last).get_by_role("button", name="Delete").click()
    page.locator("#toasts").get_by_role("button", name="Undo").click()
    expect(rows(page)).to_have_count(25)
    expect(rows(page).last).to_contain_text("Memory number 00")


def test_turning_memory_off_shows_the_banner(page: Any, live_server: Any, alice: Any) -> None:
    open_list(page, live_server, alice)
    expect(page.locator("#memory-off-banner")).not_to_contain_text("Memory is off.")
    page.locator("#memory-settings-panel > summary").click()
    page.get_by_label("Memory on").uncheck()
    expect(page.locator("#memory-off-banner")).to_contain_text("Memory is off.")
    expect(page.locator("#memory-off-banner")).to_contain_text("nothing is injected")
    expect(page.locator("#toasts")).to_contain_text("Memory settings saved.")
    assert not MemorySettings.for_user(alice).memory_enabled


def test_switching_to_chinese_translates_the_page(page: Any, live_server: Any, alice: Any) -> None:
    memory = remember(alice, "Tea please", kind="preference")
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=3))
    open_list(page, live_server, alice)
    expect(page.locator("h1")).to_have_text("Memories")
    page.select_option("#nav-language", "zh-hans")
    expect(page.locator("h1")).to_have_text("记忆")
    expect(page.locator("#memory-settings h2")).to_have_text("记忆设置")
    expect(rows(page).first.locator(".kind")).to_contain_text("偏好")
    expect(rows(page).first.locator("time")).to_contain_text("日前")
    page.select_option("#nav-language", "en")
    expect(page.locator("h1")).to_have_text("Memories")


def test_delete_and_restore_work_without_javascript(
    browser: Any, live_server: Any, alice: Any
) -> None:
    memory = remember(alice, "Works without scripts")
    context = browser.new_context(
        java_script_enabled=False, base_url=live_server.url, locale="en-US"
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        open_list(page, live_server, alice)
        menu(page.locator(f"#memory-{memory.pk}")).get_by_role("button", name="Delete").click()
        expect(page.locator(".undo-offer")).to_contain_text("Memory deleted.")
        expect(rows(page)).to_have_count(0)
        expect(page.locator(".undo-offer")).to_be_visible()
        page.click(".tabs >> text=Trash")
        expect(page).to_have_url(f"{live_server.url}{LIST}?state=trash")
        page.locator(f"#memory-{memory.pk}").get_by_role("button", name="Restore").click()
        expect(page.locator(".messages")).to_contain_text("Memory restored.")
        expect(page).to_have_url(f"{live_server.url}{LIST}?state=trash")
        assert Memory.objects.get(pk=memory.pk).state == "active"
    finally:
        context.close()


def _demo_memories(alice: Any, bob: Any, project: Any) -> None:
    conversation = Conversation.objects.create(
        owner=alice, external_id="demo", title="Weekend trip"
    )
    message = Message.objects.create(
        conversation=conversation,
        role="user",
        external_id="m1",
        position=1,
        content="For trains I always book a window seat, and I never take night trains.",
    )
    now = timezone.now()
    demo: list[tuple[str, str, dict[str, Any], int]] = [
        (
            "I always book a window seat on trains",
            "preference",
            {
                "origin": "extracted",
                "conversation": conversation,
                "evidence": [{"message_ids": [message.pk], "quote": "I always book a window seat"}],
                "tags": ["travel"],
            },
            2,
        ),
        ("回复我时请使用简体中文，代码注释用英文", "preference", {"pinned": True}, 9),
        ("Works as a surveyor in Lyon", "fact", {"tags": ["work"]}, 30),
        (
            "Unit tests must run against a real PostgreSQL, not SQLite",
            "lesson",
            {"origin": "imported"},
            12,
        ),
        ("Learning Rust this year", "goal", {}, 45),
        (
            "Prefers short answers with code first",
            "pattern",
            {"status": "pending", "origin": "extracted"},
            1,
        ),
    ]
    for content, kind, fields, days in demo:
        memory = memory_create(owner=alice, content=content, kind=kind, actor=alice, **fields)
        Memory.objects.filter(pk=memory.pk).update(
            created_at=now - timedelta(days=days),
            access_count=days % 7,
            last_accessed_at=now - timedelta(days=1),
        )
    memory_create(
        owner=bob,
        content="The survey uses CGCS2000 coordinates, not WGS84",
        kind="decision",
        scope="project",
        project=project,
        actor=bob,
    )
    faded = memory_create(
        owner=alice, content="Was planning a trip to Kyoto", kind="context", actor=alice
    )
    Memory.objects.filter(pk=faded.pk).update(forgotten_at=now - timedelta(days=2))


def test_screenshot_with_demo_data(
    page: Any, live_server: Any, alice: Any, bob: Any, project: Any
) -> None:
    _demo_memories(alice, bob, project)
    page.set_viewport_size({"width": 1280, "height": 900})
    open_list(page, live_server, alice)
    expect(rows(page)).to_have_count(6)
    save_screenshot(page, "settings-memories")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    save_screenshot(page, "settings-memories-mobile")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_an_open_panel_keeps_its_button_in_the_toolbar_row(
    browser: Any, live_server: Any, alice: Any, bob: Any, project: Any
) -> None:
    """At 390 px the open panel's button stays on the row of the others, the panel under them.
    Screenshots of the page, panel open, in both languages and both themes, at both widths."""
    _demo_memories(alice, bob, project)
    for width, height in ((390, 844), (1280, 900)):
        for language, locale in (("en", "en-US"), ("zh", "zh-CN")):
            for scheme in ("light", "dark"):
                context = browser.new_context(
                    base_url=live_server.url,
                    locale=locale,
                    color_scheme=scheme,
                    viewport={"width": width, "height": height},
                )
                page = context.new_page()
                open_list(page, live_server, alice)
                buttons = page.locator(".toolbar > details > summary")
                expect(buttons).to_have_count(3)
                for name, panel in (
                    ("add", "details.add-memory"),
                    ("settings", "#memory-settings-panel"),
                ):
                    page.locator(f"{panel} > summary").click()
                    expect(page.locator(panel)).to_have_attribute("open", "")
                    tops = [button.bounding_box()["y"] for button in buttons.all()]
                    assert len(set(tops)) == 1, (width, panel, tops)
                    content = page.locator(f"{panel} > summary + *").bounding_box()
                    assert content["y"] > tops[0] + buttons.first.bounding_box()["height"]
                    save_screenshot(page, f"settings-memories-{width}-{language}-{scheme}-{name}")
                    # A setting's long help text never squeezes its checkbox.
                    boxes = page.locator(f"{panel} .switch input").all()
                    assert len({round(box.bounding_box()["width"]) for box in boxes}) <= 1
                    page.locator(f"{panel} > summary").click()
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                # The faded line's words never run under the notice's Dismiss.
                assert not page.evaluate(_OVERLAPS, [".notice-dismiss button", ".notice-faded"])
                context.close()


# Whether the box of the first selector's element meets a line box of the second's text.
_OVERLAPS = """([first, second]) => {
  const a = document.querySelector(first).getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(document.querySelector(second));
  return Array.from(range.getClientRects()).some((b) =>
    b.width > 0 && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom);
}"""


def test_the_memory_off_banner_opens_and_shows_the_settings(
    browser: Any, live_server: Any, alice: Any
) -> None:
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)
    for javascript in (True, False):
        context = browser.new_context(
            base_url=live_server.url,
            viewport={"width": 390, "height": 500},
            java_script_enabled=javascript,
        )
        page = context.new_page()
        open_list(page, live_server, alice)
        page.locator("#memory-off-banner a", has_text="Turn memory on").click()
        expect(page.locator("#memory-settings-panel")).to_have_attribute("open", "")
        expect(page.get_by_label("Memory on")).to_be_in_viewport()
        context.close()
