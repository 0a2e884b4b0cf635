"""/api/v1/docs inside the site: its header, and the dark theme (issue 44 item 16)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import browser_login, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_api_docs_have_the_site_header_and_follow_the_theme(
    page: Any, live_server: Any, alice: Any, theme: str
) -> None:
    browser_login(page, live_server, alice)
    page.context.add_cookies([{"name": "theme", "value": theme, "url": live_server.url}])
    page.goto("/api/v1/docs")
    page.wait_for_selector("#swagger-ui .opblock")
    assert page.locator("header.topbar .brand").is_visible()
    inverted = page.evaluate("getComputedStyle(document.getElementById('swagger-ui')).filter")
    assert ("invert" in inverted) == (theme == "dark")
    save_screenshot(page, f"api-docs-{theme}")
