"""Teams and projects pages: every role against every page and action, and the team rules."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from teams.models import Invitation, Membership, Project, Role, Team
from tests.conftest import client_for, make_user


def membership_of(user: Any, team: Team) -> Membership:
    return Membership.objects.get(user=user, team=team)


# Who may do what: the expected status for owner, admin, member, viewer, stranger.
READ = (200, 200, 200, 200, 404)
MANAGE = (302, 302, 403, 403, 404)
ROLES = ("owner", "admin", "member", "viewer", "stranger")


def team_actions(
    team: Team, project: Project, vera_membership: Membership
) -> list[tuple[str, str, str, dict, tuple]]:
    slug = team.slug
    return [
        ("team page", "get", reverse("team-detail", args=[slug]), {}, READ),
        (
            "invite",
            "post",
            reverse("team-invite", args=[slug]),
            {"email": "new@example.com", "role": "member"},
            MANAGE,
        ),
        (
            "change role",
            "post",
            reverse("team-member-role", args=[slug, vera_membership.pk]),
            {"role": "member"},
            MANAGE,
        ),
        (
            "remove member",
            "post",
            reverse("team-member-remove", args=[slug, vera_membership.pk]),
            {},
            MANAGE,
        ),
        (
            "create project",
            "post",
            reverse("project-create", args=[slug]),
            {"name": "Bridges"},
            MANAGE,
        ),
        ("project page", "get", reverse("project-detail", args=[project.slug]), {}, READ),
        (
            "rename project",
            "post",
            reverse("project-rename", args=[project.slug]),
            {"name": "Tracks"},
            MANAGE,
        ),
        (
            "archive project",
            "post",
            reverse("project-archive", args=[project.slug]),
            {"archived": "1"},
            MANAGE,
        ),
    ]


@pytest.mark.parametrize("role_index", range(5), ids=ROLES)
def test_every_role_against_every_team_and_project_page(
    role_index: int, people: dict[str, Any], team: Team, project: Project
) -> None:
    client = client_for(people[ROLES[role_index]])
    vera_membership = membership_of(people["viewer"], team)
    for name, method, url, data, expected in team_actions(team, project, vera_membership):
        response = getattr(client, method)(url, data)
        assert response.status_code == expected[role_index], f"{name} as {ROLES[role_index]}"
        # Restore what a successful action changed, so the next action starts from the fixture.
        Membership.objects.get_or_create(
            team=team, user=people["viewer"], defaults={"role": Role.VIEWER}
        )
        Membership.objects.filter(pk=vera_membership.pk).update(role=Role.VIEWER)
        vera_membership = membership_of(people["viewer"], team)


@pytest.mark.parametrize("role", ROLES)
def test_leaving(role: str, people: dict[str, Any], team: Team) -> None:
    Membership.objects.create(
        team=team, user=make_user("second-owner@example.com"), role=Role.OWNER
    )
    response = client_for(people[role]).post(reverse("team-leave", args=[team.slug]))
    if role == "stranger":
        assert response.status_code == 404
    else:
        assert response.status_code == 302
        assert response["Location"] == reverse("team-list")
        assert not Membership.objects.filter(team=team, user=people[role]).exists()


def test_pages_need_a_login_and_actions_a_post(alice: Any, team: Team) -> None:
    response = client_for(alice).get(reverse("team-invite", args=[team.slug]))
    assert response.status_code == 405
    response = Client().get(reverse("team-detail", args=[team.slug]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_team_list_and_creating_a_team(alice: Any, team: Team, charlie: Any) -> None:
    client = client_for(charlie)
    page = client.get(reverse("team-list")).content.decode()
    assert "not in a team yet" in page
    assert team.name not in page

    response = client.post(reverse("team-create"), {"name": "Signals"})
    created = Team.objects.get(name="Signals")
    assert response["Location"] == reverse("team-detail", args=[created.slug])
    assert membership_of(charlie, created).role == Role.OWNER
    assert "Signals" in client.get(reverse("team-list")).content.decode()

    response = client.post(reverse("team-create"), {"name": ""})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()


def test_team_page_shows_members_with_roles_and_manage_controls_only_to_managers(
    people: dict[str, Any], team: Team, project: Project
) -> None:
    owner_page = (
        client_for(people["owner"]).get(reverse("team-detail", args=[team.slug])).content.decode()
    )
    for email in ("alice@example.com", "adam@example.com", "bob@example.com", "vera@example.com"):
        assert email in owner_page
    assert project.name in owner_page
    assert "Send invitation" in owner_page and "Change role" in owner_page

    member_page = (
        client_for(people["member"]).get(reverse("team-detail", args=[team.slug])).content.decode()
    )
    assert "vera@example.com" in member_page and "Viewer" in member_page
    assert "Send invitation" not in member_page and "Change role" not in member_page


def test_the_last_owner_cannot_leave_or_be_demoted(alice: Any, team: Team) -> None:
    client = client_for(alice)
    response = client.post(reverse("team-leave", args=[team.slug]), follow=True)
    assert "You are the last owner" in response.content.decode()
    response = client.post(
        reverse("team-member-role", args=[team.slug, membership_of(alice, team).pk]),
        {"role": "admin"},
        follow=True,
    )
    assert "A team needs an owner" in response.content.decode()
    assert membership_of(alice, team).role == Role.OWNER

    # With a second owner, either may step down.
    second = make_user("olga@example.com")
    Membership.objects.create(team=team, user=second, role=Role.OWNER)
    client.post(
        reverse("team-member-role", args=[team.slug, membership_of(alice, team).pk]),
        {"role": "admin"},
    )
    assert membership_of(alice, team).role == Role.ADMIN
    response = client_for(second).post(reverse("team-leave", args=[team.slug]), follow=True)
    assert "You are the last owner" in response.content.decode()


def test_admins_cannot_touch_owners_or_make_owners(
    adam: Any, alice: Any, bob: Any, team: Team
) -> None:
    client = client_for(adam)
    alice_membership = membership_of(alice, team)
    response = client.post(
        reverse("team-member-role", args=[team.slug, alice_membership.pk]),
        {"role": "member"},
        follow=True,
    )
    assert "Only an owner can give or take away the owner role." in response.content.decode()
    client.post(reverse("team-member-remove", args=[team.slug, alice_membership.pk]))
    client.post(
        reverse("team-member-role", args=[team.slug, membership_of(bob, team).pk]),
        {"role": "owner"},
    )
    assert membership_of(alice, team).role == Role.OWNER
    assert membership_of(bob, team).role == Role.MEMBER


def test_changing_a_role_and_removing_a_member_with_htmx(
    alice: Any, bob: Any, vera: Any, team: Team
) -> None:
    client = client_for(alice)
    response = client.post(
        reverse("team-member-role", args=[team.slug, membership_of(vera, team).pk]),
        {"role": "admin"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="team-people"'), "the section alone, for htmx"
    assert "vera@example.com is now admin." in html
    assert membership_of(vera, team).role == Role.ADMIN

    response = client.post(
        reverse("team-member-remove", args=[team.slug, membership_of(bob, team).pk]),
        headers={"HX-Request": "true"},
    )
    assert "bob@example.com was removed from the team." in response.content.decode()
    assert not Membership.objects.filter(team=team, user=bob).exists()


def test_a_member_of_another_team_cannot_reach_this_teams_members(
    alice: Any, team: Team, charlie: Any
) -> None:
    other = Team.objects.create(name="Other")
    Membership.objects.create(team=other, user=charlie, role=Role.OWNER)
    response = client_for(charlie).post(
        reverse("team-member-remove", args=[other.slug, membership_of(alice, team).pk])
    )
    assert response.status_code == 404
    assert Membership.objects.filter(team=team, user=alice).exists()


def test_projects_are_created_renamed_and_archived(
    alice: Any, team: Team, project: Project
) -> None:
    client = client_for(alice)
    client.post(reverse("project-create", args=[team.slug]), {"name": "Bridges"})
    assert Project.objects.filter(team=team, name="Bridges").exists()

    client.post(reverse("project-rename", args=[project.slug]), {"name": "Track Survey 2025"})
    project.refresh_from_db()
    assert project.name == "Track Survey 2025"
    assert (
        client.post(reverse("project-rename", args=[project.slug]), {"name": ""}).status_code == 400
    )

    client.post(reverse("project-archive", args=[project.slug]), {"archived": "1"})
    project.refresh_from_db()
    assert project.is_archived
    team_page = client.get(reverse("team-detail", args=[team.slug])).content.decode()
    assert "1 archived project" in team_page
    assert (
        "is archived" in client.get(reverse("project-detail", args=[project.slug])).content.decode()
    )

    client.post(reverse("project-archive", args=[project.slug]), {"archived": "0"})
    project.refresh_from_db()
    assert not project.is_archived


def test_withdrawing_an_invitation(alice: Any, team: Team) -> None:
    invitation = Invitation.objects.create(team=team, email="x@example.com", invited_by=alice)
    client_for(alice).post(reverse("team-invitation-revoke", args=[team.slug, invitation.pk]))
    assert not Invitation.objects.filter(pk=invitation.pk).exists()


def test_leaving_asks_for_confirmation_first(bob: Any, team: Team) -> None:
    client = client_for(bob)
    page = client.get(reverse("team-detail", args=[team.slug])).content.decode()
    assert f'href="{reverse("team-leave", args=[team.slug])}"' in page
    confirm = client.get(reverse("team-leave", args=[team.slug]))
    assert confirm.status_code == 200
    assert "Leave “Rail Team”?" in confirm.content.decode()
    assert Membership.objects.filter(team=team, user=bob).exists()
    client.post(reverse("team-leave", args=[team.slug]))
    assert not Membership.objects.filter(team=team, user=bob).exists()
