from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from memories.models import EventAction, Kind, Memory, MemoryEvent, Scope, Status
from memories.services import (
    MemoryConflict,
    memories_change_kind,
    memories_create,
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
    new_memory,
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
    batch = uuid.uuid4()
    created = memory_create(owner=alice, content="Imported fact", actor=alice, batch=batch)
    memory_undo_batch(batch=batch, actor=alice)
    created.refresh_from_db()
    assert created.deleted_at is not None


def test_undo_puts_back_each_memorys_own_kind_and_content(alice: Any) -> None:
    tea = memory_create(owner=alice, content="Likes tea", kind=Kind.PREFERENCE, actor=alice)
    lyon = memory_create(owner=alice, content="Lives in Lyon", kind=Kind.CONTEXT, actor=alice)
    batch = memories_change_kind(memories=[tea, lyon], kind=Kind.GOAL, actor=alice)
    edit_batch = uuid.uuid4()
    memory_update(
        memory=tea,
        changes={"content": "Likes green tea", "tags": ["drinks"]},
        expected_revision=None,
        actor=alice,
        batch=edit_batch,
    )
    memory_undo_batch(batch=edit_batch, actor=alice)
    tea.refresh_from_db()
    assert (tea.content, tea.tags, tea.kind) == ("Likes tea", [], Kind.GOAL)
    assert Memory.objects.filter(search_vector="green").count() == 0
    assert Memory.objects.filter(search_vector="tea").get() == tea
    restored = memory_undo_batch(batch=batch, actor=alice)
    assert [memory.pk for memory in restored] == [tea.pk, lyon.pk]
    tea.refresh_from_db()
    lyon.refresh_from_db()
    assert (tea.kind, lyon.kind) == (Kind.PREFERENCE, Kind.CONTEXT)
    assert _events(lyon) == ["created", "edited", "edited"]
    undo_event = lyon.events.order_by("-id").first()
    assert undo_event is not None and undo_event.before is not None and undo_event.after is not None
    assert (undo_event.before["kind"], undo_event.after["kind"]) == (Kind.GOAL, Kind.CONTEXT)
    assert undo_event.after["revision"] == lyon.revision == 3


def test_undo_of_a_clear_all_restores_with_events_in_few_queries(
    alice: Any, django_assert_max_num_queries: Any
) -> None:
    memories_create(
        memories=[new_memory(owner=alice, content=f"Fact number {n}") for n in range(300)],
        actor=alice,
    )
    batch = memories_delete(memories=Memory.objects.filter(owner=alice), actor=alice)
    with django_assert_max_num_queries(8):
        restored = memory_undo_batch(batch=batch, actor=alice)
    assert len(restored) == 300
    assert Memory.objects.alive().count() == 300
    restore_events = MemoryEvent.objects.filter(action=EventAction.RESTORED)
    assert restore_events.count() == 300
    assert restore_events.values("batch").distinct().count() == 1
    assert set(Memory.objects.values_list("revision", flat=True)) == {3}


def test_bulk_create_is_searchable_and_records_created_events(alice: Any) -> None:
    batch = uuid.uuid4()
    created = memories_create(
        memories=[
            new_memory(owner=alice, content="  用户喜欢喝绿茶  ", tags=["Drinks"]),
            new_memory(owner=alice, content="Deploys on Tuesdays", kind=Kind.LESSON),
        ],
        actor=alice,
        batch=batch,
    )
    assert all(memory.pk for memory in created)
    tea, deploys = (Memory.objects.get(pk=memory.pk) for memory in created)
    assert (tea.content, tea.tags, deploys.importance) == ("用户喜欢喝绿茶", ["drinks"], 0.85)
    assert tea.search_document == Memory.objects.get(pk=tea.pk).search_document != ""
    assert Memory.objects.filter(search_vector="drinks").get() == tea
    events = MemoryEvent.objects.filter(batch=batch, action=EventAction.CREATED, actor=alice)
    assert events.count() == 2
    memory_undo_batch(batch=batch, actor=alice)
    assert Memory.objects.in_trash().count() == 2


def test_project_memory_requires_a_project(alice: Any) -> None:
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        memory_create(
            owner=alice, content="Team fact", scope=Scope.PROJECT, project=None, actor=alice
        )


@pytest.mark.django_db
def test_set_based_sql_builds_the_event_rows_services_build(alice: Any) -> None:
    """forgetting writes its events in SQL from services' builders: the snapshot in SQL is
    Memory.snapshot(), and the SQL ``before`` is the snapshot with the changed fields put back,
    as ``_event`` records a single change."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from memories import events, services

    memory = services.memory_create(owner=alice, content="Tea at ten", tags=["drinks"], actor=alice)
    other = services.memory_create(owner=alice, content="Coffee", actor=alice)
    now = timezone.now()
    Memory.objects.filter(pk=memory.pk).update(
        deleted_at=now,
        forgotten_at=now - timedelta(seconds=1),
        valid_until=now,
        superseded_by=other,
    )
    memory.refresh_from_db()
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {events.snapshot_sql('m')}, "
            f"{events.before_sql(events.snapshot_sql('m'), 'm.revision', {'importance': '0.25'})} "
            f"FROM {table} m WHERE m.id = %s",
            [memory.pk],
        )
        after, before = cursor.fetchone()
    after = json.loads(after) if isinstance(after, str) else after
    before = json.loads(before) if isinstance(before, str) else before
    assert after == memory.snapshot()
    assert before == memory.snapshot() | {"importance": 0.25, "revision": memory.revision - 1}
    assert events.insert_events_sql("SELECT 1").startswith(
        f"INSERT INTO {MemoryEvent._meta.db_table} (memory_id, action, actor_id, actor_label, "
        "before, after, batch, created_at)"
    )


def test_bookkeeping_written_outside_events_is_no_part_of_a_snapshot() -> None:
    from memories import events

    fields = {field.name for field in Memory._meta.concrete_fields}
    assert set(events.BOOKKEEPING_FIELDS) <= fields
    assert not set(events.BOOKKEEPING_FIELDS) & set(Memory(content="x").snapshot())
