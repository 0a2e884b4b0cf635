"""memories.permissions and teams.permissions: every role against every kind of memory."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser

from memories.models import Memory, Scope, Status
from memories.permissions import (
    can_change_memory,
    can_review_memory,
    can_see_memory,
    memories_reviewable_by,
    memories_visible_to,
    memories_writable_by,
)
from memories.services import memory_create
from teams.models import Project
from teams.permissions import (
    can_read_project,
    can_review_project,
    can_write_project,
    project_role,
    projects_readable_by,
    projects_readable_with_role,
    projects_reviewable_by,
    projects_writable_by,
)
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

ROLES = ("owner", "admin", "member", "viewer", "stranger")

# (see, change, review) per role, for a pending memory of each kind.
EXPECTED = {
    "personal of the owner": {
        "owner": (True, True, True),
        "admin": (False, False, False),
        "member": (False, False, False),
        "viewer": (False, False, False),
        "stranger": (False, False, False),
    },
    "conversation of the owner": {
        "owner": (True, True, True),
        "admin": (False, False, False),
        "member": (False, False, False),
        "viewer": (False, False, False),
        "stranger": (False, False, False),
    },
    "project": {
        "owner": (True, True, True),
        "admin": (True, True, True),
        "member": (True, True, False),
        "viewer": (True, False, False),
        "stranger": (False, False, False),
    },
    "archived project": {
        "owner": (True, False, False),
        "admin": (True, False, False),
        "member": (True, False, False),
        "viewer": (True, False, False),
        "stranger": (False, False, False),
    },
}


def _memories(owner: Any, project: Project, archived: Project) -> dict[str, Memory]:
    def pending(content: str, **fields: Any) -> Memory:
        return memory_create(
            owner=owner, content=content, status=Status.PENDING, actor=owner, **fields
        )

    return {
        "personal of the owner": pending("Personal"),
        "conversation of the owner": pending("In a chat", scope=Scope.CONVERSATION),
        "project": pending("Shared", scope=Scope.PROJECT, project=project),
        "archived project": pending("Archived", scope=Scope.PROJECT, project=archived),
    }


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_changes_and_reviews_as_the_rules_say(
    role: str, people: dict[str, Any], project: Project
) -> None:
    archived = Project.objects.create(team=project.team, name="Old Survey")
    memories = _memories(people["owner"], project, archived)
    archived.set_archived(True)
    user = people[role]
    visible = set(memories_visible_to(user))
    writable = set(memories_writable_by(user))
    reviewable = set(memories_reviewable_by(user))
    for name, memory in memories.items():
        memory = Memory.objects.get(pk=memory.pk)
        see, change, review = EXPECTED[name][role]
        answers = (
            can_see_memory(user, memory),
            can_change_memory(user, memory),
            can_review_memory(user, memory),
        )
        assert answers == (see, change, review), f"{role} on {name}"
        in_querysets = (memory in visible, memory in writable, memory in reviewable)
        assert in_querysets == (see, change, review), f"{role} on {name} (querysets)"


def test_project_rules_per_role(people: dict[str, Any], project: Project) -> None:
    archived = Project.objects.create(team=project.team, name="Old Survey")
    archived.set_archived(True)
    for role in ROLES:
        user = people[role]
        member = role != "stranger"
        assert project_role(user, project) == (role if member else None)
        assert can_read_project(user, project) is member
        assert can_write_project(user, project) is (role in ("owner", "admin", "member"))
        assert can_review_project(user, project) is (role in ("owner", "admin"))
        assert can_read_project(user, archived) is member
        assert not can_write_project(user, archived) and not can_review_project(user, archived)
        assert set(projects_readable_by(user)) == ({project, archived} if member else set())
        assert set(projects_writable_by(user)) == (
            {project} if role in ("owner", "admin", "member") else set()
        )
        assert set(projects_reviewable_by(user)) == (
            {project} if role in ("owner", "admin") else set()
        )
        assert [p.member_role for p in projects_readable_with_role(user)] == (
            [role, role] if member else []
        )


def test_staff_review_every_pending_memory_but_see_only_their_own(
    people: dict[str, Any], project: Project
) -> None:
    memories = _memories(people["owner"], project, project)
    staff = make_user("staff@example.com", is_staff=True)
    assert set(memories_reviewable_by(staff)) == set(memories.values())
    assert all(can_review_memory(staff, memory) for memory in memories.values())
    assert list(memories_visible_to(staff)) == []
    assert not any(can_change_memory(staff, memory) for memory in memories.values())


def test_anonymous_may_do_nothing(people: dict[str, Any], project: Project) -> None:
    memories = _memories(people["owner"], project, project)
    anonymous = AnonymousUser()
    assert not memories_visible_to(anonymous).exists()
    assert not memories_writable_by(anonymous).exists()
    assert not memories_reviewable_by(anonymous).exists()
    assert not projects_readable_by(anonymous).exists()
    assert project_role(anonymous, project) is None
    for memory in memories.values():
        assert not can_see_memory(anonymous, memory)
        assert not can_change_memory(anonymous, memory)
        assert not can_review_memory(anonymous, memory)


def test_only_pending_memories_are_reviewable(people: dict[str, Any]) -> None:
    owner = people["owner"]
    active = memory_create(owner=owner, content="Active", actor=owner)
    pending = memory_create(owner=owner, content="Pending", status=Status.PENDING, actor=owner)
    assert set(memories_reviewable_by(owner)) == {pending}
    assert set(memories_writable_by(owner)) == {active, pending}
