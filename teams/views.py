"""Teams, their members, invitations and projects.

Every action is a plain form post that redirects back to the page; when htmx
sends it, the changed section is returned alone instead.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.http import AuthenticatedHttpRequest
from teams import services
from teams.access import get_membership, get_project_for_member
from teams.forms import InvitationForm, ProjectForm, RoleForm, TeamForm
from teams.models import Invitation, Membership, Project, Role
from teams.permissions import role_may_manage


def _grantable_roles(acting: Membership) -> list[tuple[str, str]]:
    """The roles ``acting`` may give: only an owner makes owners."""
    return [
        (value, str(label))
        for value, label in Role.choices
        if value != Role.OWNER or acting.role == Role.OWNER
    ]


def _people_context(membership: Membership, invite_form: InvitationForm | None = None) -> dict:
    team = membership.team
    can_manage = role_may_manage(membership.role)
    members = list(team.memberships.select_related("user").order_by("created_at", "id"))
    for member in members:
        member.editable = can_manage and (  # type: ignore[attr-defined]
            member.role != Role.OWNER or membership.role == Role.OWNER
        )
    invitations = (
        team.invitations.filter(accepted_at__isnull=True).select_related("invited_by")
        if can_manage
        else Invitation.objects.none()
    )
    return {
        "team": team,
        "membership": membership,
        "can_manage": can_manage,
        "members": members,
        "invitations": invitations,
        "roles": _grantable_roles(membership),
        "invite_form": invite_form or InvitationForm(roles=_grantable_roles(membership)),
    }


def _team_page(
    request: AuthenticatedHttpRequest,
    membership: Membership,
    *,
    invite_form: InvitationForm | None = None,
    project_form: ProjectForm | None = None,
    status: int = 200,
) -> HttpResponse:
    projects = membership.team.projects.order_by("name")
    context = {
        **_people_context(membership, invite_form),
        "projects": [p for p in projects if not p.is_archived],
        "archived_projects": [p for p in projects if p.is_archived],
        "project_form": project_form or ProjectForm(),
    }
    return render(request, "teams/team_detail.html", context, status=status)


def _people_response(
    request: AuthenticatedHttpRequest,
    membership: Membership,
    *,
    notice: str = "",
    error: str = "",
    invite_form: InvitationForm | None = None,
) -> HttpResponse:
    """After a member action: the people section for htmx, else back to the page."""
    if request.htmx:
        context = {**_people_context(membership, invite_form), "notice": notice, "error": error}
        return render(request, "teams/partials/team_people.html", context)
    if invite_form is not None and invite_form.errors:
        return _team_page(request, membership, invite_form=invite_form, status=400)
    if error:
        messages.error(request, error)
    elif notice:
        messages.success(request, notice)
    return redirect("team-detail", membership.team.slug)


# Teams ----------------------------------------------------------------------


@login_required
@require_GET
def team_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _team_list_page(request, TeamForm())


def _team_list_page(request: AuthenticatedHttpRequest, form: TeamForm) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user=request.user).select_related("team").order_by("team__name")
    )
    invitations = [
        invitation
        for invitation in Invitation.objects.filter(
            email__iexact=request.user.email,
            accepted_at__isnull=True,
        ).select_related("team")
        if not invitation.is_expired
    ]
    return render(
        request,
        "teams/team_list.html",
        {"memberships": memberships, "invitations": invitations, "form": form},
        status=400 if form.errors else 200,
    )


@login_required
@require_POST
def team_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = TeamForm(request.POST)
    if not form.is_valid():
        return _team_list_page(request, form)
    team = services.team_create(name=form.cleaned_data["name"], owner=request.user)
    messages.success(request, _("Team “%(name)s” created.") % {"name": team.name})
    return redirect("team-detail", team.slug)


@login_required
@require_GET
def team_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    return _team_page(request, get_membership(request, slug))


@login_required
@require_http_methods(["GET", "POST"])
def team_leave(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """GET asks for confirmation (the team's memories are out of reach once left); POST leaves."""
    membership = get_membership(request, slug)
    if request.method == "GET":
        return render(request, "teams/team_leave.html", {"team": membership.team})
    try:
        services.membership_remove(acting=membership, target=membership)
    except services.TeamRuleError as refusal:
        messages.error(request, str(refusal))
        return redirect("team-detail", slug)
    messages.success(request, _("You left “%(team)s”.") % {"team": membership.team.name})
    return redirect("team-list")


# Members and invitations ------------------------------------------------------


@login_required
@require_POST
def team_invite(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    membership = get_membership(request, slug, manage=True)
    form = InvitationForm(request.POST, roles=_grantable_roles(membership))
    if not form.is_valid():
        return _people_response(request, membership, invite_form=form)
    try:
        invitation = services.invitation_send(
            team=membership.team,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            invited_by=request.user,
            base_url=request.build_absolute_uri("/"),
        )
    except services.TeamRuleError as refusal:
        return _people_response(request, membership, error=str(refusal))
    notice = _("Invitation sent to %(email)s.") % {"email": invitation.email}
    return _people_response(request, membership, notice=notice)


@login_required
@require_POST
def team_invitation_revoke(
    request: AuthenticatedHttpRequest, slug: str, invitation_id: int
) -> HttpResponse:
    membership = get_membership(request, slug, manage=True)
    invitation = get_object_or_404(
        Invitation, pk=invitation_id, team=membership.team, accepted_at__isnull=True
    )
    invitation.delete()
    notice = _("Invitation to %(email)s withdrawn.") % {"email": invitation.email}
    return _people_response(request, membership, notice=notice)


def _target_member(membership: Membership, member_id: int) -> Membership:
    return get_object_or_404(
        Membership.objects.select_related("user", "team"), pk=member_id, team=membership.team
    )


@login_required
@require_POST
def team_member_role(request: AuthenticatedHttpRequest, slug: str, member_id: int) -> HttpResponse:
    membership = get_membership(request, slug, manage=True)
    target = _target_member(membership, member_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        return _people_response(request, membership, error=_("Choose a role."))
    try:
        target = services.membership_change_role(
            acting=membership, target=target, role=form.cleaned_data["role"]
        )
    except services.TeamRuleError as refusal:
        return _people_response(request, membership, error=str(refusal))
    membership.refresh_from_db()
    notice = _("%(user)s is now %(role)s.") % {
        "user": target.user.email,
        "role": target.get_role_display().lower(),
    }
    return _people_response(request, membership, notice=notice)


@login_required
@require_POST
def team_member_remove(
    request: AuthenticatedHttpRequest, slug: str, member_id: int
) -> HttpResponse:
    membership = get_membership(request, slug, manage=True)
    target = _target_member(membership, member_id)
    if target.pk == membership.pk:
        return team_leave(request, slug)
    try:
        services.membership_remove(acting=membership, target=target)
    except services.TeamRuleError as refusal:
        return _people_response(request, membership, error=str(refusal))
    notice = _("%(user)s was removed from the team.") % {"user": target.user.email}
    return _people_response(request, membership, notice=notice)


@require_http_methods(["GET", "POST"])
def team_invitation(request: HttpRequest, token: str) -> HttpResponse:
    """The link in an invitation email: sign in or up, then accept."""
    invitation = get_object_or_404(Invitation.objects.select_related("team"), token=token)
    context: dict[str, Any] = {"invitation": invitation}
    if not request.user.is_authenticated:
        next_query = urlencode({"next": request.path})
        context["login_url"] = f"{reverse('account_login')}?{next_query}"
        context["signup_url"] = f"{reverse('account_signup')}?{next_query}"
        return render(request, "teams/invitation.html", context)
    if request.method == "POST":
        try:
            membership = services.invitation_accept(invitation=invitation, user=request.user)
        except services.InvitationUnconfirmed:
            services.invitation_send_confirmation(request, invitation, request.user)
            context["confirmation_sent"] = True
            return render(request, "teams/invitation.html", context)
        except services.TeamRuleError as refusal:
            context["error"] = str(refusal)
            return render(request, "teams/invitation.html", context, status=400)
        messages.success(request, _("Welcome to “%(team)s”.") % {"team": membership.team.name})
        return redirect("team-detail", membership.team.slug)
    if invitation.accepted_at is None and not services.invitation_matches(invitation, request.user):
        context["error"] = _(
            "This invitation was sent to %(email)s, but you are signed in as %(current)s. "
            "Log out and sign in with the invited address, or ask for an invitation to yours."
        ) % {"email": invitation.email, "current": request.user.email}
    elif invitation.accepted_at is None:
        context["needs_confirmation"] = not services.invitation_verified(invitation, request.user)
    context["already_member"] = Membership.objects.filter(
        team=invitation.team, user_id=request.user.pk
    ).exists()
    return render(request, "teams/invitation.html", context)


# Projects -------------------------------------------------------------------


@login_required
@require_POST
def project_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    membership = get_membership(request, slug, manage=True)
    form = ProjectForm(request.POST)
    if not form.is_valid():
        return _team_page(request, membership, project_form=form, status=400)
    project = services.project_create(team=membership.team, name=form.cleaned_data["name"])
    messages.success(request, _("Project “%(name)s” created.") % {"name": project.name})
    return redirect("project-detail", project.slug)


def _project_page(
    request: AuthenticatedHttpRequest, project: Project, role: str, form: ProjectForm | None = None
) -> HttpResponse:
    context = {
        "project": project,
        "role": role,
        "can_manage": role_may_manage(role),
        "form": form or ProjectForm(initial={"name": project.name}),
    }
    return render(request, "teams/project_detail.html", context, status=400 if form else 200)


@login_required
@require_GET
def project_detail(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    project, role = get_project_for_member(request, slug)
    return _project_page(request, project, role)


@login_required
@require_POST
def project_rename(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    project, role = get_project_for_member(request, slug, manage=True)
    form = ProjectForm(request.POST)
    if not form.is_valid():
        return _project_page(request, project, role, form)
    project.rename(form.cleaned_data["name"])
    messages.success(request, _("Project renamed to “%(name)s”.") % {"name": project.name})
    return redirect("project-detail", project.slug)


@login_required
@require_POST
def project_archive(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    project, _role = get_project_for_member(request, slug, manage=True)
    archive = request.POST.get("archived", "1") == "1"
    project.set_archived(archive)
    if archive:
        messages.success(request, _("Project “%(name)s” archived.") % {"name": project.name})
    else:
        messages.success(request, _("Project “%(name)s” is active again.") % {"name": project.name})
    return redirect("project-detail", project.slug)
