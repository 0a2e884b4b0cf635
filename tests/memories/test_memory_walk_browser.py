"""/settings/memories in a real browser, as a new user meets it under `make run` (issue 44)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from memories.models import Memory
from memories.services import memory_create
from tests.conftest import browser_login

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
