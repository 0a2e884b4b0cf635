"""Who may read, write, review and manage a project: each rule written once, here.

- A project's memories are read by every member of its team, whatever the role.
- They are written (added, edited, deleted, imported) by owners, admins and
  members; viewers only read, and an archived project is read-only for all.
- Owners and admins manage a team or project (rename, archive, invite).
- Pending project memories are reviewed (accepted or rejected) by owners and
  admins, while the project is not archived: reviewing changes the memory.

The memory rules built on these are in ``memories.permissions``. Every function
takes a user, an API token's user or an anonymous user; the anonymous user may
do nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models

from teams.models import Membership, Project, ProjectQuerySet, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    AnyUser = AbstractBaseUser | AnonymousUser

# Roles that may write a project's memories, and roles that manage a team and its projects.
WRITER_ROLES = (Role.OWNER, Role.ADMIN, Role.MEMBER)
MANAGER_ROLES = (Role.OWNER, Role.ADMIN)


# Rules on a role already read ------------------------------------------------------


def role_may_write(project: Project, role: str | None) -> bool:
    """Whether a member with ``role`` may change ``project``'s memories."""
    return role in WRITER_ROLES and not project.is_archived


def role_may_manage(role: str | None) -> bool:
    """Whether a member with ``role`` manages the team (and renames or archives its projects)."""
    return role in MANAGER_ROLES


def role_may_review(project: Project, role: str | None) -> bool:
    """Whether a member with ``role`` may accept or reject ``project``'s pending memories."""
    return role_may_manage(role) and not project.is_archived


# One project -----------------------------------------------------------------------


def project_role(user: AnyUser, project: Project) -> str | None:
    """The user's role in the project's team; None for a non-member (or anonymous)."""
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(team_id=project.team_id, user_id=user.pk)
        .values_list("role", flat=True)
        .first()
    )


def can_read_project(user: AnyUser, project: Project) -> bool:
    return project_role(user, project) is not None


def can_write_project(user: AnyUser, project: Project) -> bool:
    """Whether the user may change the project's memories."""
    return role_may_write(project, project_role(user, project))


def can_review_project(user: AnyUser, project: Project) -> bool:
    """Whether the user may accept or reject the project's pending memories."""
    return role_may_review(project, project_role(user, project))


# Querysets -------------------------------------------------------------------------


def _projects_of_member(user: AnyUser, **membership: object) -> ProjectQuerySet:
    """Projects of the teams where the user's membership matches ``membership`` (one join)."""
    if not user.is_authenticated:
        return Project.objects.none()
    lookups = {f"team__memberships__{name}": value for name, value in membership.items()}
    return Project.objects.filter(team__memberships__user_id=user.pk, **lookups)


def projects_readable_by(user: AnyUser) -> ProjectQuerySet:
    """The projects of the user's teams, whatever the role."""
    return _projects_of_member(user)


def projects_readable_with_role(user: AnyUser) -> ProjectQuerySet:
    """``projects_readable_by``, each project with ``member_role``: the user's role in its team."""
    return projects_readable_by(user).annotate(member_role=models.F("team__memberships__role"))


def projects_writable_by(user: AnyUser) -> ProjectQuerySet:
    """The projects whose memories the user may change."""
    return _projects_of_member(user, role__in=WRITER_ROLES).filter(archived_at__isnull=True)


def projects_reviewable_by(user: AnyUser) -> ProjectQuerySet:
    """The projects whose pending memories the user may accept or reject."""
    return _projects_of_member(user, role__in=MANAGER_ROLES).filter(archived_at__isnull=True)
