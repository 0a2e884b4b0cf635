"""A team or project for a view, as ``teams.permissions`` allows it.

A team or project is invisible to non-members (404, as if it did not exist);
a member whose role does not allow an action gets 403.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from accounts.http import AuthenticatedHttpRequest
from teams.models import Membership, Project
from teams.permissions import project_role, role_may_manage, role_may_write


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
    if manage and not role_may_manage(membership.role):
        raise PermissionDenied("Only owners and admins manage this team.")
    return membership


def get_project_for_member(
    request: AuthenticatedHttpRequest, slug: str, *, write: bool = False, manage: bool = False
) -> tuple[Project, str]:
    """The project and the requesting user's role in it.

    ``write`` requires a writer role (viewers read only) and a project that is
    not archived; ``manage`` requires owner or admin (renaming, archiving).
    """
    project = Project.objects.select_related("team").filter(slug=slug).first()
    role = project_role(request.user, project) if project else None
    if project is None or role is None:
        raise Http404("No such project.")
    if write and not role_may_write(project, role):
        raise PermissionDenied("Viewers and archived projects are read-only.")
    if manage and not role_may_manage(role):
        raise PermissionDenied("Only owners and admins manage this project.")
    return project, role
