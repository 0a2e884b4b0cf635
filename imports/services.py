"""Imports, from an upload to stored conversations and memories, and their Undo.

1. ``create_import`` keeps the upload in the import's folder (IMPORTS_DIR/<id>) and asks
   the job worker to read it (``analysing``): the preview, and a normalised copy
   (``analysis``). A file that cannot be imported ends ``invalid``; nothing was written.
2. ``start_import`` records the person's choices (keep the conversations? build memories
   from them?) and the worker imports (``importing``), phase after phase:
   ``store`` (the conversations and their messages through
   ``conversations.services.add_conversations``, stored as any chat app's; the saved
   memories through ``memories.services.memory_remember``, as any memory added by hand),
   ``extract`` (the extraction runs over the backlog, one conversation after the other
   from the oldest, so dates and superseding follow what happened when) or ``embed``
   (past turns made searchable by meaning when no extraction reads them), then ``done``.
3. ``undo_import`` (``undoing``, then ``undone``) reverses every memory change made from
   the import's conversations and saved memories, and deletes its conversations.

The worker works in steps (``run_import``) of at most STEP_SECONDS, each going on with the
next as a new job, and each batch it writes commits with its progress on the import row,
checked as it is written: two workers never both write a batch, and a worker that dies
loses only its uncommitted batch. An active import whose worker stopped writing progress
(killed, crashed, restarted) is taken up again by the check every minute
(``resume_stalled``): it goes on where it stopped. A step that fails is tried again the
same way, MAX_FAILURES times, then the import is ``failed``: what it stored stays, to be
tried again or undone.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Max, Sum
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.extraction.runs import execute_run, run_batch
from conversations.models import Conversation, ExtractionRun, ExtractionTrigger, Message
from conversations.services import NewConversation, NewMessage, add_conversations
from imports import errors
from imports.analysis import analyse_conversations, analyse_memories, imported_id
from imports.errors import ImportNotAllowed, ImportRefused
from imports.formats import ExportConversation, read_memory_text
from imports.models import ACTIVE_STATUSES, Import, ImportStatus, Phase, Source
from memories.gate import NeverRemember
from memories.models import Origin
from memories.sensitive import SensitiveContent, redact
from memories.services import memory_remember, memory_undo_batches

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import UploadedFile

logger = logging.getLogger(__name__)

RUN_TASK = "imports.jobs.run_import"
# A step's length; the worker's timeout (Q_TIMEOUT) must leave it room.
STEP_SECONDS = 20.0
# An active import without progress for this long has lost its worker.
STALL_SECONDS = 60
MAX_FAILURES = 5
# A preview nobody confirmed is discarded after this many days.
PREVIEW_DAYS = 7
# What one committed batch holds.
STORE_BATCH_MESSAGES = 2_000
STORE_BATCH_CONVERSATIONS = 100
MEMORIES_BATCH = 25
EMBED_BATCH = 500
# The advisory locks: one user's imports start one at a time; one import's steps run
# one at a time.
_USER_LOCK = 5_000_043
_IMPORT_LOCK = 5_000_044
UPLOAD_FILE = "upload"
COPY_FILE = "items.jsonl"
UNDO_ACTOR_LABEL = "import undo"


# Asking ------------------------------------------------------------------------------


def import_dir(job: Import) -> Path:
    return Path(settings.IMPORTS_DIR) / str(job.pk)


def memory_unavailable(owner: User) -> str:
    """Why no memories can be built for ``owner`` now (an ImportNotAllowed code), or ""."""
    memory_settings = MemorySettings.for_user(owner)
    if not memory_settings.memory_enabled:
        return errors.MEMORY_OFF
    if memory_settings.privacy_paused:
        return errors.MEMORY_PAUSED
    return ""


def _check_choices(job: Import, *, keep_conversations: bool, build_memories: bool) -> None:
    if job.imports_conversations and not (keep_conversations or build_memories):
        raise ImportNotAllowed(errors.NOTHING_CHOSEN)
    if job.imports_conversations and build_memories and (reason := memory_unavailable(job.owner)):
        raise ImportNotAllowed(reason)


def create_import(
    *,
    owner: User,
    source: str,
    upload: UploadedFile | None = None,
    text: str = "",
    keep_conversations: bool = True,
    build_memories: bool = True,
    start_when_ready: bool = False,
) -> Import:
    """A new import of ``upload`` (or, for saved memories, the pasted ``text``), read by the
    worker next. A preview of ``owner``'s waiting for a choice is discarded; ImportNotAllowed
    while another import runs, ImportRefused for a file over IMPORT_MAX_BYTES."""
    size = (upload.size or 0) if upload is not None else len(text.encode())
    if size > settings.IMPORT_MAX_BYTES:
        raise ImportRefused(errors.FILE_TOO_LARGE, limit=settings.IMPORT_MAX_BYTES)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_USER_LOCK, owner.pk])
        if Import.objects.of(owner).filter(status__in=ACTIVE_STATUSES).exists():
            raise ImportNotAllowed(errors.BUSY)
        for waiting in Import.objects.of(owner).filter(status=ImportStatus.READY):
            discard_import(waiting)
        job = Import(
            owner=owner,
            source=source,
            file_name=PurePosixPath((upload.name or "") if upload else "").name[:255],
            file_size=size,
            bytes_total=size,
            keep_conversations=keep_conversations,
            build_memories=build_memories,
            start_when_ready=start_when_ready,
        )
        if start_when_ready:
            _check_choices(
                job, keep_conversations=keep_conversations, build_memories=build_memories
            )
        job.save()
        directory = import_dir(job)
        directory.mkdir(parents=True, exist_ok=True)
        transaction.on_commit(lambda: enqueue_step(job.pk))
        try:
            with (directory / UPLOAD_FILE).open("wb") as out:
                if upload is None:
                    out.write(text.encode())
                else:
                    for chunk in upload.chunks():
                        out.write(chunk)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
    return job


def _locked(job: Import) -> Import:
    return Import.objects.select_for_update().get(pk=job.pk)


@transaction.atomic
def start_import(job: Import, *, keep_conversations: bool, build_memories: bool) -> Import:
    """Import what the preview showed, as chosen (conversation exports)."""
    job = _locked(job)
    if job.status != ImportStatus.READY:
        raise ImportNotAllowed(errors.NOT_READY)
    _check_choices(job, keep_conversations=keep_conversations, build_memories=build_memories)
    job.keep_conversations = job.imports_conversations and keep_conversations
    job.build_memories = job.imports_conversations and build_memories
    _begin(job)
    return job


def _begin(job: Import) -> None:
    job.status, job.phase = ImportStatus.IMPORTING, Phase.STORE
    job.started_at = job.heartbeat_at = timezone.now()
    job.save()
    transaction.on_commit(lambda: enqueue_step(job.pk))


def wrote_nothing(job: Import) -> bool:
    """Whether the import is still only a file (read or being read): discarding it loses
    nothing of the person's."""
    return job.status in (ImportStatus.ANALYSING, ImportStatus.READY, ImportStatus.INVALID) or (
        job.status == ImportStatus.FAILED and not job.phase
    )


