"""The privacy switch in a real browser (Playwright + Chromium), and a walk of the pages
this work added or changed at desktop and phone widths in English and Chinese."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import expect

from accounts.models import ApiToken, MemorySettings
from tests.conftest import ARTIFACTS, browser_login, client_for
from tests.recall_helpers import ApiClient, remember

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = ARTIFACTS / "privacy-switch"


def test_pause_for_an_hour_shows_everywhere_then_resume(page: Any, live_server: Any, alice: Any):
    browser_login(page, live_server, alice)
    page.goto("/settings/memories")
    page.get_by_text("Pause memory").click()
    page.get_by_role("button", name="For an hour").click()
    expect(page.locator("#privacy-paused-pill")).to_contain_text("Memory paused until")
    assert MemorySettings.for_user(alice).privacy_paused

    page.goto("/settings/tokens/")
    expect(page.locator("#privacy-paused-pill")).to_be_visible()
    page.get_by_role("button", name="Resume memory").click()
    expect(page.locator("#privacy-paused-pill")).to_have_count(0)
    expect(page).to_have_url(f"{live_server.url}/settings/tokens/")
    assert not MemorySettings.for_user(alice).privacy_paused


def test_walk_the_pages_in_english_and_chinese(
    browser: Any, live_server: Any, alice: Any, project: Any
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    memory = remember(alice, "Prefers tabs over spaces in Python code", kind="preference")
    api = ApiClient(alice)
    api.token.name = "Laptop chat app"
    api.token.save()
    api.post("/injection-preview", {"message": "Should I use tabs in this Python file?"})
    ApiToken.issue(
        user=alice, name="Work (read only)", scopes=["read"], limit="project", limit_project=project
    )[0].pause()
    cookie = client_for(alice).cookies[settings.SESSION_COOKIE_NAME].value
    pages = {
        "tokens": "/settings/tokens/",
        "access": "/settings/access",
        "history": f"/settings/memories/{memory.pk}/history",
        "paused": "/settings/memories",
    }
    for language, locale in (("en", "en-US"), ("zh", "zh-CN")):
        MemorySettings.for_user(alice).resume()
        context = browser.new_context(base_url=live_server.url, locale=locale)
        context.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
        )
        page = context.new_page()
        for width, height in ((1280, 900), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            for name, url in pages.items():
                if name == "paused":
                    MemorySettings.for_user(alice).pause(None)
                page.goto(url)
                if name == "tokens":
                    page.locator("details.privacy-menu summary").click()
                page.screenshot(path=str(SHOTS / f"{name}-{language}-{width}.png"), full_page=True)
                scroll_width = page.evaluate("document.documentElement.scrollWidth")
                assert scroll_width <= width, f"{url} in {language} at {width} px: {scroll_width}"
                if name == "paused":
                    MemorySettings.for_user(alice).resume()
        if language == "zh":
            page.goto("/settings/access")
            expect(page.locator("h1")).to_have_text("谁读取了什么")
            expect(page.locator(".access-app").first).to_have_text("Laptop chat app")
        else:
            page.goto(f"/settings/memories/{memory.pk}/history")
            expect(page.locator("#memory-usage")).to_contain_text("Used by Laptop chat app, 1 time")
        context.close()
