"""Who may see, change and review a memory: each rule written once, here.

- Personal and conversation memories: their owner sees, changes and reviews them.
- Project memories: as the project's rules say (``teams.permissions``): members
  see them; owners, admins and members change them unless the project is
  archived; owners and admins review them unless it is archived.
- An API token limited to personal memories or one project sees and changes only
  those (``memories_for_token``, ``token_limit_covers``), and only conversations
  whose memories will be those.
- Staff review every pending memory (the /review/ queue and the admin).

Pages, API endpoints (with the API token's user), the review queue, memory files
and chat commands all ask here. Each queryset helper narrows ``memories``
(default: every memory); the ``can_…`` functions answer for one memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from django.db.models import Q

from accounts.models import TokenLimit
from memories.models import Memory, MemoryEvent, MemoryQuerySet, Scope
from teams.permissions import (
    can_review_project,
    can_write_project,
    projects_readable_by,
    projects_reviewable_by,
    projects_writable_by,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    from accounts.models import ApiToken

    AnyUser = AbstractBaseUser | AnonymousUser

OWNED_SCOPES = (Scope.USER, Scope.CONVERSATION)


def _owned_or_in(
    user: AnyUser, memories: MemoryQuerySet | None, project_ids: object
) -> MemoryQuerySet:
    memories = Memory.objects.all() if memories is None else memories
    if not user.is_authenticated:
        return memories.none()
    return memories.filter(
        Q(scope__in=OWNED_SCOPES, owner=user) | Q(scope=Scope.PROJECT, project_id__in=project_ids)
    )


def memories_visible_to(
    user: AnyUser,
    memories: MemoryQuerySet | None = None,
    *,
    project_ids: Sequence[int] | None = None,
) -> MemoryQuerySet:
    """The user's personal and conversation memories, and their projects' memories.

    ``project_ids``: the user's projects, already read (recall does). Literal
    ids let PostgreSQL use the project index; with the default subquery it
    scans a whole index instead.
    """
    ids = projects_readable_by(user).values("id") if project_ids is None else project_ids
    return _owned_or_in(user, memories, ids)


def memories_for_token(memories: MemoryQuerySet, token: ApiToken | None) -> MemoryQuerySet:
    """``memories`` narrowed to what an API token limited to personal memories or to one
    project may see and change (no token, or no limit: unchanged). Personal means the
    user's own personal and conversation memories; a project limit whose project was
    deleted sees nothing."""
    if token is None or not token.limit:
        return memories
    if token.limit == TokenLimit.PERSONAL:
        return memories.filter(scope__in=OWNED_SCOPES)
    if token.limit_project_id is None:
        return memories.none()
    return memories.filter(scope=Scope.PROJECT, project_id=token.limit_project_id)


def token_limit_covers(token: ApiToken | None, scope: str, project_id: int | None) -> bool:
    """Whether a token's limit covers a memory of ``scope`` (in ``project_id``), or a
    conversation (a project's, or else personal: its memories will be), to read or write.
    The one test of a token's limit for a single thing; ``memories_for_token`` is its
    queryset form."""
    if token is None or not token.limit:
        return True
    if token.limit == TokenLimit.PERSONAL:
        return scope != Scope.PROJECT
    return (
        scope == Scope.PROJECT and project_id is not None and project_id == token.limit_project_id
    )


def memories_writable_by(user: AnyUser, memories: MemoryQuerySet | None = None) -> MemoryQuerySet:
    """The memories the user may change (edit, delete, restore, pin, import over)."""
    return _owned_or_in(user, memories, projects_writable_by(user).values("id"))


def batch_undoable_by(user: AnyUser, batch: uuid.UUID, *, made_by_job: str = "") -> bool:
    """Whether ``user`` may undo the changes of ``batch`` (one Undo of a page action, a
    /forget, a file import, an extraction run): there are some, each was the user's own, or
    with ``made_by_job`` (an actor label) that job's on the user's own memories, and the user
    may still change every memory they touched."""
    events = MemoryEvent.objects.filter(batch=batch)
    if made_by_job:
        theirs = events.filter(actor__isnull=True, actor_label=made_by_job, memory__owner=user.pk)
    else:
        theirs = events.filter(actor=user.pk)
    return (
        events.exists()
        and not events.exclude(pk__in=theirs.values("pk")).exists()
        and not events.exclude(memory__in=memories_writable_by(user)).exists()
    )


def memories_reviewable_by(user: AnyUser, memories: MemoryQuerySet | None = None) -> MemoryQuerySet:
    """The pending memories the user may accept or reject."""
    pending = (Memory.objects.all() if memories is None else memories).pending_review()
    if user.is_authenticated and getattr(user, "is_staff", False):
        return pending
    return _owned_or_in(user, pending, projects_reviewable_by(user).values("id"))


def can_see_memory(user: AnyUser, memory: Memory) -> bool:
    if not user.is_authenticated:
        return False
    if memory.scope == Scope.PROJECT:
        return memory.project_id is not None and (
            projects_readable_by(user).filter(pk=memory.project_id).exists()
        )
    return memory.owner_id == user.pk


def can_change_memory(
    user: AnyUser, memory: Memory, *, writable_project_ids: Collection[int] | None = None
) -> bool:
    """Whether the user may change ``memory``.

    ``writable_project_ids``: the user's ``projects_writable_by``, already read
    (a list answers for many rows without a query each).
    """
    if not user.is_authenticated:
        return False
    if memory.scope != Scope.PROJECT:
        return memory.owner_id == user.pk
    if writable_project_ids is not None:
        return memory.project_id in writable_project_ids
    return memory.project is not None and can_write_project(user, memory.project)


def can_review_memory(
    user: AnyUser, memory: Memory, *, reviewable_project_ids: Collection[int] | None = None
) -> bool:
    """Whether the user may accept or reject ``memory`` (a pending one).

    ``reviewable_project_ids``: the user's ``projects_reviewable_by``, already read.
    """
    if not user.is_authenticated:
        return False
    if getattr(user, "is_staff", False):
        return True
    if memory.scope != Scope.PROJECT:
        return memory.owner_id == user.pk
    if reviewable_project_ids is not None:
        return memory.project_id in reviewable_project_ids
    return memory.project is not None and can_review_project(user, memory.project)