def can_discard(job: Import) -> bool:
    """Whether the import may be forgotten: it wrote nothing, or was undone."""
    return wrote_nothing(job) or job.status == ImportStatus.UNDONE


def can_undo(job: Import) -> bool:
    return job.status in (ImportStatus.IMPORTING, ImportStatus.DONE) or (
        job.status == ImportStatus.FAILED and bool(job.phase)
    )


@transaction.atomic
def discard_import(job: Import) -> None:
    """Forget an import that wrote nothing (or was undone): its row and its files."""
    job = _locked(job)
    if not can_discard(job):
        raise ImportNotAllowed(errors.NOT_DISCARDABLE)
    job.delete()  # Its files go with it (imports.apps.remove_files).


@transaction.atomic
def undo_import(job: Import) -> Import:
    """Undo the import (stopping it first if it still runs): see ``_undo``."""
    job = _locked(job)
    if not can_undo(job):
        raise ImportNotAllowed(errors.NOT_UNDOABLE)
    job.status, job.failures, job.heartbeat_at = ImportStatus.UNDOING, 0, timezone.now()
    job.error_code, job.error_details = "", {}
    job.save()
    transaction.on_commit(lambda: enqueue_step(job.pk))
    return job


@transaction.atomic
def resume_import(job: Import) -> Import:
    """Try again an import stopped by repeated errors, from where it stopped."""
    job = _locked(job)
    if job.status != ImportStatus.FAILED:
        raise ImportNotAllowed(errors.NOT_RESUMABLE)
    job.status = ImportStatus.IMPORTING if job.phase else ImportStatus.ANALYSING
    job.failures, job.error_code, job.error_details = 0, "", {}
    job.heartbeat_at = timezone.now()
    job.save()
    transaction.on_commit(lambda: enqueue_step(job.pk))
    return job


