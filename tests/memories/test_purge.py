"""Deleting for good: "Delete forever" on a trashed memory, "Empty trash", and the daily
purge of old trash. A purged memory leaves no trace of its content anywhere."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.test import override_settings
from django.utils import timezone

from memories import services
from memories.jobs import purge_trash
from memories.models import Memory, MemoryEvent
from memories.purge import memories_purge
from recall.models import AccessLog
from tests.conftest import client_for
from tests.trust_helpers import columns_holding

pytestmark = pytest.mark.django_db

LIST = "/settings/memories"
# Distinctive words to look for (a locker code with its value would be refused as a secret).
SECRET = "My locker at the gym is zebra-4471"


def personal(owner: Any, content: str, **fields: Any) -> Memory:
    return services.memory_create(owner=owner, content=content, actor=owner, **fields)


def trashed(owner: Any, content: str, **fields: Any) -> Memory:
    memory = personal(owner, content, **fields)
    return services.memory_delete(memory=memory, actor=owner)


def purge_url(memory: Memory) -> str:
    return f"{LIST}/{memory.pk}/purge"


def test_purging_leaves_no_trace_of_the_content_in_any_column(alice: Any) -> None:
    memory = personal(
        alice,
        SECRET,
        tags=["locker"],
        evidence=[{"message_ids": [], "quote": SECRET}],
        metadata={"subject": SECRET},
    )
    memory = services.memory_update(
        memory=memory, changes={"pinned": True}, expected_revision=None, actor=alice
    )
    newer = personal(alice, "My locker code changed")
    services.memory_supersede(old=memory, new=newer, actor=alice)
    other = personal(alice, "I cycle to work")
    # Another memory's history that quotes the purged text (a merge or supersede may).
    MemoryEvent.objects.create(
        memory=other, action="merged", before={"content": SECRET}, after={"content": "x"}
    )
    AccessLog.objects.create(user=alice, memory_ids=[memory.pk, other.pk])
    LogEntry.objects.create(
        user=alice,
        content_type=ContentType.objects.get_for_model(Memory),
        object_id=str(memory.pk),
        object_repr=SECRET,
        action_flag=CHANGE,
    )
    services.memory_delete(memory=memory, actor=alice)
    assert columns_holding(SECRET)  # It was there.

    response = client_for(alice).post(purge_url(memory), {"confirm": "forever", "next": LIST})

    assert response.status_code == 302
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryEvent.objects.filter(memory_id=memory.pk).exists()
    assert columns_holding(SECRET) == []
    assert AccessLog.objects.get().memory_ids == [other.pk]
    assert Memory.objects.get(pk=newer.pk).content == "My locker code changed"
    assert Memory.objects.get(pk=other.pk).content == "I cycle to work"


def test_a_memory_saying_the_same_keeps_its_own_history(alice: Any) -> None:
    twin = personal(alice, SECRET)
    memory = trashed(alice, SECRET)
    memories_purge(memories=[memory])
    assert MemoryEvent.objects.get(memory=twin).after["content"] == SECRET


def test_delete_forever_asks_first(alice: Any) -> None:
    memory = trashed(alice, SECRET)
    client = client_for(alice)
    page = client.get(purge_url(memory), {"next": f"{LIST}?state=trash"}).content.decode()
    assert "Delete this memory forever?" in page
    assert "cannot be undone" in page
    # A post without the confirmation only shows the question again.
    assert client.post(purge_url(memory)).status_code == 200
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_delete_forever_with_htmx_removes_the_row(alice: Any) -> None:
    memory = trashed(alice, SECRET)
    trashed(alice, "Another one in the trash")
    response = client_for(alice).post(
        purge_url(memory),
        {"confirm": "forever"},
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{LIST}?state=trash"},
    )
    body = response.content.decode()
    assert f'id="memory-{memory.pk}" class="memory-gone"' in body
    assert "Memory deleted forever." in body
    assert "memories-changed" in response.headers["HX-Trigger"]
    # The bulk bar's count follows (issue 44 item 10).
    assert 'id="bulk-matching" hx-swap-oob="true">All 1 matching' in body
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_trash_rows_offer_delete_forever(alice: Any) -> None:
    memory = trashed(alice, SECRET)
    personal(alice, "Still active")
    page = client_for(alice).get(LIST, {"state": "trash"}).content.decode()
    assert f'href="{purge_url(memory)}?next=' in page
    assert "Empty trash…" in page
    assert "deleted forever after 30 days" in page
    active = client_for(alice).get(LIST).content.decode()
    assert "Delete forever…" not in active


def test_only_trashed_memories_of_the_user_can_be_purged(
    client: Any, alice: Any, charlie: Any, project: Any, vera: Any
) -> None:
    memory = trashed(alice, SECRET)
    active = personal(alice, "Active one")
    assert client_for(charlie).post(purge_url(memory), {"confirm": "forever"}).status_code == 404
    assert client_for(alice).post(purge_url(active), {"confirm": "forever"}).status_code == 404
    response = client.get(purge_url(memory))
    assert response.status_code == 302 and "/accounts/login/" in response.url
    shared = services.memory_create(
        owner=alice, content="Shared", scope="project", project=project, actor=alice
    )
    services.memory_delete(memory=shared, actor=alice)
    assert client_for(vera).post(purge_url(shared), {"confirm": "forever"}).status_code == 403
    assert Memory.objects.filter(pk__in=[memory.pk, active.pk, shared.pk]).count() == 3


def test_empty_trash_confirms_the_number_and_keeps_project_memories(
    alice: Any, project: Any
) -> None:
    first, second = trashed(alice, "Old one"), trashed(alice, "Old two")
    kept = personal(alice, "Kept")
    shared = services.memory_create(
        owner=alice, content="Shared", scope="project", project=project, actor=alice
    )
    services.memory_delete(memory=shared, actor=alice)
    client = client_for(alice)
    url = "/settings/memories/empty-trash"
    page = client.get(url, {"next": f"{LIST}?state=trash"}).content.decode()
    assert "Delete 2 memories forever" in page
    assert client.post(url, {"count": "3", "next": LIST}).status_code == 409
    assert Memory.objects.filter(pk=first.pk).exists()
    response = client.post(url, {"count": "2", "next": f"{LIST}?state=trash"})
    assert response.status_code == 302
    assert not Memory.objects.filter(pk__in=[first.pk, second.pk]).exists()
    assert Memory.objects.filter(pk__in=[kept.pk, shared.pk]).count() == 2
    # The project's page empties the project's trash.
    project_url = f"/projects/{project.slug}/memories?state=trash"
    client.post(url, {"count": "1", "next": project_url})
    assert not Memory.objects.filter(pk=shared.pk).exists()


def test_empty_trash_requires_log_in(client: Any) -> None:
    response = client.get("/settings/memories/empty-trash")
    assert response.status_code == 302 and "/accounts/login/" in response.url


@override_settings(MEMORY_TRASH_DAYS=30)
def test_the_daily_job_purges_what_is_in_the_trash_long_enough(alice: Any) -> None:
    old = trashed(alice, "Thrown away long ago")
    recent = trashed(alice, "Thrown away yesterday")
    active = personal(alice, "Active")
    Memory.objects.filter(pk=old.pk).update(deleted_at=timezone.now() - timedelta(days=31))
    Memory.objects.filter(pk=recent.pk).update(deleted_at=timezone.now() - timedelta(days=1))
    assert purge_trash() == 1
    assert set(Memory.objects.values_list("pk", flat=True)) == {recent.pk, active.pk}
    assert columns_holding("Thrown away long ago") == []


def test_the_purge_schedules_exist() -> None:
    from django_q.models import Schedule

    from memories.jobs import ensure_schedules

    ensure_schedules()
    assert Schedule.objects.get(name="purge old trash").func == "memories.jobs.purge_trash"
    assert (
        Schedule.objects.get(name="purge old messages").func == "conversations.jobs.purge_messages"
    )
