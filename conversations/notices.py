"""What extraction changed in a user's memories since they last looked ("Memory updated").

Each extraction run's changes share one MemoryEvent batch (see
``extraction.runs.run_batch``), so a notice is a batch and its Undo undoes
exactly that run. An undo is recorded with ``actor_label="undo:<batch>"``,
which is how an undone notice knows to disappear.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.utils import timezone

from accounts.models import MemorySettings
from conversations.extraction.reconcile import ACTOR_LABEL
from memories.models import EventAction, Memory, MemoryEvent, Status
from memories.permissions import batch_undoable_by

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# What each event of an extraction batch means to the user.
CHANGE_LABELS = {
    EventAction.CREATED: "added",
    EventAction.MERGED: "confirmed",
    EventAction.SUPERSEDED: "replaced",
}


@dataclass
class Notice:
    batch: uuid.UUID
    created_at: datetime
    changes: list[tuple[str, Memory]] = field(default_factory=list)


def undo_label(batch: uuid.UUID | str) -> str:
    return f"undo:{batch}"


def extraction_notices(user: User) -> list[Notice]:
    """Extraction batches that changed ``user``'s memories since notices_seen_at, newest first."""
    seen_at = MemorySettings.for_user(user).notices_seen_at
    events = (
        MemoryEvent.objects.filter(
            actor_label=ACTOR_LABEL,
            batch__isnull=False,
            created_at__gt=seen_at,
            memory__owner=user,
            action__in=list(CHANGE_LABELS),
        )
        .select_related("memory")
        .order_by("created_at", "id")
    )
    undone = set(
        MemoryEvent.objects.filter(
            memory__owner=user, actor_label__startswith="undo:", created_at__gt=seen_at
        ).values_list("actor_label", flat=True)
    )
    notices: dict[uuid.UUID, Notice] = {}
    for event in events:
        assert event.batch is not None
        if undo_label(event.batch) in undone:
            continue
        notice = notices.setdefault(event.batch, Notice(event.batch, event.created_at))
        change = _change_now(event)
        if change:
            notice.changes.append((change, event.memory))
    found = [notice for notice in notices.values() if notice.changes]
    return sorted(found, key=lambda notice: notice.created_at, reverse=True)


def _change_now(event: MemoryEvent) -> str:
    """What the event means to the user today: a memory added for review is "pending"
    until accepted, and one rejected or deleted since is no news at all ("")."""
    change = CHANGE_LABELS[EventAction(event.action)]
    memory = event.memory
    if change != "added":
        return change
    if memory.deleted_at is not None or memory.status == Status.REJECTED:
        return ""
    return "pending" if memory.status == Status.PENDING else change


def faded_this_week(user: User) -> int:
    """How many of the user's memories the forgetting job faded in the last 7 days."""
    return (
        Memory.objects.forgotten()
        .filter(owner=user, forgotten_at__gte=timezone.now() - timedelta(days=7))
        .count()
    )


def batch_belongs_to(batch: uuid.UUID, user: User) -> bool:
    """The batch is an extraction's and every memory it touched is the user's, and one
    they may still change (not in a project they now only view, nor an archived one)."""
    return batch_undoable_by(user, batch, made_by_job=ACTOR_LABEL)
