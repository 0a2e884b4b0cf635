"""Every write to a memory, each recording a MemoryEvent.

Access checks happen before these are called (views and the API use
``Memory.objects.writable_by(user)``); services trust their caller and keep
the data consistent: a stale revision is refused, and each change records who
made it and the state before and after.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts.models import Project
from memoryapp.models import (
    DEFAULT_IMPORTANCE,
    EventAction,
    Kind,
    Memory,
    MemoryEvent,
    Origin,
    Scope,
    Status,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from memoryapp.models import Conversation

EDITABLE_FIELDS = ("content", "kind", "tags", "importance", "confidence", "pinned")


class MemoryConflict(Exception):
    """The memory changed since the caller read it; nothing was written."""

    def __init__(self, current: Memory):
        super().__init__(f"Memory {current.pk} is at revision {current.revision}.")
        self.current = current


def _record(
    memory: Memory,
    action: str,
    *,
    actor: AbstractBaseUser | None,
    actor_label: str = "",
    before: dict[str, Any] | None,
    batch: uuid.UUID | None = None,
) -> MemoryEvent:
    return MemoryEvent.objects.create(
        memory=memory,
        action=action,
        actor=actor,
        actor_label=actor_label,
        before=before,
        after=memory.snapshot(),
        batch=batch,
    )


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Trimmed, lower-cased, de-duplicated tags in their first order."""
    seen: dict[str, None] = {}
    for tag in tags:
        tag = tag.strip().lower().lstrip("#")[:50]
        if tag:
            seen.setdefault(tag, None)
    return list(seen)


@transaction.atomic
def memory_create(
    *,
    owner: AbstractBaseUser,
    content: str,
    kind: str = Kind.FACT,
    scope: str = Scope.USER,
    project: Project | None = None,
    conversation: Conversation | None = None,
    tags: Iterable[str] = (),
    importance: float | None = None,
    confidence: float = 0.8,
    origin: str = Origin.MANUAL,
    pinned: bool = False,
    status: str = Status.ACTIVE,
    evidence: list[dict[str, Any]] | None = None,
    metadata: dict[str, Any] | None = None,
    valid_from: datetime | None = None,
    actor: AbstractBaseUser | None = None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
) -> Memory:
    memory = Memory(
        owner=owner,
        content=content.strip(),
        kind=kind,
        scope=scope,
        project=project if scope == Scope.PROJECT else None,
        conversation=conversation,
        tags=clean_tags(tags),
        importance=DEFAULT_IMPORTANCE[Kind(kind)] if importance is None else importance,
        confidence=confidence,
        origin=origin,
        pinned=pinned,
        status=status,
        evidence=evidence or [],
        metadata=metadata or {},
        valid_from=valid_from or timezone.now(),
    )
    memory.save()
    _record(
        memory, EventAction.CREATED, actor=actor, actor_label=actor_label, before=None, batch=batch
    )
    _enqueue_embedding(memory)
    return memory


def _enqueue_embedding(memory: Memory) -> None:
    """Embed the memory in a job once the write commits, never inside the request."""
    from django_q.tasks import async_task

    memory_id = memory.pk
    transaction.on_commit(lambda: async_task("memoryapp.jobs.embed_memory", memory_id))


def _locked(memory: Memory) -> Memory:
    return Memory.objects.select_for_update().get(pk=memory.pk)


@transaction.atomic
def memory_update(
    *,
    memory: Memory,
    changes: dict[str, Any],
    expected_revision: int | None,
    actor: AbstractBaseUser | None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
) -> Memory:
    """Apply ``changes`` (a subset of EDITABLE_FIELDS) unless the memory moved on.

    ``expected_revision`` is the revision the caller read; when it is stale the
    update raises MemoryConflict carrying the current memory, and nothing changes.
    """
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"Not editable: {', '.join(sorted(unknown))}")
    current = _locked(memory)
    if expected_revision is not None and current.revision != expected_revision:
        raise MemoryConflict(current)
    before = current.snapshot()
    if "tags" in changes:
        changes = {**changes, "tags": clean_tags(changes["tags"])}
    if "content" in changes:
        changes = {**changes, "content": str(changes["content"]).strip()}
    changed = {field: value for field, value in changes.items() if getattr(current, field) != value}
    if not changed:
        return current
    for field, value in changed.items():
        setattr(current, field, value)
    current.revision += 1
    current.save(update_fields=[*changed, "revision", "updated_at"])
    action = EventAction.EDITED
    if set(changed) == {"pinned"}:
        action = EventAction.PINNED if current.pinned else EventAction.UNPINNED
    _record(current, action, actor=actor, actor_label=actor_label, before=before, batch=batch)
    if "content" in changed:
        _enqueue_embedding(current)
    return current


def memory_set_pinned(
    *, memory: Memory, pinned: bool, actor: AbstractBaseUser | None, actor_label: str = ""
) -> Memory:
    return memory_update(
        memory=memory,
        changes={"pinned": pinned},
        expected_revision=None,
        actor=actor,
        actor_label=actor_label,
    )