def enqueue_step(import_id: int) -> None:
    from django_q.tasks import async_task

    async_task(RUN_TASK, import_id, task_name=f"import {import_id}")


# Working -----------------------------------------------------------------------------


class _Interrupted(Exception):
    """The import is no longer where this worker left it (undone, or taken over)."""


@contextmanager
def _import_lock(import_id: int, wait: float = 5.0) -> Iterator[bool]:
    """The session lock a worker holds while it works on an import (released if it
    dies); whether it was had within ``wait`` seconds."""
    key = [_IMPORT_LOCK, import_id % 2**31]
    deadline = time.monotonic() + wait
    held = False
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
            held = bool(cursor.fetchone()[0])
            if held or time.monotonic() >= deadline:
                break
            time.sleep(0.25)
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)


def run_import(import_id: int) -> str:
    """The job: work on the import until it needs no worker or the step's time is up (then
    the next step is queued); its status then."""
    go_on = False
    status = ""
    with _import_lock(import_id) as held:
        if not held:
            return "busy"  # Another worker is on it, and will see any change.
        deadline = time.monotonic() + STEP_SECONDS
        interruptions = 0
        while not go_on and interruptions < 3:
            job = Import.objects.select_related("owner").filter(pk=import_id).first()
            if job is None or job.status not in ACTIVE_STATUSES:
                break
            status = job.status
            try:
                go_on = _work(job, deadline)
                Import.objects.filter(pk=job.pk, failures__gt=0).update(failures=0)
            except _Interrupted:
                # Read the import again: undone meanwhile, or moved on. (Again and again:
                # leave it to the check for stalled imports.)
                interruptions += 1
                continue
            except ImportRefused as refused:
                _refuse(job, refused)
            except Exception as exc:
                _record_failure(job, exc)
                break
    if go_on:
        enqueue_step(import_id)
    return status


def _work(job: Import, deadline: float) -> bool:
    """Do what the import's status asks until done or ``deadline``; whether work is left."""
    if job.status == ImportStatus.ANALYSING:
        _analyse(job)
        return False
    if job.status == ImportStatus.UNDOING:
        _undo(job)
        return False
    if job.phase == Phase.STORE:
        if not _store(job, deadline):
            return True
        _next_phase(job)
    elif job.phase == Phase.EXTRACT:
        if not _extract(job, deadline):
            return True
        _finish(job)
    elif job.phase == Phase.EMBED:
        if not _embed(job, deadline):
            return True
        _finish(job)
    else:
        _finish(job)
    return False


