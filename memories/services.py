"""Every write to a memory, each recording a MemoryEvent (built and saved by
``memories.events``).

Access checks happen before these are called (views and the API ask
``memories.permissions``); services trust their caller and keep
the data consistent: a stale revision is refused, and each change records who
made it and the state before and after.

A single change (``memory_update``, ``memory_delete``…) and the batched writers
(``_set_state_of_many``, ``memories_create``, ``MemoryWrites`` for a job's many changes) all
build their events with ``events.build_event`` from the memory's ``snapshot()`` before and
after the change, and insert many at once with ``events.save_events``. Deleting for good is
``memories.purge``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Required, TypedDict, Unpack

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts.models import MemorySettings
from memories.duplicates import find_duplicate, replaced_by
from memories.events import (
    INSERT_EVENTS_SQL,
    build_event,
    events_rows,
    json_rows,
    json_rows_sql,
    record_event,
    save_events,
)
from memories.gate import NeverRemember, never_remember_rule
from memories.kinds import guess_kind, read_statement
from memories.models import (
    DEFAULT_IMPORTANCE,
    STATE_CONDITIONS,
    EventAction,
    Kind,
    Memory,
    MemoryEvent,
    MemoryQuerySet,
    Origin,
    Scope,
    Status,
)
from memories.sensitive import screen
from teams.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from conversations.models import Conversation
    from memories.memory_files import ImportPlan

EDITABLE_FIELDS = ("content", "kind", "tags", "importance", "confidence", "pinned")


class MemoryConflict(Exception):
    """The memory changed since the caller read it; nothing was written."""

    def __init__(self, current: Memory):
        super().__init__(f"Memory {current.pk} is at revision {current.revision}.")
        self.current = current


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Trimmed, lower-cased, de-duplicated tags in their first order."""
    seen: dict[str, None] = {}
    for tag in tags:
        tag = tag.strip().lower().lstrip("#")[:50]
        if tag:
            seen.setdefault(tag, None)
    return list(seen)


class NewMemory(TypedDict, total=False):
    """What a new memory may be given; only ``owner`` and ``content`` are required."""

    owner: Required[User]
    content: Required[str]
    kind: str
    scope: str
    project: Project | None
    conversation: Conversation | None
    tags: Iterable[str]
    importance: float | None
    confidence: float
    origin: str
    pinned: bool
    status: str
    evidence: list[dict[str, Any]] | None
    metadata: dict[str, Any] | None
    valid_from: datetime | None


def new_memory(**fields: Unpack[NewMemory]) -> Memory:
    """A new memory, cleaned and with its kind's default importance, not saved yet. Text its
    owner never wants remembered raises NeverRemember (``gate.never_remember_rule``)."""
    rule = never_remember_rule(fields["content"], never_remember_rules(fields["owner"]))
    if rule:
        raise NeverRemember(rule)
    kind = fields.get("kind", Kind.FACT)
    scope = fields.get("scope", Scope.USER)
    importance = fields.get("importance")
    memory = Memory(
        owner=fields["owner"],
        content=screen(fields["content"].strip()),
        kind=kind,
        scope=scope,
        project=fields.get("project") if scope == Scope.PROJECT else None,
        conversation=fields.get("conversation"),
        tags=clean_tags(fields.get("tags", ())),
        importance=DEFAULT_IMPORTANCE[Kind(kind)] if importance is None else importance,
        confidence=fields.get("confidence", 0.8),
        origin=fields.get("origin", Origin.MANUAL),
        pinned=fields.get("pinned", False),
        status=fields.get("status", Status.ACTIVE),
        evidence=fields.get("evidence") or [],
        metadata=fields.get("metadata") or {},
        valid_from=fields.get("valid_from") or timezone.now(),
    )
    memory.refresh_search_document()
    return memory


