"""Invitations: sent by email, accepted signed in, or after signing up; the wrong address is refused."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from teams.models import Invitation, Membership, Role, Team
from tests.conftest import client_for, make_user


def invite(owner: Any, team: Team, email: str, role: str, capture: Any) -> str:
    """Send an invitation through the team page; return the link from the email."""
    with capture(execute=True):
        response = client_for(owner).post(
            reverse("team-invite", args=[team.slug]), {"email": email, "role": role}
        )
    assert response.status_code == 302
    message = mail.outbox[-1]
    assert message.to == [email]
    assert f"Join {team.name}" in message.subject
    match = re.search(r"http://testserver(/invitations/\S+/)", str(message.body))
    assert match, message.body
    return match[1]


def confirmation_link(email: str) -> str:
    """The newest email-confirmation link mailed to ``email``."""
    for message in reversed(mail.outbox):
        match = re.search(r"http://testserver(/accounts/confirm-email/\S+/)", str(message.body))
        if message.to == [email] and match:
            return match[1]
    raise AssertionError(f"no confirmation link sent to {email}")


def verified_user(email: str) -> Any:
    from allauth.account.models import EmailAddress

    user = make_user(email)
    EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
    return user


def test_invited_user_accepts_while_signed_in(
    alice: Any, team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    link = invite(alice, team, "dora@example.com", "viewer", django_capture_on_commit_callbacks)
    assert (
        "dora@example.com"
        in client_for(alice).get(reverse("team-detail", args=[team.slug])).content.decode()
    )

    dora = verified_user("dora@example.com")
    client = client_for(dora)
    assert (
        f'href="{link}">Join {team.name} as viewer'
        in client.get(reverse("team-list")).content.decode()
    )
    page = client.get(link).content.decode()
    assert "Accept invitation" in page and "makes you viewer" in page
    response = client.post(link)
    assert response["Location"] == reverse("team-detail", args=[team.slug])
    assert Membership.objects.get(team=team, user=dora).role == Role.VIEWER
    assert Invitation.objects.get().accepted_by == dora

    assert "already been used" in client.get(link).content.decode()
    assert client.post(link).status_code == 400


def test_logged_out_visitor_signs_up_then_accepts(
    alice: Any, team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    link = invite(alice, team, "erin@example.com", "member", django_capture_on_commit_callbacks)
    client = Client()
    page = client.get(link).content.decode()
    signup_url = f"{reverse('account_signup')}?next={link.replace('/', '%2F')}"
    assert signup_url in page
    assert f"{reverse('account_login')}?next={link.replace('/', '%2F')}" in page

    response = client.post(
        reverse("account_signup"),
        {
            "email": "erin@example.com",
            "password1": "a-long-Pass-phrase-42",
            "password2": "a-long-Pass-phrase-42",
            "next": link,
        },
    )
    assert response.status_code == 302
    assert response["Location"] == link
    assert client.post(link).status_code == 200
    assert not Membership.objects.filter(team=team, user__email="erin@example.com").exists()
    assert client.post(confirmation_link("erin@example.com"))["Location"] == link
    client.post(link)
    assert Membership.objects.get(team=team, user__email="erin@example.com").role == Role.MEMBER


def test_logged_out_visitor_logs_in_then_accepts(
    alice: Any, team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    link = invite(alice, team, "fred@example.com", "admin", django_capture_on_commit_callbacks)
    fred = verified_user("fred@example.com")
    client = Client()
    response = client.post(
        reverse("account_login"),
        {"login": "fred@example.com", "password": "correct-horse-battery", "next": link},
    )
    assert response["Location"] == link
    client.post(link)
    assert Membership.objects.get(team=team, user=fred).role == Role.ADMIN


def test_wrong_email_is_refused_with_a_clear_message(
    alice: Any, team: Team, charlie: Any, django_capture_on_commit_callbacks: Any
) -> None:
    link = invite(alice, team, "gina@example.com", "member", django_capture_on_commit_callbacks)
    client = client_for(charlie)
    page = client.get(link).content.decode()
    assert (
        "This invitation was sent to gina@example.com, but you are signed in as charlie@example.com"
        in page
    )
    response = client.post(link)
    assert response.status_code == 400
    assert "Sign in with that address" in response.content.decode()
    assert not Membership.objects.filter(team=team, user=charlie).exists()
    assert Invitation.objects.get().accepted_at is None


def test_expired_and_unknown_invitations(alice: Any, team: Team) -> None:
    harry = make_user("harry@example.com")
    invitation = Invitation.objects.create(
        team=team,
        email="harry@example.com",
        invited_by=alice,
        created_at=timezone.now() - timedelta(days=30),
    )
    client = client_for(harry)
    link = reverse("team-invitation", args=[invitation.token])
    assert "has expired" in client.get(link).content.decode()
    assert client.post(link).status_code == 400
    assert not Membership.objects.filter(team=team, user=harry).exists()
    assert client.get(reverse("team-invitation", args=["no-such-token"])).status_code == 404


def test_inviting_a_member_again_is_refused_and_a_new_invitation_replaces_the_old(
    alice: Any, bob: Any, team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    client = client_for(alice)
    response = client.post(
        reverse("team-invite", args=[team.slug]),
        {"email": "BOB@example.com", "role": "member"},
        follow=True,
    )
    assert "bob@example.com is already a member of this team." in response.content.decode()
    first = invite(alice, team, "ivy@example.com", "member", django_capture_on_commit_callbacks)
    second = invite(alice, team, "ivy@example.com", "viewer", django_capture_on_commit_callbacks)
    assert first != second
    assert Invitation.objects.get().role == Role.VIEWER
    assert Client().get(first).status_code == 404


def test_invalid_invitation_form_shows_errors(alice: Any, team: Team) -> None:
    response = client_for(alice).post(
        reverse("team-invite", args=[team.slug]), {"email": "not-an-email", "role": "member"}
    )
    assert response.status_code == 400
    assert "Enter a valid email address." in response.content.decode()
    assert not Invitation.objects.exists()


def test_an_admin_cannot_invite_an_owner(team: Team) -> None:
    admin = make_user("ada@example.com")
    Membership.objects.create(team=team, user=admin, role=Role.ADMIN)
    response = client_for(admin).post(
        reverse("team-invite", args=[team.slug]), {"email": "x@example.com", "role": "owner"}
    )
    assert response.status_code == 400
    assert not Invitation.objects.exists()


def test_a_stranger_who_signs_up_with_the_invited_address_must_confirm_it_first(
    alice: Any, team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    """Signing up needs no verification (ACCOUNT_EMAIL_VERIFICATION=optional), so an
    unverified address proves nothing: joining waits for the emailed confirmation."""
    from allauth.account.models import EmailAddress

    link = invite(alice, team, "kim@example.com", "member", django_capture_on_commit_callbacks)
    stranger = Client()
    stranger.post(
        reverse("account_signup"),
        {
            "email": "kim@example.com",
            "password1": "a-long-Pass-phrase-42",
            "password2": "a-long-Pass-phrase-42",
        },
    )
    assert not EmailAddress.objects.get(email="kim@example.com").verified
    assert link in stranger.get(reverse("team-list")).content.decode()
    page = stranger.get(link).content.decode()
    assert "Confirm your email address to join" in page
    response = stranger.post(link)
    assert response.status_code == 200
    assert "We sent a confirmation link to kim@example.com" in response.content.decode()
    assert not Membership.objects.filter(team=team, user__email="kim@example.com").exists()
    assert Invitation.objects.get().accepted_at is None

    # Only whoever reads kim's mail can confirm; the confirmation leads back to the invitation.
    confirmed = stranger.post(confirmation_link("kim@example.com"))
    assert confirmed.status_code == 302 and confirmed["Location"] == link
    assert EmailAddress.objects.get(email="kim@example.com").verified
    response = stranger.post(link)
    assert response["Location"] == reverse("team-detail", args=[team.slug])
    assert Membership.objects.get(team=team, user__email="kim@example.com").role == Role.MEMBER