def _progress(job: Import, expected: dict[str, Any], **changes: Any) -> None:
    """Save a batch's progress with the batch (inside its transaction): only if the import
    is still importing where this worker left it, else _Interrupted rolls the batch back."""
    saved = Import.objects.filter(pk=job.pk, status=job.status, phase=job.phase, **expected).update(
        **changes, heartbeat_at=timezone.now()
    )
    if not saved:
        raise _Interrupted


def _copy(job: Import) -> Path:
    return import_dir(job) / COPY_FILE


# Reading the file


def _analyse(job: Import) -> None:
    directory = import_dir(job)
    upload, copy = directory / UPLOAD_FILE, directory / COPY_FILE

    def progress(read: int, total: int) -> None:
        Import.objects.filter(pk=job.pk, status=ImportStatus.ANALYSING).update(
            bytes_read=read, bytes_total=total, heartbeat_at=timezone.now()
        )

    if job.source == Source.MEMORIES:
        preview = analyse_memories(owner=job.owner, text=read_memory_text(upload), spool=copy)
    else:
        preview = analyse_conversations(
            owner=job.owner, source=job.source, upload=upload, spool=copy, progress=progress
        )
    upload.unlink(missing_ok=True)
    with transaction.atomic():
        current = Import.objects.select_for_update().filter(pk=job.pk).first()
        if current is None or current.status != ImportStatus.ANALYSING:
            shutil.rmtree(directory, ignore_errors=True)  # Discarded meanwhile.
            raise _Interrupted
        job = current
        job.status, job.preview = ImportStatus.READY, preview
        job.spool_size, job.bytes_read = copy.stat().st_size, job.bytes_total
        job.heartbeat_at = timezone.now()
        if job.start_when_ready:
            _begin(job)
        else:
            job.save()


def _refuse(job: Import, refused: ImportRefused) -> None:
    """The file cannot be imported: say why, keep nothing of it."""
    Import.objects.filter(pk=job.pk, status=ImportStatus.ANALYSING).update(
        status=ImportStatus.INVALID,
        error_code=refused.code,
        error_details=refused.details,
        finished_at=timezone.now(),
    )
    shutil.rmtree(import_dir(job), ignore_errors=True)


def _record_failure(job: Import, exc: Exception) -> None:
    """A step failed: tried again by the check for stalled imports, MAX_FAILURES times."""
    logger.exception("Import %s failed (%s)", job.pk, job.status)
    failures = job.failures + 1
    changes: dict[str, Any] = {"failures": failures, "heartbeat_at": timezone.now()}
    if failures >= MAX_FAILURES:
        changes.update(
            status=ImportStatus.FAILED,
            error_code=errors.IMPORT_FAILED,
            error_details={"error": f"{type(exc).__name__}: {exc}"[:300]},
            finished_at=timezone.now(),
        )
    Import.objects.filter(pk=job.pk, status=job.status).update(**changes)


# Storing


def _lines(job: Import, limit: int) -> Iterator[tuple[list[Any], int]]:
    """Batches of the import's copy from where it stopped: (items, offset after them), an
    item per line, at most ``limit`` items (conversations: fewer when long)."""
    with _copy(job).open("rb") as copy:
        copy.seek(job.spool_offset)
        while True:
            items: list[Any] = []
            messages = 0
            while len(items) < limit and messages < STORE_BATCH_MESSAGES:
                line = copy.readline()
                if not line:
                    break
                item = json.loads(line)
                items.append(item)
                messages += len(item.get("messages", ()))
            if not items:
                return
            yield items, copy.tell()


def _store(job: Import, deadline: float) -> bool:
    """Store the copy's conversations (or saved memories) batch by batch, each batch with
    its progress; whether all are stored."""
    memories = job.source == Source.MEMORIES
    store_batch = _store_memories if memories else _store_conversations
    for items, offset in _lines(job, MEMORIES_BATCH if memories else STORE_BATCH_CONVERSATIONS):
        with transaction.atomic():
            counts = store_batch(job, items)
            _progress(
                job,
                {"spool_offset": job.spool_offset},
                spool_offset=offset,
                **{name: F(name) + count for name, count in counts.items()},
            )
        job.spool_offset = offset
        if time.monotonic() > deadline:
            return False
    return True


