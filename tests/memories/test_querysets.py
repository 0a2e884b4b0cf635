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


def test_each_state_selects_the_same_rows_in_sql_and_as_a_queryset(alice: Any) -> None:
    """models.STATE_CONDITIONS (querysets, page tabs, the API) and state_sql (reconcile's and
    forgetting's SQL) are one definition: over a memory in every state they agree."""
    from django.db import connection

    from memories.models import LISTED_STATES, STATE_CONDITIONS, STATE_SQL, state_sql

    now = timezone.now()
    rows = {
        name: memory_create(owner=alice, content=name, actor=alice)
        for name in (
            "active",
            "pending",
            "rejected",
            "trash",
            "forgotten",
            "trash_and_forgotten",
            "trash_pending",
            "forgotten_pending",
            "ended",
            "superseded",
        )
    }
    Memory.objects.filter(pk__in=[rows["pending"].pk, rows["trash_pending"].pk]).update(
        status=Status.PENDING
    )
    Memory.objects.filter(pk=rows["forgotten_pending"].pk).update(
        status=Status.PENDING, forgotten_at=now
    )
    Memory.objects.filter(pk=rows["rejected"].pk).update(status=Status.REJECTED)
    Memory.objects.filter(
        pk__in=[rows["trash"].pk, rows["trash_and_forgotten"].pk, rows["trash_pending"].pk]
    ).update(deleted_at=now)
    Memory.objects.filter(pk__in=[rows["forgotten"].pk, rows["trash_and_forgotten"].pk]).update(
        forgotten_at=now
    )
    Memory.objects.filter(pk=rows["ended"].pk).update(valid_until=now - timedelta(days=1))
    Memory.objects.filter(pk=rows["superseded"].pk).update(superseded_by=rows["active"])
    table = Memory._meta.db_table

    for state in STATE_CONDITIONS:
        by_queryset = set(Memory.objects.in_state(state).values_list("content", flat=True))
        for alias, sql in (("", STATE_SQL[state]), ("m", state_sql(state, "m"))):
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT content FROM {table} {alias} WHERE {sql}")
                by_sql = {content for (content,) in cursor.fetchall()}
            assert by_sql == by_queryset, state
        assert by_queryset, f"no fixture in state {state}"
        assert by_queryset != set(rows), f"every fixture in state {state}"

    assert {m.content for m in Memory.objects.active()} == {"active", "ended", "superseded"}
    assert {m.content for m in Memory.objects.rejected()} == {"rejected"}
    assert {m.content for m in Memory.objects.current()} == set(rows) - {"ended", "superseded"}
    # Each memory is in exactly one of the states a person picks from.
    for name, memory in rows.items():
        memory.refresh_from_db()
        picked = [
            state
            for state in LISTED_STATES
            if Memory.objects.in_state(state).filter(pk=memory.pk).exists()
        ]
        assert picked == [memory.state], name
    assert Memory.objects.in_state("all").count() == len(rows)
