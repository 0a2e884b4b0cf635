"""Who may see and change a team or a project, for the views of every app.

A team or project is invisible to non-members (404, as if it did not exist);
a member whose role does not allow an action gets 403.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from accounts.http import AuthenticatedHttpRequest
from teams.models import MANAGER_ROLES, WRITER_ROLES, Membership, Project, Team


def get_membership(
    request: AuthenticatedHttpRequest, team_slug: str, *, manage: bool = False
) -> Membership:
    """The requesting user's membership of the team; ``manage`` requires owner or admin."""
    membership = (
        Membership.objects.select_related("team", "user")
        .filter(team__slug=team_slug, user=request.user)
        .first()
    )
    if membership is None:
        raise Http404("No such team.")
    if manage and membership.role not in MANAGER_ROLES:
        raise PermissionDenied("Only owners and admins manage this team.")
    return membership


def get_team_for_member(
    request: AuthenticatedHttpRequest, team_slug: str, *, manage: bool = False
) -> Team:
    return get_membership(request, team_slug, manage=manage).team


def get_project_for_member(
    request: AuthenticatedHttpRequest, slug: str, *, write: bool = False, manage: bool = False
) -> tuple[Project, str]:
    """The project and the requesting user's role in it.

    ``write`` requires a writer role (viewers read only) and a project that is
    not archived; ``manage`` requires owner or admin (renaming, archiving).
    """
    project = Project.objects.select_related("team").filter(slug=slug).first()
    role = project.role_of(request.user) if project else None
    if project is None or role is None:
        raise Http404("No such project.")
    if write and (role not in WRITER_ROLES or project.is_archived):
        raise PermissionDenied("Viewers and archived projects are read-only.")
    if manage and role not in MANAGER_ROLES:
        raise PermissionDenied("Only owners and admins manage this project.")
    return project, role
