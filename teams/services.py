"""Team workflows: creating teams and projects, invitations, roles and leaving.

Access checks (who may call these) happen in the views through ``teams.access``;
the services keep the team consistent whoever calls them: a team always keeps
at least one owner, and only an owner hands out or takes away the owner role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from teams.models import Invitation, Membership, Project, Role, Team

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class TeamRuleError(Exception):
    """A team action refused because it would break a rule; the message says which."""


@transaction.atomic
def team_create(*, name: str, owner: User) -> Team:
    team = Team.objects.create(name=name.strip())
    Membership.objects.create(team=team, user=owner, role=Role.OWNER)
    return team


def project_create(*, team: Team, name: str) -> Project:
    return Project.objects.create(team=team, name=name.strip())


def _owners_locked(team: Team) -> list[Membership]:
    # Locking the owners serialises two owners demoting or removing each other at once.
    return list(Membership.objects.select_for_update().filter(team=team, role=Role.OWNER))


def _check_owner_rules(*, acting: Membership, target: Membership, new_role: str | None) -> None:
    """Refuse what would leave the team without an owner, or let a non-owner touch owners.

    ``new_role`` is None when the target leaves the team.
    """
    touches_owner = target.role == Role.OWNER or new_role == Role.OWNER
    if touches_owner and acting.role != Role.OWNER:
        raise TeamRuleError(_("Only an owner can give or take away the owner role."))
    if target.role == Role.OWNER and new_role != Role.OWNER:
        owners = _owners_locked(target.team)
        if len(owners) <= 1:
            if new_role is None and acting.pk == target.pk:
                raise TeamRuleError(
                    _("You are the last owner: make someone else an owner before you leave.")
                )
            raise TeamRuleError(_("A team needs an owner: make someone else an owner first."))


@transaction.atomic
def membership_change_role(*, acting: Membership, target: Membership, role: str) -> Membership:
    if role not in Role.values:
        raise TeamRuleError(_("Unknown role."))
    target = Membership.objects.select_for_update().get(pk=target.pk)
    if target.role == role:
        return target
    _check_owner_rules(acting=acting, target=target, new_role=role)
    target.role = role
    target.save(update_fields=["role"])
    return target


@transaction.atomic
def membership_remove(*, acting: Membership, target: Membership) -> None:
    """Remove a member, or leave the team when ``acting`` is ``target``."""
    target = Membership.objects.select_for_update().get(pk=target.pk)
    _check_owner_rules(acting=acting, target=target, new_role=None)
    target.delete()


@transaction.atomic
def invitation_send(
    *, team: Team, email: str, role: str, invited_by: User, base_url: str
) -> Invitation:
    """Invite ``email`` (a fresh link each time; earlier open invitations to it are replaced).

    The email goes out after the transaction commits, so a rolled-back
    invitation is never announced. ``base_url`` is the site's address as the
    inviter reached it, for the link in the email.
    """
    email = email.strip().lower()
    if Membership.objects.filter(team=team, user__email__iexact=email).exists():
        raise TeamRuleError(_("%(email)s is already a member of this team.") % {"email": email})
    Invitation.objects.filter(team=team, email__iexact=email, accepted_at__isnull=True).delete()
    invitation = Invitation.objects.create(team=team, email=email, role=role, invited_by=invited_by)
    link = base_url.rstrip("/") + reverse("team-invitation", args=[invitation.token])
    context = {"invitation": invitation, "link": link, "inviter": invited_by}
    subject = _("Join %(team)s on memoryapp") % {"team": team.name}
    body = render_to_string("teams/email/invitation.txt", context)
    transaction.on_commit(
        lambda: send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [invitation.email])
    )
    return invitation


def invitation_matches(invitation: Invitation, user: User) -> bool:
    """Whether ``user`` signed in with the address the invitation was sent to (verified or not)."""
    from allauth.account.models import EmailAddress

    user_email = getattr(user, "email", "") or ""
    if user_email.lower() == invitation.email.lower():
        return True
    return EmailAddress.objects.filter(user_id=user.pk, email__iexact=invitation.email).exists()


def invitation_verified(invitation: Invitation, user: User) -> bool:
    """Whether ``user`` confirmed owning the invited address.

    Anyone may sign up with any address (ACCOUNT_EMAIL_VERIFICATION=optional), so
    only a confirmed address proves the invitation reached this person.
    """
    from allauth.account.models import EmailAddress

    return EmailAddress.objects.filter(
        user_id=user.pk, email__iexact=invitation.email, verified=True
    ).exists()


def invitation_send_confirmation(request: HttpRequest, invitation: Invitation, user: User) -> None:
    """Email ``user`` a link confirming the invited address (at most one per few minutes).

    Confirming it leads back to the invitation (teams.adapter.AccountAdapter).
    """
    from allauth.account.internal.flows.email_verification import (
        send_verification_email_to_address,
    )
    from allauth.account.models import EmailAddress

    address, _created = EmailAddress.objects.get_or_create(
        user=user, email=invitation.email.lower()
    )
    if not address.verified:
        send_verification_email_to_address(request, address)


class InvitationUnconfirmed(TeamRuleError):
    """The invited address is the user's but not confirmed yet."""


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Membership:
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.accepted_at is not None:
        raise TeamRuleError(_("This invitation has already been used."))
    if invitation.is_expired:
        raise TeamRuleError(_("This invitation has expired: ask for a new one."))
    if not invitation_matches(invitation, user):
        raise TeamRuleError(
            _(
                "This invitation was sent to %(email)s. Sign in with that address, "
                "or ask for an invitation to yours."
            )
            % {"email": invitation.email}
        )
    if not invitation_verified(invitation, user):
        raise InvitationUnconfirmed(
            _("Confirm your email address to join: we send a link to %(email)s.")
            % {"email": invitation.email}
        )
    membership, _created = Membership.objects.get_or_create(
        team=invitation.team, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return membership


# When a person erases their account ----------------------------------------------------

# Who takes over a team its only owner leaves: an admin first, then a member, then a viewer,
# the longest-standing first.
_SUCCESSION = (Role.ADMIN, Role.MEMBER, Role.VIEWER)


def succession_plan(user: User) -> list[tuple[Team, Membership | None]]:
    """The teams ``user`` alone owns, each with who would become its owner if they left
    (None: nobody else is in it, so it would be deleted with its projects)."""
    plan = []
    owned = Team.objects.filter(memberships__user=user, memberships__role=Role.OWNER)
    for team in owned.order_by("name", "pk"):
        others = team.memberships.exclude(user=user).select_related("user")
        if others.filter(role=Role.OWNER).exists():
            continue
        successor = min(
            others,
            key=lambda m: (_SUCCESSION.index(Role(m.role)), m.created_at, m.pk),
            default=None,
        )
        plan.append((team, successor))
    return plan


@transaction.atomic
def leave_all_teams(user: User) -> None:
    """Before ``user``'s account is erased: each team they alone own is handed to its
    successor (``succession_plan``) or, with nobody else in it, deleted; invitations
    addressed to them go. Their memberships go with the account."""
    for team, successor in succession_plan(user):
        if successor is None:
            team.delete()
        else:
            successor.role = Role.OWNER
            successor.save(update_fields=["role"])
    Invitation.objects.filter(email__iexact=user.email).delete()
    Invitation.objects.filter(accepted_by=user).delete()


def team_owner(team: Team, *, excluding: User | None = None) -> User | None:
    """The team's longest-standing owner (other than ``excluding``)."""
    owners = team.memberships.filter(role=Role.OWNER)
    if excluding is not None:
        owners = owners.exclude(user=excluding)
    membership = owners.order_by("created_at", "pk").select_related("user").first()
    return membership.user if membership else None
