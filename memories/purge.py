"""Deleting memories for good: nothing of their content is left, not even in other memories'
histories."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from memories.models import Memory, MemoryEvent

# What a purged memory's text becomes where another memory's history quoted it.
PURGED_TEXT = "[deleted]"


@transaction.atomic
def memories_purge(*, memories: Iterable[Memory]) -> int:
    """Delete memories for good; the number deleted. Nothing of their content is left.

    The rows go, and with them (by cascade) their history events, whose snapshots held
    the content, their evidence quotes, search document and vector. Other memories that
    named one as their successor lose the link (``superseded_by`` is SET NULL); any text of
    it quoted in another memory's history is replaced by PURGED_TEXT; the admin's log of
    changes to it goes; and apps that keep memory ids of their own are told
    (``signals.memories_purged``: recall removes them from its access log). Not undoable.
    """
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    from memories.signals import memories_purged

    ids = [memory.pk for memory in memories]
    if not ids:
        return 0
    locked = list(
        Memory.objects.select_for_update()
        .filter(pk__in=ids)
        .order_by("pk")
        .values_list("pk", "content")
    )
    ids = [pk for pk, _content in locked]
    if not ids:
        return 0
    _scrub_quotes(ids, [content for _pk, content in locked])
    LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Memory), object_id__in=[str(i) for i in ids]
    ).delete()
    Memory.objects.filter(pk__in=ids).delete()
    memories_purged.send(sender=Memory, memory_ids=ids)
    return len(ids)


def _scrub_quotes(ids: list[int], contents: list[str]) -> None:
    """Replace the purged ``contents`` in the events (before and after) of the other memories
    of the same owners and projects, the only ones that can have quoted them (a merge, a
    supersede); not in those of a memory that says the same itself (its own history)."""
    texts = sorted({text for text in contents if text})
    if not texts:
        return
    # Each text as it appears inside a JSON string, as jsonb prints it.
    quoted = [json.dumps(text, ensure_ascii=False)[1:-1] for text in texts]
    patterns = [
        "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        for text in quoted
    ]
    table, events = Memory._meta.db_table, MemoryEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT e.id, e.before::text, e.after::text FROM {events} e
                JOIN {table} m ON m.id = e.memory_id
                WHERE NOT (m.id = ANY(%s)) AND NOT (m.content = ANY(%s))
                AND (m.owner_id IN (SELECT owner_id FROM {table} WHERE id = ANY(%s))
                     OR m.project_id IN (SELECT project_id FROM {table} WHERE id = ANY(%s)))
                AND (e.before::text LIKE ANY(%s) OR e.after::text LIKE ANY(%s))""",
            [ids, texts, ids, ids, patterns, patterns],
        )
        found = cursor.fetchall()
        replacement = json.dumps(PURGED_TEXT)[1:-1]
        for event_id, before, after in found:
            for text in quoted:
                before = before and before.replace(text, replacement)
                after = after and after.replace(text, replacement)
            cursor.execute(
                f"UPDATE {events} SET before = %s::jsonb, after = %s::jsonb WHERE id = %s",
                [before, after, event_id],
            )


def purge_old_trash(days: int, *, now: datetime | None = None, chunk: int = 1000) -> int:
    """Purge what has been in the trash more than ``days`` days; the number purged."""
    cutoff = (now or timezone.now()) - timedelta(days=days)
    purged = 0
    while True:
        ids = list(
            Memory.objects.in_trash()
            .filter(deleted_at__lt=cutoff)
            .order_by("pk")
            .values_list("pk", flat=True)[:chunk]
        )
        if not ids:
            return purged
        purged += memories_purge(memories=Memory.objects.filter(pk__in=ids).only("pk"))