@transaction.atomic
def _set_state(
    memory: Memory,
    action: str,
    fields: dict[str, Any],
    *,
    actor: AbstractBaseUser | None,
    actor_label: str,
    batch: uuid.UUID | None,
) -> Memory:
    current = _locked(memory)
    if all(getattr(current, field) == value for field, value in fields.items()):
        return current
    before = current.snapshot()
    for field, value in fields.items():
        setattr(current, field, value)
    current.revision += 1
    current.save(update_fields=[*fields, "revision", "updated_at"])
    _record(current, action, actor=actor, actor_label=actor_label, before=before, batch=batch)
    return current


def memory_delete(
    *,
    memory: Memory,
    actor: AbstractBaseUser | None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
) -> Memory:
    """Move to the trash (soft delete): restorable, never injected."""
    return _set_state(
        memory,
        EventAction.DELETED,
        {"deleted_at": memory.deleted_at or timezone.now()},
        actor=actor,
        actor_label=actor_label,
        batch=batch,
    )


def memory_restore(
    *,
    memory: Memory,
    actor: AbstractBaseUser | None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
) -> Memory:
    """Bring back from the trash or from forgetting."""
    return _set_state(
        memory,
        EventAction.RESTORED,
        {"deleted_at": None, "forgotten_at": None},
        actor=actor,
        actor_label=actor_label,
        batch=batch,
    )


def memory_accept(
    *, memory: Memory, actor: AbstractBaseUser | None, actor_label: str = ""
) -> Memory:
    return _set_state(
        memory,
        EventAction.ACCEPTED,
        {"status": Status.ACTIVE},
        actor=actor,
        actor_label=actor_label,
        batch=None,
    )


def memory_reject(
    *, memory: Memory, actor: AbstractBaseUser | None, actor_label: str = ""
) -> Memory:
    return _set_state(
        memory,
        EventAction.REJECTED,
        {"status": Status.REJECTED},
        actor=actor,
        actor_label=actor_label,
        batch=None,
    )


@transaction.atomic
def memory_supersede(
    *, old: Memory, new: Memory, actor: AbstractBaseUser | None, actor_label: str = ""
) -> Memory:
    """``new`` replaces ``old``: the old one stays, valid until the new one began."""
    return _set_state(
        old,
        EventAction.SUPERSEDED,
        {"valid_until": new.valid_from, "superseded_by_id": new.pk},
        actor=actor,
        actor_label=actor_label,
        batch=None,
    )


def memories_delete(
    *, memories: Iterable[Memory], actor: AbstractBaseUser | None, actor_label: str = ""
) -> uuid.UUID:
    """Trash several memories as one batch; ``memory_undo_batch`` brings exactly them back."""
    batch = uuid.uuid4()
    with transaction.atomic():
        for memory in memories:
            if memory.deleted_at is None:
                memory_delete(memory=memory, actor=actor, actor_label=actor_label, batch=batch)
    return batch


# Fields an undo puts back from an event's "before" state.
_UNDOABLE = ("content", "kind", "tags", "importance", "confidence", "pinned", "status")
_UNDOABLE_TIMES = ("deleted_at", "forgotten_at", "valid_until")


@transaction.atomic
def memory_undo_batch(
    *, batch: uuid.UUID, actor: AbstractBaseUser | None, actor_label: str = ""
) -> list[Memory]:
    """Reverse every change of a batch: each memory goes back to its state before it.

    A memory the batch created is moved to the trash. The undo itself is
    recorded as new events (in a batch of its own), so history stays complete.
    """
    events = list(
        MemoryEvent.objects.filter(batch=batch)
        .select_related("memory")
        .order_by("created_at", "id")
    )
    first_before: dict[int, dict[str, Any] | None] = {}
    for event in events:
        first_before.setdefault(event.memory_id, event.before)
    undo_batch = uuid.uuid4()
    restored: list[Memory] = []
    for memory_id, before in first_before.items():
        memory = _locked(Memory(pk=memory_id))
        if before is None:
            restored.append(
                memory_delete(memory=memory, actor=actor, actor_label=actor_label, batch=undo_batch)
            )
            continue
        previous = memory.snapshot()
        for field in _UNDOABLE:
            setattr(memory, field, before[field])
        for field in _UNDOABLE_TIMES:
            value = before[field]
            setattr(memory, field, parse_datetime(value) if value else None)
        memory.superseded_by_id = before["superseded_by_id"]
        memory.revision += 1
        memory.save()
        if previous["content"] != memory.content:
            _enqueue_embedding(memory)
        action = (
            EventAction.RESTORED
            if previous["deleted_at"] or previous["forgotten_at"]
            else EventAction.EDITED
        )
        _record(
            memory, action, actor=actor, actor_label=actor_label, before=previous, batch=undo_batch
        )
        restored.append(memory)
    return restored
