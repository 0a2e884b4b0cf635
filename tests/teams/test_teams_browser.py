"""In a real browser: managing a team (invite, change a role) and importing memory files with a preview."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from memories import services
from memories.models import Memory
from teams.models import Invitation, Membership, Role, Team
from tests.conftest import browser_login, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_invites_someone_and_changes_a_role(
    page: Any, live_server: Any, alice: Any, bob: Any, team: Team
) -> None:
    browser_login(page, live_server, alice)
    page.goto("/teams/")
    page.click(f"text={team.name}")
    page.fill("input[name=email]", "newcomer@example.com")
    page.select_option("form[action$='/invite'] select[name=role]", "viewer")
    page.click("text=Send invitation")
    page.wait_for_selector("text=Invitation sent to newcomer@example.com.")
    assert page.locator("table.invitations").inner_text().count("newcomer@example.com") == 1
    invitation = Invitation.objects.get()
    assert (invitation.email, invitation.role) == ("newcomer@example.com", Role.VIEWER)
    assert mail.outbox[-1].to == ["newcomer@example.com"]

    row = page.locator("tr[data-member='bob@example.com']")
    row.locator("select").select_option("admin")
    row.locator("text=Change role").click()
    page.wait_for_selector("text=bob@example.com is now admin.")
    assert Membership.objects.get(team=team, user=bob).role == Role.ADMIN

    own_row = page.locator("tr[data-member='alice@example.com']")
    own_row.locator("select").select_option("member")
    own_row.locator("text=Change role").click()
    page.wait_for_selector("text=A team needs an owner")
    assert Membership.objects.get(team=team, user=alice).role == Role.OWNER
    save_screenshot(page, "team-manage")


def test_importing_files_with_a_preview_then_undoing(
    page: Any, live_server: Any, alice: Any
) -> None:
    memory = services.memory_create(owner=alice, content="Works at Acme.")
    browser_login(page, live_server, alice)
    page.goto("/settings/memories/files")
    page.set_input_files(
        "input[name=files]",
        files=[
            {
                "name": "facts.md",
                "mimeType": "text/markdown",
                "buffer": (
                    f"- Works at Initech. <!-- id:{memory.pk} -->\n- Has two cats.\n- works at   acme.\n"
                ).encode(),
            }
        ],
    )
    page.click("text=Preview import")
    preview = page.locator("#import-preview")
    preview.locator("text=To add: 1").wait_for()
    assert "Has two cats." in preview.locator("ul.to-add").inner_text()
    assert "Works at Initech." in preview.locator("ul.to-update").inner_text()
    assert "Skipped: 1" in preview.inner_text()
    assert Memory.objects.count() == 1, "the preview writes nothing"
    save_screenshot(page, "import-preview")

    page.click("text=Confirm import")
    page.wait_for_selector("text=Import done")
    memory.refresh_from_db()
    assert memory.content == "Works at Initech."
    assert Memory.objects.filter(content="Has two cats.").exists()

    page.click("text=Undo this import")
    page.wait_for_selector("text=Import undone")
    memory.refresh_from_db()
    assert memory.content == "Works at Acme."
    assert Memory.objects.alive().count() == 1