def _store_conversations(job: Import, items: list[dict[str, Any]]) -> dict[str, int]:
    """Store a batch of conversations (those not there already); the counts to add."""
    batch = {
        imported_id(job.source, conversation.external_id): conversation
        for conversation in map(ExportConversation.from_json, items)
    }
    existing = set(
        Conversation.objects.filter(owner=job.owner, external_id__in=list(batch)).values_list(
            "external_id", flat=True
        )
    )
    new = [
        NewConversation(
            external_id=external_id,
            title=redact(export.title)[0],
            client=job.source,
            started_at=export.created_at,
            ended_at=max((m.sent_at for m in export.messages if m.sent_at), default=None)
            or export.updated_at,
            messages=[
                NewMessage(
                    external_id=m.external_id, role=m.role, content=m.content, sent_at=m.sent_at
                )
                for m in export.messages
            ],
        )
        for external_id, export in batch.items()
        if external_id not in existing
    ]
    created = add_conversations(job.owner, new, extract=job.build_memories)
    job.conversations.add(*created)
    return {
        "conversations_stored": len(created),
        "conversations_skipped": len(batch) - len(created),
        "messages_stored": sum(len({m.external_id for m in c.messages}) for c in new),
    }


def _store_memories(job: Import, items: list[dict[str, Any]]) -> dict[str, int]:
    """Add a batch of saved memories as any memory added by hand; the counts to add."""
    counts = {"memories_created": 0, "memories_known": 0, "memories_refused": 0}
    for item in items:
        try:
            _memory, created = memory_remember(
                owner=job.owner,
                content=item["content"],
                origin=Origin.IMPORTED,
                batch=job.batch,
                actor=job.owner,
            )
        except (SensitiveContent, NeverRemember):
            counts["memories_refused"] += 1
            continue
        counts["memories_created" if created else "memories_known"] += 1
    return counts


def _next_phase(job: Import) -> None:
    if job.build_memories:
        phase = Phase.EXTRACT
    elif job.keep_conversations and job.imports_conversations:
        phase = Phase.EMBED
    else:
        _finish(job)
        return
    _progress(job, {}, phase=phase)


# Building memories


def _extract(job: Import, deadline: float) -> bool:
    """Extraction over the imported conversations, the oldest first; whether done."""
    order = list(job.conversations.order_by("created_at", "pk").values_list("pk", flat=True))
    try:
        for index in range(job.extract_cursor, len(order)):
            read = _extract_conversation(order[index], keep_messages=job.keep_conversations)
            _progress(
                job,
                {"extract_cursor": index},
                extract_cursor=index + 1,
                messages_extracted=F("messages_extracted") + read,
            )
            if time.monotonic() > deadline and index + 1 < len(order):
                return False
        return True
    finally:
        # What the import's runs changed is its result on /settings/data, not a "Memory
        # updated" notice per conversation on the memory page.
        MemorySettings.objects.filter(user_id=job.owner_id).update(notices_seen_at=timezone.now())


def _extract_conversation(conversation_id: int, *, keep_messages: bool) -> int:
    """Run extraction over a conversation's unread messages here (each window and its
    follow-ups, as the worker would); how many of its messages are read. Its messages are
    then deleted unless they are to be kept (once all were read: a failed run is retried
    by the app, and needs them)."""
    conversation = Conversation.objects.annotate(last=Max("messages__position")).get(
        pk=conversation_id
    )
    last = conversation.last or 0
    if conversation.extracted_through < last:
        run = ExtractionRun.objects.create(
            conversation=conversation,
            trigger=ExtractionTrigger.MANUAL,
            extractor=settings.MEMORY_EXTRACTOR,
        )
        execute_run(run.pk)
        conversation.refresh_from_db(fields=["extracted_through"])
    if not keep_messages and last and conversation.extracted_through >= last:
        conversation.messages.all().delete()
    return min(conversation.extracted_through, last)


