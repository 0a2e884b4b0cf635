"""In a real browser: dark mode, phones (390 px), the nav's menus, the auth pages, leaving a
team, the review queue's heading, the admin's memory list."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from accounts.models import MemorySettings
from conversations.extraction.runs import execute_run, extraction_request
from memories import services
from memories.models import Memory, Status
from teams.models import Membership, Project
from tests.conftest import browser_login, save_screenshot
from tests.extraction_helpers import conversation_with

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def pending_memories(owner: Any) -> list[Memory]:
    MemorySettings.objects.filter(user=owner).update(review_extracted=True)
    conversation = conversation_with(
        owner, ("user", "I prefer Vue over React. We use pytest for tests.")
    )
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    return list(Memory.objects.filter(conversation=conversation, status=Status.PENDING))


def edited_memory(owner: Any, project: Project | None = None) -> Memory:
    memory = services.memory_create(
        owner=owner,
        content="Deploys go out on Tuesdays after the integration suite passes in Rotterdam.",
        project=project,
    )
    return services.memory_update(
        memory=memory,
        changes={
            "content": "Deployments happen on Thursdays once the acceptance environment "
            "confirms every migration in Amsterdam and Rotterdam."
        },
        expected_revision=memory.revision,
        actor=owner,
    )


def main_pages(project: Project) -> list[str]:
    team = project.team
    return [
        "/settings/memories",
        "/settings/memories/files",
        "/settings/tokens/",
        "/teams/",
        f"/teams/{team.slug}/",
        f"/projects/{project.slug}/",
        f"/projects/{project.slug}/activity",
        "/review/",
        "/api/v1/docs",
    ]


VISITOR_PAGES = ["/", "/accounts/login/", "/accounts/signup/"]


def fits(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def colours(page: Any) -> tuple[str, str]:
    return tuple(
        page.evaluate(
            "(() => { const s = getComputedStyle(document.body);"
            " const r = getComputedStyle(document.documentElement);"
            " return [r.backgroundColor + '|' + s.backgroundColor, s.color]; })()"
        )
    )


# Dark mode ------------------------------------------------------------------


def test_dark_and_light_themes_from_the_header_switch(
    page: Any, live_server: Any, alice: Any, project: Project
) -> None:
    edited_memory(alice)
    browser_login(page, live_server, alice)
    page.goto("/settings/memories")
    assert page.evaluate("document.documentElement.dataset.theme") == "system"
    page.click("button[data-theme-choice][value=light]")
    light = colours(page)
    save_screenshot(page, "theme-light")

    page.click("button[data-theme-choice][value=dark]")
    dark = colours(page)
    save_screenshot(page, "theme-dark")
    assert light[0] != dark[0] and light[1] != dark[1]
    assert page.evaluate("localStorage.getItem('theme')") == "dark"
    assert page.locator("button[data-theme-choice][value=dark]").get_attribute("aria-pressed") == (
        "true"
    )

    # The cookie lets the server paint the next page dark at once: no light flash.
    response = page.goto("/teams/")
    assert 'data-theme="dark"' in response.text()
    assert colours(page) == dark


def test_the_system_setting_is_followed_until_a_theme_is_chosen(
    browser: Any, live_server: Any
) -> None:
    seen = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(base_url=live_server.url, color_scheme=scheme)
        page = context.new_page()
        page.goto("/accounts/login/")
        seen[scheme] = colours(page)
        save_screenshot(page, f"login-system-{scheme}")
        context.close()
    assert seen["light"][0] != seen["dark"][0] and seen["light"][1] != seen["dark"][1]


def test_the_theme_switch_works_without_javascript(browser: Any, live_server: Any) -> None:
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.click("button[data-theme-choice][value=dark]")
    page.wait_for_url(f"{live_server.url}/accounts/login/")
    assert page.locator("html").get_attribute("data-theme") == "dark"
    context.close()


# Phones ----------------------------------------------------------------------


def test_no_page_scrolls_sideways_on_a_phone(
    browser: Any, live_server: Any, alice: Any, project: Project
) -> None:
    edited_memory(alice)
    edited_memory(alice, project)
    pending_memories(alice)
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    too_wide = []
    for url in VISITOR_PAGES:
        page.goto(url)
        if not fits(page):
            too_wide.append(url)
    browser_login(page, live_server, alice)
    for url in main_pages(project):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        if not fits(page):
            too_wide.append(url)
        save_screenshot(page, "phone" + url.replace("/", "-").rstrip("-"))
    context.close()
    assert too_wide == []


def test_the_nav_collapses_behind_a_menu_button_on_a_phone(
    browser: Any, live_server: Any, alice: Any
) -> None:
    for javascript in (True, False):
        context = browser.new_context(
            base_url=live_server.url, viewport=PHONE, java_script_enabled=javascript
        )
        page = context.new_page()
        browser_login(page, live_server, alice)
        page.goto("/teams/")
        tokens = page.locator("nav >> text=API tokens")
        assert not tokens.is_visible()
        page.click("label[for=nav-toggle]")
        assert tokens.is_visible()
        assert page.locator("#nav-language").is_visible()
        if javascript:
            save_screenshot(page, "phone-menu-open")
        tokens.click()
        page.wait_for_url(f"{live_server.url}/settings/tokens/")
        context.close()


def test_the_history_table_never_breaks_a_word(browser: Any, live_server: Any, alice: Any) -> None:
    memory = edited_memory(alice)
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    browser_login(page, live_server, alice)
    page.goto(f"/settings/memories/{memory.pk}/history")
    page.wait_for_selector("table.changes")
    broken = page.evaluate(
        """() => {
        const broken = [];
        document.querySelectorAll('table.changes th, table.changes td').forEach(cell => {
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          let node;
          while ((node = walker.nextNode())) {
            for (const match of node.data.matchAll(/\\S+/g)) {
              const range = document.createRange();
              range.setStart(node, match.index);
              range.setEnd(node, match.index + match[0].length);
              const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
              if (tops.size > 1) broken.push(match[0]);
            }
          }
        });
        return broken;
      }"""
    )
    save_screenshot(page, "phone-history")
    context.close()
    assert broken == []


def test_team_members_become_cards_on_a_phone(
    browser: Any, live_server: Any, alice: Any, project: Project
) -> None:
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    browser_login(page, live_server, alice)
    page.goto(f"/teams/{project.team.slug}/")
    row = page.locator("tr[data-member='bob@example.com']")
    assert row.locator("text=Remove").is_visible()
    assert page.locator("table.members thead").is_hidden()
    assert fits(page)
    context.close()


def test_the_api_docs_fit_a_phone(page: Any, live_server: Any, alice: Any) -> None:
    page.set_viewport_size(PHONE)
    browser_login(page, live_server, alice)
    page.goto("/api/v1/docs")
    assert page.locator("meta[name=viewport]").count() == 1
    page.wait_for_load_state("networkidle")
    save_screenshot(page, "phone-api-docs")
    assert fits(page)


# Languages -------------------------------------------------------------------


def test_the_language_menu_switches_and_is_remembered(
    page: Any, live_server: Any, alice: Any
) -> None:
    browser_login(page, live_server, alice)
    page.goto("/teams/")
    page.select_option("#nav-language", "zh-hans")
    page.wait_for_selector("html[lang=zh-hans]")
    assert "团队" in page.inner_text("h1")
    save_screenshot(page, "teams-zh")
    assert MemorySettings.objects.get(user=alice).language == "zh-hans"


# Auth pages ------------------------------------------------------------------


def test_the_auth_pages_look_like_the_app(page: Any, live_server: Any, alice: Any) -> None:
    page.goto("/accounts/signup/")
    assert page.locator("link[rel=icon]").get_attribute("href").endswith("favicon.svg")
    assert page.locator("header.topbar").is_visible()
    page.fill("input[name=email]", "alice@example.com")
    page.fill("input[name=password1]", "short")
    page.fill("input[name=password2]", "other")
    page.click("form.auth-form button[type=submit]")
    error = page.locator(".field.has-error .errorlist").first
    assert error.is_visible()
    labels = page.locator(".auth-form .field > label")
    lefts = {round(box["x"]) for box in (labels.nth(i).bounding_box() for i in range(3))}
    assert len(lefts) == 1  # the labels line up
    save_screenshot(page, "signup-errors")
    page.goto("/accounts/password/reset/")
    save_screenshot(page, "password-reset")


# Teams, review, admin ----------------------------------------------------------


def test_leaving_a_team_asks_first(page: Any, live_server: Any, bob: Any, project: Project) -> None:
    team = project.team
    browser_login(page, live_server, bob)
    page.goto(f"/teams/{team.slug}/")
    page.click("text=Leave this team")
    page.wait_for_url(f"{live_server.url}/teams/{team.slug}/leave")
    assert Membership.objects.filter(team=team, user=bob).exists()
    save_screenshot(page, "team-leave-confirm")
    page.click("text=Cancel")
    page.wait_for_url(f"{live_server.url}/teams/{team.slug}/")
    page.click("text=Leave this team")
    page.click("button:has-text('Leave the team')")
    page.wait_for_url(f"{live_server.url}/teams/")
    assert not Membership.objects.filter(team=team, user=bob).exists()


def test_the_review_heading_counts_down_as_memories_are_reviewed(
    page: Any, live_server: Any, alice: Any
) -> None:
    first, second = pending_memories(alice)
    browser_login(page, live_server, alice)
    page.goto("/review/")
    summary = page.locator("#review-summary")
    assert "2 memories await review." in summary.inner_text()
    assert "just now" in page.inner_text(f"#review-{first.pk}")
    page.locator(f"#review-{first.pk} [data-shortcut=a]").click()
    page.wait_for_selector("#review-summary >> text=1 memory awaits review.")
    page.locator(f"#review-{second.pk} [data-shortcut=r]").click()
    page.wait_for_selector("#review-summary >> text=Nothing to review.")
    assert "await" not in summary.inner_text()


def test_no_keyboard_hints_on_a_touch_screen(browser: Any, live_server: Any, alice: Any) -> None:
    pending_memories(alice)
    context = browser.new_context(
        base_url=live_server.url, viewport=PHONE, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    browser_login(page, live_server, alice)
    page.goto("/review/")
    assert page.evaluate("matchMedia('(hover: none)').matches")
    assert page.locator("#review-shortcuts").is_hidden()
    context.close()


def test_the_admin_memory_list_fits_a_laptop(page: Any, live_server: Any, alice: Any) -> None:
    get_user_model().objects.filter(pk=alice.pk).update(is_staff=True, is_superuser=True)
    for _index in range(3):
        edited_memory(alice)
    page.set_viewport_size(DESKTOP)
    browser_login(page, live_server, alice)
    page.goto("/admin/memoryapp/memory/")
    overflow = page.evaluate(
        "(() => { const t = document.querySelector('#result_list');"
        " const box = t.closest('.results') || t.parentElement;"
        " return t.scrollWidth - box.clientWidth; })()"
    )
    save_screenshot(page, "admin-memories")
    assert overflow <= 0