@transaction.atomic
def memory_create(
    *,
    actor: User | None = None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
    **fields: Unpack[NewMemory],
) -> Memory:
    """Save a new memory and its "created" event. One added by hand gets the subject and
    value extraction would read in it, and replaces what its pool said of the same attribute
    (``duplicates.replaced_by``), as an extracted one does."""
    memory = new_memory(**fields)
    if memory.origin != Origin.EXTRACTED and "subject" not in memory.metadata:
        subject, value = read_statement(memory.content)
        if subject:
            memory.metadata = {**memory.metadata, "subject": subject, "value": value}
    memory.save()
    record_event(
        memory, EventAction.CREATED, actor=actor, actor_label=actor_label, before=None, batch=batch
    )
    if memory.origin != Origin.EXTRACTED and memory.status == Status.ACTIVE:
        metadata = memory.metadata
        pool = _pool(memory.owner, memory.scope, memory.project).exclude(pk=memory.pk)
        for old in replaced_by(pool, metadata.get("subject", ""), metadata.get("value", "")):
            memory_supersede(old=old, new=memory, actor=actor, actor_label=actor_label, batch=batch)
    _enqueue_embedding([memory.pk])
    return memory


def never_remember_rules(owner: User) -> list[str]:
    """The owner's "Don't remember" list (their settings, as read with a run when it was)."""
    try:
        return owner.memory_settings.never_remember_rules
    except MemorySettings.DoesNotExist:
        return []


def _pool(owner: User, scope: str, project: Project | None) -> MemoryQuerySet:
    """The memories one is compared with: the owner's personal ones, or the project's."""
    if scope == Scope.PROJECT:
        return Memory.objects.filter(scope=Scope.PROJECT, project=project)
    return Memory.objects.filter(scope=Scope.USER, owner=owner)


def memory_remember(
    *,
    owner: User,
    content: str,
    kind: str = "",
    scope: str = Scope.USER,
    project: Project | None = None,
    actor: User | None = None,
    actor_label: str = "",
    origin: str = Origin.MANUAL,
    batch: uuid.UUID | None = None,
) -> tuple[Memory, bool]:
    """Add a memory by hand (the page's form, /remember, an import of saved memories)
    unless it is known already.

    Returns (memory, created): the near-duplicate found in the same pool (the owner's
    personal memories, or the project's) by extraction's own test
    (``duplicates.find_duplicate``) and False, or the new memory and True. Without a
    ``kind`` the memory gets the one extraction would read in it (``kinds.guess_kind``).
    Text that is only a secret raises SensitiveContent (``sensitive.screen``).
    """
    existing = find_duplicate(_pool(owner, scope, project), content)
    if existing is not None:
        return existing, False
    memory = memory_create(
        owner=owner,
        content=content,
        kind=kind or guess_kind(content),
        scope=scope,
        project=project,
        actor=actor,
        actor_label=actor_label,
        origin=origin,
        batch=batch,
    )
    return memory, True


@transaction.atomic
def memories_create(
    *,
    memories: list[Memory],
    actor: User | None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
) -> list[Memory]:
    """Save many new memories (from ``new_memory``) and their events in a few INSERTs.

    Importing thousands of memories must not cost thousands of round trips.
    """
    Memory.objects.bulk_create(memories, batch_size=1000)
    save_events(_creation_events(memories, actor=actor, actor_label=actor_label, batch=batch))
    _after_creation(memories)
    return memories


def _creation_events(
    memories: Iterable[Memory], *, actor: User | None, actor_label: str, batch: uuid.UUID | None
) -> list[MemoryEvent]:
    return [
        build_event(
            memory,
            EventAction.CREATED,
            actor=actor,
            actor_label=actor_label,
            before=None,
            batch=batch,
        )
        for memory in memories
    ]


def _after_creation(memories: list[Memory]) -> None:
    """What follows ``memory_create`` for one memory (an embedding job…), for many at once:
    the ids of a bulk creation are known only where it happened. Memories that come with
    their embedding (a job that had the vectors at hand) need no embedding job."""
    _enqueue_embedding([memory.pk for memory in memories if memory.embedding is None])


