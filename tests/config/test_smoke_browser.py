from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_up_log_out_and_log_in(page: Any, live_server: Any) -> None:
    page.goto("/accounts/signup/")
    page.fill("input[name=email]", "newcomer@example.com")
    page.fill("input[name=password1]", "a-long-Pass-phrase-42")
    page.fill("input[name=password2]", "a-long-Pass-phrase-42")
    page.click("form button[type=submit]")
    # Home sends a signed-in person to their memories.
    page.wait_for_url(f"{live_server.url}/settings/memories")
    assert "No memories yet" in page.content()
    assert get_user_model().objects.filter(email="newcomer@example.com").exists()

    page.click("text=Log out")
    page.wait_for_load_state()
    if page.locator("form[action='/accounts/logout/'] button").count():
        page.click("form[action='/accounts/logout/'] button")
    page.goto("/accounts/login/")
    page.fill("input[name=login]", "newcomer@example.com")
    page.fill("input[name=password]", "a-long-Pass-phrase-42")
    page.click("form button[type=submit]")
    page.wait_for_url(f"{live_server.url}/settings/memories")
    assert "No memories yet" in page.content()
    save_screenshot(page, "home-empty")
