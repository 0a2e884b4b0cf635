from __future__ import annotations

from typing import Any

import pytest

from memoryapp.models import EventAction, Kind, Memory, MemoryEvent, Scope, Status
from memoryapp.services import (
    MemoryConflict,
    memories_delete,
    memory_accept,
    memory_create,
    memory_delete,
    memory_reject,
    memory_restore,
    memory_set_pinned,
    memory_supersede,
    memory_undo_batch,
    memory_update,
)


def _events(memory: Memory) -> list[str]:
    return list(memory.events.order_by("created_at", "id").values_list("action", flat=True))


def test_create_records_an_event_with_the_actor_and_defaults(alice: Any) -> None:
    memory = memory_create(
        owner=alice,
        content="  Prefers dark mode  ",
        kind=Kind.PREFERENCE,
        tags=["UI", " ui", "#Theme"],
        actor=alice,
    )
    memory.refresh_from_db()
    assert memory.content == "Prefers dark mode"
    assert memory.importance == 0.9  # the preference kind's default
    assert memory.tags == ["ui", "theme"]
    event = memory.events.get()
    assert (event.action, event.actor, event.before) == (EventAction.CREATED, alice, None)
    assert event.after is not None and event.after["content"] == "Prefers dark mode"


def test_edit_bumps_the_revision_and_records_before_and_after(alice: Any) -> None:
    memory = memory_create(owner=alice, content="Uses Vue", actor=alice)
    updated = memory_update(
        memory=memory,
        changes={"content": "Uses React", "importance": 0.5},
        expected_revision=1,
        actor=alice,
    )
    assert (updated.revision, updated.content, updated.importance) == (2, "Uses React", 0.5)
    event = updated.events.first()
    assert event is not None and event.action == EventAction.EDITED
    assert event.before is not None and event.after is not None
    assert event.before["content"] == "Uses Vue" and event.after["content"] == "Uses React"


def test_a_stale_revision_is_refused_and_changes_nothing(alice: Any) -> None:
    memory = memory_create(owner=alice, content="Uses Vue", actor=alice)
    memory_update(
        memory=memory, changes={"content": "Uses Svelte"}, expected_revision=1, actor=alice
    )
    with pytest.raises(MemoryConflict) as conflict:
        memory_update(
            memory=memory, changes={"content": "Uses React"}, expected_revision=1, actor=alice
        )
    assert conflict.value.current.content == "Uses Svelte"
    memory.refresh_from_db()
    assert (memory.content, memory.revision) == ("Uses Svelte", 2)
    assert _events(memory) == ["created", "edited"]


def test_unknown_fields_cannot_be_edited(alice: Any) -> None:
    memory = memory_create(owner=alice, content="x fact", actor=alice)
    with pytest.raises(ValueError):
        memory_update(memory=memory, changes={"owner_id": 99}, expected_revision=1, actor=alice)


def test_delete_is_soft_and_restore_brings_it_back(alice: Any) -> None:
    memory = memory_create(owner=alice, content="Lives in Berlin", actor=alice)
    memory_delete(memory=memory, actor=alice)
    assert Memory.objects.alive().count() == 0
    assert Memory.objects.in_trash().get() == memory
    memory_restore(memory=memory, actor=alice)
    assert Memory.objects.alive().get() == memory
    assert _events(memory) == ["created", "deleted", "restored"]


def test_pin_and_unpin_are_events(alice: Any) -> None:
    memory = memory_create(owner=alice, content="Name is Alice", actor=alice)
    memory_set_pinned(memory=memory, pinned=True, actor=alice)
    memory_set_pinned(memory=memory, pinned=False, actor=alice)
    assert _events(memory) == ["created", "pinned", "unpinned"]


def test_accept_and_reject_pending_memories(alice: Any) -> None:
    first = memory_create(
        owner=alice, content="Likes tea", status=Status.PENDING, actor_label="extraction"
    )
    second = memory_create(
        owner=alice, content="Likes coffee", status=Status.PENDING, actor_label="extraction"
    )
    assert set(Memory.objects.pending_review()) == {first, second}
    memory_accept(memory=first, actor=alice)
    memory_reject(memory=second, actor=alice)
    assert list(Memory.objects.in_effect()) == [first]
    assert _events(second) == ["created", "rejected"]
    assert second.events.first().actor_name == str(alice)
    assert first.events.last().actor_name == "extraction"


def test_supersede_keeps_both_and_links_them(alice: Any) -> None:
    old = memory_create(owner=alice, content="Prefers Vue", kind=Kind.PREFERENCE, actor=alice)
    new = memory_create(owner=alice, content="Now prefers React", kind=Kind.PREFERENCE, actor=alice)
    memory_supersede(old=old, new=new, actor=None, actor_label="extraction")
    old.refresh_from_db()
    assert old.superseded_by == new and old.valid_until == new.valid_from
    assert list(Memory.objects.in_effect()) == [new]
    assert Memory.objects.count() == 2
    assert _events(old) == ["created", "superseded"]


def test_undo_of_a_batch_brings_back_exactly_that_batch(alice: Any) -> None:
    kept_deleted = memory_create(owner=alice, content="Deleted before", actor=alice)
    memory_delete(memory=kept_deleted, actor=alice)
    batch_members = [memory_create(owner=alice, content=f"Fact {n}", actor=alice) for n in range(3)]
    batch = memories_delete(memories=Memory.objects.alive(), actor=alice)
    assert Memory.objects.alive().count() == 0
    memory_undo_batch(batch=batch, actor=alice)
    assert set(Memory.objects.alive()) == set(batch_members)
    assert Memory.objects.in_trash().get() == kept_deleted
    assert MemoryEvent.objects.filter(batch=batch).count() == 3


def test_undo_of_a_created_batch_trashes_what_it_created(alice: Any) -> None:
    import uuid

    batch = uuid.uuid4()
    created = memory_create(owner=alice, content="Imported fact", actor=alice, batch=batch)
    memory_undo_batch(batch=batch, actor=alice)
    created.refresh_from_db()
    assert created.deleted_at is not None


def test_project_memory_requires_a_project(alice: Any) -> None:
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        memory_create(
            owner=alice, content="Team fact", scope=Scope.PROJECT, project=None, actor=alice
        )
