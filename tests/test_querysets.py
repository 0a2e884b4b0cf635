from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from memories.models import Memory, Scope, Status
from memories.permissions import can_change_memory, memories_visible_to, memories_writable_by
from memories.services import memory_create, memory_delete
from teams.models import Project


def test_who_sees_what(alice: Any, bob: Any, vera: Any, charlie: Any, project: Project) -> None:
    personal = memory_create(owner=alice, content="Alice's personal note", actor=alice)
    shared = memory_create(
        owner=alice, content="Project fact", scope=Scope.PROJECT, project=project, actor=alice
    )
    charlies = memory_create(owner=charlie, content="Charlie's note", actor=charlie)

    assert set(memories_visible_to(alice)) == {personal, shared}
    assert set(memories_visible_to(bob)) == {shared}
    assert set(memories_visible_to(vera)) == {shared}
    assert set(memories_visible_to(charlie)) == {charlies}
    assert list(memories_visible_to(AnonymousUser())) == []

    assert set(memories_writable_by(bob)) == {shared}
    assert list(memories_writable_by(vera)) == []
    assert can_change_memory(bob, shared) and not can_change_memory(vera, shared)
    assert not can_change_memory(charlie, shared)
    assert can_change_memory(alice, personal) and not can_change_memory(bob, personal)


def test_liveness_and_validity(alice: Any) -> None:
    now = timezone.now()
    active = memory_create(owner=alice, content="Active", actor=alice)
    pending = memory_create(owner=alice, content="Pending", status=Status.PENDING, actor=alice)
    trashed = memory_create(owner=alice, content="Trashed", actor=alice)
    memory_delete(memory=trashed, actor=alice)
    forgotten = memory_create(owner=alice, content="Forgotten", actor=alice)
    Memory.objects.filter(pk=forgotten.pk).update(forgotten_at=now)
    expired = memory_create(owner=alice, content="Expired", actor=alice)
    Memory.objects.filter(pk=expired.pk).update(
        valid_from=now - timedelta(days=10), valid_until=now - timedelta(days=1)
    )

    assert set(Memory.objects.alive()) == {active, pending, expired}
    assert set(Memory.objects.in_effect()) == {active}
    assert set(Memory.objects.in_effect(now - timedelta(days=2))) == {expired}
    assert list(Memory.objects.pending_review()) == [pending]
    assert list(Memory.objects.in_trash()) == [trashed]
    assert list(Memory.objects.forgotten()) == [forgotten]
