"""Deleting for good and the conversations page in a real browser (Playwright + Chromium),
and a walk of the new pages at desktop and phone widths in English and Chinese."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import expect

from conversations.models import Conversation, Message
from memories.models import Memory
from memories.services import memory_create, memory_delete
from tests.conftest import ARTIFACTS, browser_login, client_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Where the walk leaves its screenshots (to look at them).
SHOTS = ARTIFACTS / "trust"


def trashed(owner: Any, content: str) -> Memory:
    memory = memory_create(owner=owner, content=content, actor=owner)
    return memory_delete(memory=memory, actor=owner)


def a_conversation(owner: Any) -> tuple[Conversation, Memory]:
    conversation = Conversation.objects.create(
        owner=owner,
        external_id="trip",
        title="Planning the trip to Kyoto",
        client="Claude Desktop",
        participants=[{"name": "Alice", "role": "user", "is_account_user": True}],
    )
    said = [
        ("user", "I want to visit Kyoto in April, and I never fly: I take trains everywhere."),
        ("assistant", "April is cherry blossom season. A night train then the Shinkansen?"),
        ("user", "Yes. I am vegetarian, so pick places with vegetarian food."),
    ]
    messages = [
        Message.objects.create(
            conversation=conversation, role=role, content=text, external_id=f"m{n}", position=n
        )
        for n, (role, text) in enumerate(said, 1)
    ]
    memory = memory_create(
        owner=owner,
        content="Never flies; takes trains everywhere",
        kind="preference",
        conversation=conversation,
        origin="extracted",
        evidence=[{"message_ids": [messages[0].pk], "quote": "I never fly"}],
    )
    memory_create(
        owner=owner,
        content="Is vegetarian",
        kind="fact",
        conversation=conversation,
        origin="extracted",
        evidence=[{"message_ids": [messages[2].pk], "quote": "I am vegetarian"}],
    )
    Conversation.objects.create(
        owner=owner, external_id="tmp", title="Off the record", client="ChatGPT", temporary=True
    )
    return conversation, memory


def test_delete_forever_asks_then_removes_the_memory(
    page: Any, live_server: Any, alice: Any
) -> None:
    memory = trashed(alice, "My old locker code")
    trashed(alice, "Another thrown away")
    browser_login(page, live_server, alice)
    page.goto("/settings/memories?state=trash")
    row = page.locator(f"#memory-{memory.pk}")
    row.locator(".memory-actions-menu > summary").click()
    row.get_by_text("Delete forever…").click()
    expect(row.locator(".purge-confirm")).to_contain_text("Delete this memory forever?")
    assert Memory.objects.filter(pk=memory.pk).exists()
    row.get_by_role("button", name="Delete forever").click()
    expect(page.locator(f"#memory-{memory.pk}")).to_be_hidden()
    expect(page.locator("#toasts")).to_contain_text("Memory deleted forever.")
    expect(page.locator(".memory-list .memory-row")).to_have_count(1)
    assert not Memory.objects.filter(pk=memory.pk).exists()
    # Empty trash: its own confirmation, naming the number.
    page.get_by_text("Empty trash…").click()
    expect(page.locator("#memory-empty-trash")).to_contain_text("Delete 1 memory forever")
    page.get_by_role("button", name="Delete 1 memory forever").click()
    expect(page.locator(".memory-list .memory-row")).to_have_count(0)
    expect(page.locator(".empty")).to_contain_text("No memories yet")
    assert not Memory.objects.exists()


def test_delete_forever_without_javascript(browser: Any, live_server: Any, alice: Any) -> None:
    memory = trashed(alice, "My old locker code")
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    browser_login(page, live_server, alice)
    page.goto("/settings/memories?state=trash")
    page.locator(".memory-actions-menu > summary").click()
    page.get_by_text("Delete forever…").click()
    expect(page.locator("h3")).to_contain_text("Delete this memory forever?")
    page.get_by_role("button", name="Delete forever").click()
    expect(page.locator(".messages")).to_contain_text("Memory deleted forever.")
    assert not Memory.objects.filter(pk=memory.pk).exists()
    context.close()


def test_conversations_page_shows_messages_and_memories_then_deletes(
    page: Any, live_server: Any, alice: Any
) -> None:
    conversation, memory = a_conversation(alice)
    browser_login(page, live_server, alice)
    page.goto("/settings/memories")
    page.locator("nav[aria-label=Main]").get_by_text("Conversations").click()
    card = page.locator(".conversation-card").filter(has_text="Kyoto")
    expect(card).to_contain_text("Claude Desktop")
    expect(card).to_contain_text("3 messages")
    expect(card).to_contain_text("2 memories")
    expect(page.locator(".conversation-card").filter(has_text="Off the record")).to_contain_text(
        "Temporary"
    )
    card.get_by_role("link", name="Planning the trip to Kyoto").click()
    first = page.locator(".message-row").first
    expect(first.locator(".speaker")).to_have_text("Alice")
    expect(first.locator(".memory-chip")).to_have_text("Never flies; takes trains everywhere")
    expect(page.locator(".message-row").nth(1).locator(".speaker")).to_have_text("Assistant")
    first.locator(".memory-chip").click()
    expect(page.locator(".memory-list .memory-row")).to_have_count(1)
    page.go_back()
    page.get_by_text("Delete conversation…").click()
    page.get_by_role("button", name="Delete conversation").click()
    expect(page.locator(".messages")).to_contain_text("Conversation deleted.")
    expect(page.locator(".conversation-card")).to_have_count(1)
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    page.goto("/settings/memories")
    row = page.locator(f"#memory-{memory.pk}")
    expect(row).to_contain_text("source deleted")
    row.locator(".memory-more > summary").click()
    row.get_by_text("source deleted").click()
    expect(row.locator(".evidence")).to_contain_text("Source deleted")
    expect(row.locator(".evidence")).to_contain_text("I never fly")


def _walk(page: Any, language: str, pages: dict[str, str]) -> None:
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for name, url in pages.items():
            page.goto(url)
            page.screenshot(path=str(SHOTS / f"{name}-{language}-{width}.png"), full_page=True)
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            assert scroll_width <= width, f"{url} in {language} at {width} px: {scroll_width}"


def test_walk_the_pages_in_english_and_chinese(
    browser: Any, live_server: Any, alice: Any, bob: Any, team: Any
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    conversation, _memory = a_conversation(alice)
    trashed(alice, "My old locker code")
    memory = trashed(alice, "Another thrown away")
    cookie = client_for(alice).cookies[settings.SESSION_COOKIE_NAME].value
    pages = {
        "conversations": "/settings/conversations",
        "conversation": f"/settings/conversations/{conversation.pk}",
        "conversation-delete": f"/settings/conversations/{conversation.pk}/delete",
        "conversations-delete-all": "/settings/conversations/delete-all",
        "trash": "/settings/memories?state=trash",
        "delete-forever": f"/settings/memories/{memory.pk}/purge?next=/settings/memories",
        "empty-trash": "/settings/memories/empty-trash?next=/settings/memories%3Fstate%3Dtrash",
        "my-data": "/settings/data",
    }
    for language, locale in (("en", "en-US"), ("zh", "zh-CN")):
        context = browser.new_context(base_url=live_server.url, locale=locale)
        context.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
        )
        page = context.new_page()
        _walk(page, language, pages)
        if language == "zh":
            page.goto("/settings/conversations")
            expect(page.locator("h1")).to_have_text("对话")
            page.goto("/settings/data")
            expect(page.locator("h1")).to_have_text("我的数据")
        context.close()
