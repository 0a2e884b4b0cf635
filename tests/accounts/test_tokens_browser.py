"""The API tokens page in a real browser (issue 44): it fits a phone, in both languages."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import ApiToken, TokenLimit
from tests.conftest import ARTIFACTS, browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDER = """[...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right
  > document.documentElement.clientWidth + 0.5).map(e => e.tagName + '.' + e.className).slice(0, 8)"""


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_tokens_page_fits_a_phone(
    page: Any, live_server: Any, alice: Any, project: Any, language: str
) -> None:
    # A project's long name is an option of the "Memories it sees" menu.
    project.name = "Northern line track survey and signalling renewal, phase two"
    project.save()
    ApiToken.issue(user=alice, name="Claude Desktop on the work laptop")
    ApiToken.issue(user=alice, name="claude-desktop-on-the-work-laptop-2026")
    ApiToken.issue(
        user=alice,
        name="Cursor",
        scopes=["read"],
        limit=TokenLimit.PROJECT,
        limit_project=project,
        expires_at=timezone.now() + timedelta(days=30),
    )
    browser_login(page, live_server, alice)
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": live_server.url}]
    )
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/settings/tokens/")
    # A refused form (no name) fits too.
    page.locator("form.token-create button[type=submit]").click()
    page.wait_for_selector("form.token-create .error")
    assert page.evaluate(WIDER) == []
    # Just made: its secret shown once, the connect snippets open with it filled in.
    page.fill("#id_name", "Open WebUI")
    page.locator("form.token-create button[type=submit]").click()
    page.wait_for_selector("#new-token")
    suffix = "zh" if language == "zh-hans" else "en"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"tokens-390-{suffix}.png"), full_page=True)
    assert page.evaluate(WIDER) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(ARTIFACTS / f"tokens-1280-{suffix}.png"), full_page=True)
