"""A project's shared memories in a real browser: a member curates them, a viewer only reads."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from memories.models import Memory, Scope
from memories.services import memory_create
from teams.models import Project
from tests.conftest import browser_login, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def shared(project: Project, owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(
        owner=owner, content=content, scope=Scope.PROJECT, project=project, actor=owner, **fields
    )


def rows(page: Any) -> Any:
    return page.locator(".memory-list .memory-row")


def test_a_member_curates_the_projects_memories(
    page: Any, live_server: Any, alice: Any, bob: Any, project: Project
) -> None:
    shared(project, alice, "The survey uses WGS84", kind="decision", tags=["datum"])
    shared(project, alice, "Field work happens on Mondays", kind="fact")
    shared(project, alice, "调查报告每周五提交", kind="goal")
    memory_create(owner=bob, content="Bob's personal note", actor=bob)
    browser_login(page, live_server, bob)
    page.goto(reverse("project-memories", args=[project.slug]))
    expect(page.locator("h1")).to_have_text("Memories of Track Survey")
    expect(rows(page)).to_have_count(3)

    # Search as you type, English and Chinese.
    page.fill("#memory-search", "mond")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first.locator("mark")).to_have_text("Mondays")
    page.fill("#memory-search", "报告")
    expect(rows(page)).to_have_count(1)
    page.fill("#memory-search", "")
    expect(rows(page)).to_have_count(3)

    # Add: it goes into the project, without asking where.
    page.click("text=Add a memory")
    expect(page.locator("#add-where")).to_be_hidden()
    page.fill("#add-content", "Use EPSG:4490 for new maps")
    page.click("text=Remember this")
    expect(rows(page)).to_have_count(4)
    expect(page.locator("#toasts")).to_contain_text("Memory added.")
    added = Memory.objects.get(content="Use EPSG:4490 for new maps")
    assert (added.project, added.owner) == (project, bob)

    # Edit in place.
    wgs = Memory.objects.get(content="The survey uses WGS84")
    row = page.locator(f"#memory-{wgs.pk}")
    row.locator(".memory-actions-menu > summary").click()
    row.get_by_role("link", name="Edit").click()
    row.get_by_label("Memory", exact=True).fill("The survey uses CGCS2000")
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".memory-content")).to_have_text("The survey uses CGCS2000")

    # Delete, then undo from the toast: it comes back in place.
    save_screenshot(page, "project-memories")
    row.locator(".memory-actions-menu > summary").click()
    row.get_by_role("button", name="Delete").click()
    expect(rows(page)).to_have_count(3)
    page.locator("#toasts").get_by_role("button", name="Undo").click()
    expect(rows(page)).to_have_count(4)
    expect(page.locator(f"#memory-{wgs.pk}")).to_contain_text("CGCS2000")
    assert Memory.objects.get(pk=wgs.pk).deleted_at is None

    # The activity feed says who did it, and links back to the memory.
    page.click("text=Activity")
    feed = page.locator(".activity")
    expect(feed).to_contain_text("bob")
    expect(feed.locator(".activity-item").first).to_contain_text("CGCS2000")
    feed.locator(".activity-item").first.locator("summary").click()
    expect(feed.locator(".activity-item").first.locator(".changes")).to_be_visible()
    save_screenshot(page, "project-activity")
    feed.locator(".activity-item").first.locator(".activity-memory").click()
    expect(rows(page)).to_have_count(1)
    expect(page.locator(".one-memory")).to_contain_text("Showing one memory.")


def test_a_viewer_sees_no_write_controls(
    page: Any, live_server: Any, alice: Any, vera: Any, project: Project
) -> None:
    memory = shared(project, alice, "The survey uses WGS84")
    browser_login(page, live_server, vera)
    page.goto(reverse("project-memories", args=[project.slug]))
    expect(rows(page)).to_have_count(1)
    expect(page.get_by_text("As a viewer you can read these memories")).to_be_visible()
    for name in ("Add a memory", "Clear all…", "Import…"):
        expect(page.get_by_text(name, exact=True)).to_have_count(0)
    row = page.locator(f"#memory-{memory.pk}")
    expect(row.get_by_role("button")).to_have_count(0)
    expect(row.get_by_role("link", name="Edit")).to_have_count(0)
    expect(row.locator("input[type=checkbox]")).to_have_count(0)
    row.locator(".memory-actions-menu > summary").click()
    row.get_by_role("link", name="History").click()
    expect(row.locator(".history")).to_contain_text("Created")
    page.click(".page-menu > summary")
    expect(page.get_by_role("link", name="Export as Markdown")).to_be_visible()