def _embed(job: Import, deadline: float) -> bool:
    """Embed the kept messages for past-turn search (extraction does it when it reads
    them); whether done."""
    from conversations.jobs import embed_messages

    while True:
        ids = list(
            Message.objects.filter(conversation__imports=job, pk__gt=job.embed_cursor)
            .order_by("pk")
            .values_list("pk", flat=True)[:EMBED_BATCH]
        )
        if not ids:
            return True
        embed_messages(ids)
        with transaction.atomic():
            _progress(
                job,
                {"embed_cursor": job.embed_cursor},
                embed_cursor=ids[-1],
                messages_indexed=F("messages_indexed") + len(ids),
            )
        job.embed_cursor = ids[-1]
        if time.monotonic() > deadline:
            return False


def _finish(job: Import) -> None:
    tally = ExtractionRun.objects.filter(conversation__imports=job).aggregate(
        created=Sum("created"), merged=Sum("merged"), superseded=Sum("superseded")
    )
    with transaction.atomic():
        changes: dict[str, Any] = {"status": ImportStatus.DONE, "finished_at": timezone.now()}
        if job.imports_conversations:
            changes.update(
                memories_created=tally["created"] or 0,
                memories_known=tally["merged"] or 0,
                memories_superseded=tally["superseded"] or 0,
            )
        _progress(job, {}, **changes)
        directory = import_dir(job)
        transaction.on_commit(lambda: shutil.rmtree(directory, ignore_errors=True))


# Undo


def _undo(job: Import) -> None:
    """Reverse every memory change made from the import (its saved memories' batch and each
    extraction run over its conversations: memories it created go to the trash, those it
    changed go back as they were), then delete its conversations. One transaction: all
    or nothing."""
    conversation_ids = list(job.conversations.values_list("pk", flat=True))
    runs = ExtractionRun.objects.filter(conversation_id__in=conversation_ids)
    batches = [job.batch, *(run_batch(run) for run in runs.values_list("pk", flat=True))]
    with transaction.atomic():
        undone = memory_undo_batches(batches=batches, actor=job.owner, actor_label=UNDO_ACTOR_LABEL)
        for start in range(0, len(conversation_ids), 500):
            Conversation.objects.filter(pk__in=conversation_ids[start : start + 500]).delete()
        _progress(
            job,
            {},
            status=ImportStatus.UNDONE,
            undone_at=timezone.now(),
            memories_undone=len(undone),
            conversations_undone=len(conversation_ids),
        )
        directory = import_dir(job)
        transaction.on_commit(lambda: shutil.rmtree(directory, ignore_errors=True))


# Watching ----------------------------------------------------------------------------


def resume_stalled() -> list[int]:
    """Every minute: queue again the active imports whose worker stopped (see the module's
    docstring), and discard previews nobody confirmed within PREVIEW_DAYS; the ids queued."""
    now = timezone.now()
    for waiting in Import.objects.filter(
        status=ImportStatus.READY, heartbeat_at__lt=now - timedelta(days=PREVIEW_DAYS)
    ):
        discard_import(waiting)
    queued = []
    stalled = Import.objects.filter(
        status__in=ACTIVE_STATUSES, heartbeat_at__lt=now - timedelta(seconds=STALL_SECONDS)
    )
    for import_id in stalled.values_list("pk", flat=True):
        with _import_lock(import_id, wait=0) as free:
            if not free:
                continue  # Its worker is alive (in a long step).
            Import.objects.filter(pk=import_id).update(heartbeat_at=now)
        logger.warning("Import %s lost its worker; going on with it", import_id)
        enqueue_step(import_id)
        queued.append(import_id)
    return queued