def _enqueue_embedding(memory_ids: list[int]) -> None:
    """Embed memories in a job once the write commits, never inside the request."""
    from django_q.tasks import async_task

    if memory_ids:
        transaction.on_commit(lambda: async_task("memories.jobs.embed_memories", memory_ids))


def _locked(memory: Memory) -> Memory:
    return Memory.objects.select_for_update().get(pk=memory.pk)


@transaction.atomic
def memory_update(
    *,
    memory: Memory,
    changes: dict[str, Any],
    expected_revision: int | None,
    actor: User | None,
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
        changes = {**changes, "content": screen(str(changes["content"]).strip())}
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
    record_event(current, action, actor=actor, actor_label=actor_label, before=before, batch=batch)
    if "content" in changed:
        _enqueue_embedding([current.pk])
    return current


def memory_set_pinned(
    *, memory: Memory, pinned: bool, actor: User | None, actor_label: str = ""
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
    actor: User | None,
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
    record_event(current, action, actor=actor, actor_label=actor_label, before=before, batch=batch)
    return current


def memory_delete(
    *,
    memory: Memory,
    actor: User | None,
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
    actor: User | None,
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


def memory_accept(*, memory: Memory, actor: User | None, actor_label: str = "") -> Memory:
    return _set_state(
        memory,
        EventAction.ACCEPTED,
        {"status": Status.ACTIVE},
        actor=actor,
        actor_label=actor_label,
        batch=None,
    )


def memory_reject(*, memory: Memory, actor: User | None, actor_label: str = "") -> Memory:
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
    *,
    old: Memory,
    new: Memory,
    actor: User | None,
    actor_label: str = "",
    batch: uuid.UUID | None = None,
) -> Memory:
    """``new`` replaces ``old``: the old one stays, valid until the new one began."""
    return _set_state(
        old,
        EventAction.SUPERSEDED,
        {"valid_until": new.valid_from, "superseded_by_id": new.pk},
        actor=actor,
        actor_label=actor_label,
        batch=batch,
    )


def _merge_evidence_into(memory: Memory, evidence: dict[str, Any], confidence_boost: float) -> None:
    memory.evidence = [*memory.evidence, evidence]
    _boost_confidence(memory, confidence_boost)


def _boost_confidence(memory: Memory, confidence_boost: float) -> None:
    memory.confidence = min(1.0, round(memory.confidence + confidence_boost, 4))
    memory.revision += 1


@transaction.atomic
def memory_review_accept(
    *,
    memory: Memory,
    actor: User | None,
    changes: dict[str, Any] | None = None,
    actor_label: str = "",
) -> Memory:
    """Accept a pending memory, edited first when ``changes`` are given.

    An extracted memory that contradicted an older one names it in
    ``metadata["supersedes"]``; accepting it supersedes that memory now.
    """
    if changes:
        memory = memory_update(
            memory=memory,
            changes=changes,
            expected_revision=None,
            actor=actor,
            actor_label=actor_label,
        )
    memory = memory_accept(memory=memory, actor=actor, actor_label=actor_label)
    superseded_id = memory.metadata.get("supersedes")
    if superseded_id:
        old = Memory.objects.filter(pk=superseded_id, superseded_by__isnull=True).first()
        if old is not None:
            memory_supersede(old=old, new=memory, actor=actor, actor_label=actor_label)
    return memory


def _set_state_of_many(
    memories: Iterable[Memory],
    action: str,
    fields: dict[str, Any],
    *,
    applies: Q,
    actor: User | None,
    actor_label: str,
) -> uuid.UUID:
    """One state change to many memories as a batch: one UPDATE, one INSERT of events.

    Clearing thousands of memories must not cost thousands of round trips;
    each memory still gets its event with the state before and after.
    """
    batch = uuid.uuid4()
    with transaction.atomic():
        locked = list(
            Memory.objects.select_for_update()
            .filter(applies, pk__in=[memory.pk for memory in memories])
            .order_by("pk")
        )
        now = timezone.now()
        events = []
        for memory in locked:
            before = memory.snapshot()
            for field, value in fields.items():
                setattr(memory, field, value)
            memory.revision += 1
            events.append(
                build_event(
                    memory, action, actor=actor, actor_label=actor_label, before=before, batch=batch
                )
            )
        Memory.objects.filter(pk__in=[memory.pk for memory in locked]).update(
            **fields, revision=F("revision") + 1, updated_at=now
        )
        save_events(events)
    return batch


def memories_delete(
    *, memories: Iterable[Memory], actor: User | None, actor_label: str = ""
) -> uuid.UUID:
    """Trash several memories as one batch; ``memory_undo_batch`` brings exactly them back."""
    return _set_state_of_many(
        memories,
        EventAction.DELETED,
        {"deleted_at": timezone.now()},
        applies=~STATE_CONDITIONS["trash"],
        actor=actor,
        actor_label=actor_label,
    )


# Fields an undo puts back from an event's "before" state.
_UNDOABLE = ("content", "kind", "tags", "importance", "confidence", "pinned", "status")
_UNDOABLE_TIMES = ("deleted_at", "forgotten_at", "valid_until")


def _state_before(memory: Memory, before: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``memory`` that differ from the snapshot ``before``, at their old values."""
    wanted: dict[str, Any] = {field: before[field] for field in _UNDOABLE}
    for field in _UNDOABLE_TIMES:
        value = before[field]
        wanted[field] = parse_datetime(value) if value else None
    wanted["superseded_by_id"] = before["superseded_by_id"]
    return {field: value for field, value in wanted.items() if getattr(memory, field) != value}


def memory_undo_batch(
    *, batch: uuid.UUID, actor: User | None, actor_label: str = ""
) -> list[Memory]:
    """Reverse every change of a batch: each memory goes back to its state before it.

    A memory the batch created is moved to the trash. The undo itself is
    recorded as new events (in a batch of its own), so history stays complete.
    Memories that go back the same way (a whole "clear all") share one UPDATE,
    and the events are one INSERT: undoing 10,000 memories is a few queries.
    """
    return memory_undo_batches(batches=[batch], actor=actor, actor_label=actor_label)


@transaction.atomic
def memory_undo_batches(
    *, batches: Sequence[uuid.UUID], actor: User | None, actor_label: str = ""
) -> list[Memory]:
    """As ``memory_undo_batch``, for several batches undone together (an import's: every
    extraction run over its conversations): each memory goes back to its state before the
    first of them that changed it."""
    first_before: dict[int, dict[str, Any] | None] = {}
    for memory_id, before in (
        MemoryEvent.objects.filter(batch__in=list(batches))
        .order_by("created_at", "id")
        .values_list("memory_id", "before")
    ):
        first_before.setdefault(memory_id, before)
    locked = Memory.objects.select_for_update().filter(pk__in=list(first_before)).order_by("pk")
    by_id = {memory.pk: memory for memory in locked}
    now = timezone.now()
    undo_batch = uuid.uuid4()
    # Memories that go back the same way share an UPDATE: their ids by their changes.
    groups: dict[str, tuple[dict[str, Any], list[int]]] = {}
    events: list[MemoryEvent] = []
    restored: list[Memory] = []
    for memory_id, before in first_before.items():
        memory = by_id[memory_id]
        restored.append(memory)
        previous = memory.snapshot()
        if before is None:
            if memory.deleted_at is not None:
                continue  # Already in the trash: nothing to change, nothing to record.
            changes: dict[str, Any] = {"deleted_at": now}
            action = EventAction.DELETED
        else:
            changes = _state_before(memory, before)
            action = (
                EventAction.RESTORED
                if previous["deleted_at"] or previous["forgotten_at"]
                else EventAction.EDITED
            )
        for field, value in changes.items():
            setattr(memory, field, value)
        if {"content", "tags"} & set(changes):
            memory.refresh_search_document()
            changes["search_document"] = memory.search_document
        memory.revision += 1
        memory.updated_at = now
        groups.setdefault(repr(sorted(changes.items())), (changes, []))[1].append(memory_id)
        events.append(
            build_event(
                memory,
                action,
                actor=actor,
                actor_label=actor_label,
                before=previous,
                batch=undo_batch,
            )
        )
    for changes, ids in groups.values():
        Memory.objects.filter(pk__in=ids).update(
            **changes, revision=F("revision") + 1, updated_at=now
        )
        if "content" in changes:
            _enqueue_embedding(ids)
    save_events(events)
    return restored


@transaction.atomic
def memories_import(
    *,
    plan: ImportPlan,
    owner: User,
    project: Project | None,
    actor: User | None,
    actor_label: str = "",
) -> uuid.UUID:
    """Apply an import plan (see memory_files.py) as one batch that ``memory_undo_batch`` reverses.

    New memories belong to ``owner`` (in ``project`` when given) with origin
    ``imported``; updates refuse a memory that changed since the plan was made
    (MemoryConflict), and then nothing of the batch is written.
    """
    batch = uuid.uuid4()
    memories_create(
        memories=[
            new_memory(
                owner=owner,
                content=item.content,
                kind=item.kind,
                scope=Scope.PROJECT if project else Scope.USER,
                project=project,
                tags=item.tags,
                importance=item.importance,
                origin=Origin.IMPORTED,
                pinned=item.pinned,
            )
            for item in plan.to_add
        ],
        actor=actor,
        actor_label=actor_label,
        batch=batch,
    )
    for update in plan.to_update:
        memory_update(
            memory=update.memory,
            changes=update.changes,
            expected_revision=update.memory.revision,
            actor=actor,
            actor_label=actor_label,
            batch=batch,
        )
    return batch


def memories_restore(
    *, memories: Iterable[Memory], actor: User | None, actor_label: str = ""
) -> uuid.UUID:
    """Bring several memories back from the trash or forgetting, as one undoable batch."""
    return _set_state_of_many(
        memories,
        EventAction.RESTORED,
        {"deleted_at": None, "forgotten_at": None},
        applies=STATE_CONDITIONS["trash"] | STATE_CONDITIONS["forgotten"],
        actor=actor,
        actor_label=actor_label,
    )


def memories_change_kind(
    *, memories: Iterable[Memory], kind: str, actor: User | None, actor_label: str = ""
) -> uuid.UUID:
    """Give several memories another kind, as one undoable batch."""
    batch = uuid.uuid4()
    with transaction.atomic():
        for memory in memories:
            memory_update(
                memory=memory,
                changes={"kind": Kind(kind)},
                expected_revision=None,
                actor=actor,
                actor_label=actor_label,
                batch=batch,
            )
    return batch


class MemoryWrites:
    """A job's writes to many memories, each recorded as its own MemoryEvent, sent together.

    The services above each take a savepoint, lock one row and send two or
    three statements, which is right for a person's action on a page. A job
    that changes several memories at once (an extraction run) queues the same
    changes here in order; ``save()`` then locks the existing memories the
    changes touch (in id order, so concurrent jobs cannot deadlock), applies
    the changes to their current state exactly as the single services would,
    and writes the new memories, the changed rows and all the events in one
    statement. Merged evidence is appended in the database: a memory found
    again and again has a long evidence list, neither read nor sent back each time.
    Call it inside the caller's transaction.
    """

    # The new memories (every stored field bulk_create would write), the fields merging and
    # superseding change and the events, written from JSON rows in one statement: the SQL
    # of bulk_create, and of bulk_update's CASE per field and row, costs more to build than
    # to run, and each would take a round trip of its own. A changed row's evidence is what
    # the changes add to the memory's.
    _NEW_FIELDS = [field for field in Memory._meta.concrete_fields if not field.generated]
    _CHANGED_FIELDS = (
        "id",
        "confidence",
        "revision",
        "updated_at",
        "valid_until",
        "superseded_by_id",
    )
    _WRITE_SQL = f"""
        WITH created AS (
            INSERT INTO {Memory._meta.db_table}
                ({", ".join(connection.ops.quote_name(f.column or "") for f in _NEW_FIELDS)})
            SELECT * FROM {json_rows_sql(Memory, [f.attname for f in _NEW_FIELDS], "n")}
        ), changed AS (
            UPDATE {Memory._meta.db_table} m
            SET confidence = v.confidence, evidence = m.evidence || v.evidence,
                revision = v.revision, updated_at = v.updated_at, valid_until = v.valid_until,
                superseded_by_id = v.superseded_by_id
            FROM {json_rows_sql(Memory, (*_CHANGED_FIELDS, "evidence"), "v")}
            WHERE m.id = v.id
        )
        {INSERT_EVENTS_SQL}
    """
    # What the changes read and the events' snapshots show (Memory.snapshot()), in the
    # model's field order (Memory.from_db), locked in id order.
    _LOCKED_FIELDS = [
        field.attname
        for field in Memory._meta.concrete_fields
        if field.attname
        in {
            "id",
            "content",
            "kind",
            "scope",
            "project_id",
            "tags",
            "importance",
            "confidence",
            "pinned",
            "status",
            "deleted_at",
            "forgotten_at",
            "valid_from",
            "valid_until",
            "superseded_by_id",
            "revision",
        }
    ]
    _LOCK_SQL = (
        f"SELECT {', '.join(_LOCKED_FIELDS)} FROM {Memory._meta.db_table} "
        "WHERE id = ANY(%s) ORDER BY id FOR UPDATE"
    )
    _RESERVE_IDS_SQL = (
        "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)"
    )

    def __init__(self, *, actor_label: str, batch: uuid.UUID | None):
        self.actor_label = actor_label
        self.batch = batch
        self._new: list[Memory] = []
        self._steps: list[tuple[str, Memory, Any]] = []

    def create(self, memory: Memory, *, supersedes: Memory | None = None) -> None:
        """Save ``memory`` (from ``new_memory``); a pending one names what it will supersede."""
        self._new.append(memory)
        self._steps.append(("create", memory, supersedes))

    def merge_evidence(
        self, memory: Memory, *, evidence: dict[str, Any], confidence_boost: float
    ) -> None:
        """The same statement was found again: more confidence (at most 1.0) and its evidence kept."""
        self._steps.append(("merge", memory, (evidence, confidence_boost)))

    def supersede(self, *, old: Memory, new: Memory) -> None:
        """As ``memory_supersede``."""
        self._steps.append(("supersede", old, new))

    def note_rejected_again(self, memory: Memory) -> None:
        """Extraction proposed a memory a reviewer rejected: it stays rejected; the audit says so."""
        self._steps.append(("rejected_again", memory, None))

    def save(self) -> list[Memory]:
        """Write everything queued; the new memories, saved."""
        if not self._steps:
            return []
        current = self._reserve_ids_and_lock()
        for step, memory, supersedes in self._steps:
            if step == "create" and supersedes is not None and memory.status == Status.PENDING:
                memory.metadata["supersedes"] = supersedes.pk
        # The new memories' events show them as created, before this run's later changes;
        # the rows are inserted as those changes leave them.
        events = _creation_events(
            self._new, actor=None, actor_label=self.actor_label, batch=self.batch
        )
        new_ids = {memory.pk for memory in self._new}
        current.update((memory.pk, memory) for memory in self._new)
        now = timezone.now()
        changed: dict[int, Memory] = {}
        added_evidence: dict[int, list[dict[str, Any]]] = {}
        for step, target, detail in self._steps:
            if step == "create":
                continue
            memory = current[target.pk]
            before = memory.snapshot()
            batch = self.batch
            if step == "merge":
                evidence, confidence_boost = detail
                if memory.pk in new_ids:
                    _merge_evidence_into(memory, evidence, confidence_boost)
                else:
                    added_evidence.setdefault(memory.pk, []).append(evidence)
                    _boost_confidence(memory, confidence_boost)
                action = EventAction.MERGED
            elif step == "supersede":
                # A new memory superseded by an existing one (an older statement read late):
                # the existing one is named by its id and valid_from, and is not changed.
                new = current.get(detail.pk, detail)
                if memory.superseded_by_id == new.pk and memory.valid_until == new.valid_from:
                    continue
                memory.valid_until, memory.superseded_by_id = new.valid_from, new.pk
                memory.revision += 1
                action = EventAction.SUPERSEDED
            else:
                # The row stays as it was, and undoing the run leaves the note.
                action, batch = EventAction.REJECTED, None
            if step != "rejected_again":
                memory.updated_at = now
                changed[memory.pk] = memory
            events.append(
                build_event(
                    memory,
                    action,
                    actor=None,
                    actor_label=self.actor_label,
                    before=before,
                    batch=batch,
                )
            )
        self._write(
            [memory for pk, memory in changed.items() if pk not in new_ids], added_evidence, events
        )
        _after_creation(self._new)
        return self._new

    def _write(
        self,
        rows: list[Memory],
        added_evidence: dict[int, list[dict[str, Any]]],
        events: list[MemoryEvent],
    ) -> None:
        """Insert the new memories, update the changed ``rows`` and insert the events."""
        new = [
            # What bulk_create sends: each field's value as the field prepares it for saving.
            {f.attname: f.get_prep_value(f.pre_save(memory, add=True)) for f in self._NEW_FIELDS}
            for memory in self._new
        ]
        changed = [
            {
                **{field: getattr(m, field) for field in self._CHANGED_FIELDS},
                "evidence": added_evidence.get(m.pk, []),
            }
            for m in rows
        ]
        with connection.cursor() as cursor:
            cursor.execute(
                self._WRITE_SQL, [json_rows(new), json_rows(changed), events_rows(events)]
            )
        for memory in self._new:
            memory._state.adding, memory._state.db = False, connection.alias

    def _reserve_ids_and_lock(self) -> dict[int, Memory]:
        """Ids for the new memories first, so a pending one can name another it will
        supersede; and the existing memories the changes touch, locked, by id."""
        # The new memories have no id yet; every other target exists.
        existing = sorted({target.pk for _step, target, _detail in self._steps} - {None})
        with connection.cursor() as cursor:
            if self._new:
                cursor.execute(self._RESERVE_IDS_SQL, [Memory._meta.db_table, len(self._new)])
                for memory, (pk,) in zip(self._new, cursor.fetchall(), strict=True):
                    memory.pk = pk
            if not existing:
                return {}
            cursor.execute(self._LOCK_SQL, [existing])
            locked = [Memory.from_db(connection.alias, self._LOCKED_FIELDS, row) for row in cursor]
        return {memory.pk: memory for memory in locked}


@transaction.atomic
def project_memories_hand_over(*, owner: User) -> int:
    """Before ``owner``'s account is erased: the project memories they created stay with
    their projects, now owned by each team's owner (``teams.services.team_owner``), with
    their evidence (quotes of the leaver's conversations) dropped; the number handed over.

    Neither field is in a snapshot (see BOOKKEEPING_FIELDS' rule), so no event is recorded.
    A project without an owner to take them (its team is being deleted) keeps them until
    the team goes.
    """
    from teams.services import team_owner

    handed = 0
    for project in Project.objects.filter(memories__owner=owner).distinct():
        successor = team_owner(project.team, excluding=owner)
        if successor is None:
            continue
        handed += Memory.objects.filter(owner=owner, scope=Scope.PROJECT, project=project).update(
            owner=successor, evidence=[], conversation=None
        )
    return handed
