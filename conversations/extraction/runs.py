"""Extraction runs: asking for one, and running it as a job.

A run is created (queued) by a trigger and enqueued once its transaction
commits; while one is queued or running, the turns trigger asks for no other
(they coalesce). The job takes a per-conversation lock, so runs of one
conversation never overlap, and reads the window under it: the oldest
EXTRACTION_WINDOW_MESSAGES messages after ``Conversation.extracted_through``,
within about EXTRACTION_WINDOW_TOKENS tokens. Extraction, reconciliation,
the run's counts and the new ``extracted_through`` (the window's last
message) commit in one transaction, so a window is never extracted twice,
no message is passed over, and a worker killed mid-run leaves nothing
half-written. A run that read a window and finds unread messages after it
(a backlog, or messages that arrived meanwhile) goes on with a follow-up run
of the same trigger, one per window, until none are left: every message is
read in exactly one run's window, in order. A failure is recorded on the run (with
the LLM's raw answer when it could not be parsed) and retried with
exponential backoff up to EXTRACTION_MAX_ATTEMPTS attempts, by a django-q2
Schedule this module creates; the job itself then succeeds, so django-q2 never
retries it too. A run whose worker died (killed, crashed) is found by the
conversation's next turns trigger or the job every minute, and run again at once
(see "Dead workers" below), long before django-q2's Q_RETRY re-delivery.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Field, Max, Model
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.extraction import Candidate, ExtractionFailed, WindowMessage, get_extractor
from conversations.extraction.kinds import kind_by_definition
from conversations.extraction.reconcile import Reconciler
from conversations.extraction.rules import asked
from conversations.models import (
    Conversation,
    ExtractionRun,
    ExtractionTrigger,
    Message,
    MessageRole,
    RunStatus,
)
from memories.gate import never_remember_rule, rejection
from memories.sensitive import REDACTED, contains_sensitive, redact, without_secrets
from memories.tokens import estimate_tokens
from search.embeddings import get_provider
from teams.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

EXTRACT_TASK = "conversations.jobs.extract_conversation"
FINISHED = (RunStatus.SUCCEEDED, RunStatus.SKIPPED)
_CONVERSATION = Conversation._meta.db_table
M = TypeVar("M", bound=Model)
# The first key of the advisory locks that serialise one conversation's runs.
_LOCK_NAMESPACE = 5_000_001

SKIP_MEMORY_OFF = "memory is off for this user"
SKIP_AUTO_OFF = "automatic extraction is off for this user"
SKIP_TEMPORARY = "temporary conversation (privacy mode)"
SKIP_NOTHING_NEW = "no new messages since the last extraction"
SKIP_TRIVIAL = "trivial exchange (greetings, thanks, very short messages)"
SKIP_SUMMARY_SEEN = "this summary was already extracted"
# Reasons that hold for every unread message: the run's window is all of them.
SKIP_PRIVACY_PAUSED = "memory paused (privacy)"
SKIP_ALL_UNREAD = (SKIP_MEMORY_OFF, SKIP_TEMPORARY, SKIP_PRIVACY_PAUSED)

_GREETING = re.compile(
    r"^(?:hi|hello|hey|yo|(?:many )?thanks(?: a lot| so much| very much)?|thank you(?: so much| very much| a lot)?|"
    r"thx|ty|ok|okay|cool|great|"
    r"nice|bye|goodbye|good (?:morning|afternoon|evening|night)|you're welcome|no problem|"
    r"你好|您好|嗨|谢谢(?:你|您)?|多谢|感谢|好的|好|嗯+|哦+|收到|再见|不客气|没问题)"
    r"[\s!！.。,，~～?？:)]*$",
    re.IGNORECASE,
)


def run_batch(run_id: int) -> uuid.UUID:
    """The MemoryEvent batch of a run's changes: undoing it undoes the run."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"memoryapp:extraction-run:{run_id}")


def is_trivial(role: str, content: str, *, answers_question: bool = False) -> bool:
    """Whether a message says nothing worth reading: a greeting or thanks, a few characters
    (unless they answer the question just asked: "Vercel.")."""
    text = content.strip()
    if role == MessageRole.USER:
        return (len(text) < 10 and not answers_question) or bool(_GREETING.match(text))
    if role == MessageRole.ASSISTANT:
        return len(text) < 30 or bool(_GREETING.match(text))
    # System prompts and tool output are not what the user said.
    return True


def worth_reading(messages: Sequence[WindowMessage]) -> list[WindowMessage]:
    """The messages of a window that are not trivial (``is_trivial``)."""
    kept: list[WindowMessage] = []
    previous: WindowMessage | None = None
    for message in messages:
        answers = (
            previous is not None
            and previous.role == MessageRole.ASSISTANT
            and bool(asked(previous.content))
        )
        if not is_trivial(message.role, message.content, answers_question=answers):
            kept.append(message)
        previous = message
    return kept


# Requesting --------------------------------------------------------------------------


def extraction_request(
    *, conversation: Conversation, trigger: str, summary: str = ""
) -> ExtractionRun:
    """A queued run, enqueued when the caller's transaction commits."""
    run = ExtractionRun.objects.create(
        conversation=conversation,
        trigger=trigger,
        extractor=settings.MEMORY_EXTRACTOR,
        summary=summary,
    )
    transaction.on_commit(lambda: enqueue_run(run.pk))
    return run


def enqueue_run(run_id: int) -> str:
    from django_q.tasks import async_task

    task_id = async_task(EXTRACT_TASK, run_id, task_name=f"extraction run {run_id}")
    ExtractionRun.objects.filter(pk=run_id, task_id="").update(task_id=task_id)
    return str(task_id)


def maybe_request_turns_extraction(conversation: Conversation) -> ExtractionRun | None:
    """A run every EXTRACTION_EVERY_USER_TURNS user messages not yet extracted.

    While a run is queued or running, no other is asked for: it reads the whole
    unread backlog, messages that arrive meanwhile included.
    """
    every = settings.EXTRACTION_EVERY_USER_TURNS
    if every <= 0:
        return None
    active = _active_runs(conversation)
    if any(_may_be_dead(status, started_at) for status, started_at in active):
        # A run whose worker died holds up no more: it runs again (or fails for good).
        reclaim_dead_runs(conversation_id=conversation.pk)
        active = _active_runs(conversation)
    if active:
        return None
    new_user_turns = conversation.messages.filter(
        role=MessageRole.USER, position__gt=conversation.extracted_through
    ).count()
    if new_user_turns < every:
        return None
    return extraction_request(conversation=conversation, trigger=ExtractionTrigger.TURNS)


def _active_runs(conversation: Conversation) -> list[tuple[str, datetime | None]]:
    return list(
        conversation.extraction_runs.filter(
            status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
        ).values_list("status", "started_at")[:10]
    )


def _may_be_dead(status: str, started_at: datetime | None) -> bool:
    """Running for longer than the grace: its worker has had time to take the lock."""
    return (
        status == RunStatus.RUNNING
        and started_at is not None
        and started_at < timezone.now() - timedelta(seconds=settings.EXTRACTION_RUN_GRACE_SECONDS)
    )


# Dead workers --------------------------------------------------------------------------
#
# A worker's lease on a run is its conversation's advisory lock, which its database session
# holds for as long as it works on a window (including the LLM call): PostgreSQL lets go of
# it the moment the session ends, when the worker is killed, crashes or loses its machine's
# connection. A run marked running more than EXTRACTION_RUN_GRACE_SECONDS ago (time enough
# to take that lock) whose conversation nobody holds has lost its worker; what that worker
# did of its window was rolled back with its transaction. Taking the lock, it is queued
# and run again at once, from the conversation's extracted_through, as any run: nothing is
# passed over or read twice. The attempt the dead worker counted stays counted, so a run
# that kills its worker every time fails for good after EXTRACTION_MAX_ATTEMPTS attempts.
# The next turns trigger of the conversation and a job every minute look for such runs.

WORKER_DIED = "The worker running it stopped (killed or crashed) before it finished."


def reclaim_dead_runs(*, conversation_id: int | None = None) -> list[int]:
    """Queue again (or fail for good) the running runs whose worker died; their ids."""
    stale = ExtractionRun.objects.filter(
        status=RunStatus.RUNNING,
        started_at__lt=timezone.now() - timedelta(seconds=settings.EXTRACTION_RUN_GRACE_SECONDS),
    )
    if conversation_id is not None:
        stale = stale.filter(conversation_id=conversation_id)
    reclaimed = []
    for run_id, run_conversation in stale.order_by("pk").values_list("pk", "conversation_id"):
        if _reclaim(run_id, run_conversation):
            reclaimed.append(run_id)
    return reclaimed


def _reclaim(run_id: int, conversation_id: int) -> bool:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", _lock_key(conversation_id))
            if not cursor.fetchone()[0]:
                return False  # A live worker holds the conversation.
        run = ExtractionRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status != RunStatus.RUNNING:
            return False  # It finished meanwhile.
        run.error = WORKER_DIED
        if run.attempts >= settings.EXTRACTION_MAX_ATTEMPTS:
            run.status, run.finished_at = RunStatus.FAILED, timezone.now()
            logger.error(
                "Extraction run %s failed for good after %s attempts: %s",
                run_id,
                run.attempts,
                WORKER_DIED,
            )
        else:
            run.status = RunStatus.QUEUED
            transaction.on_commit(lambda: enqueue_run(run_id))
            logger.warning("Extraction run %s lost its worker; running it again", run_id)
        run.save(update_fields=["status", "error", "finished_at"])
    return True


def schedule_retry(run: ExtractionRun) -> timedelta:
    """Run again after EXTRACTION_RETRY_SECONDS * 2^(attempts - 1)."""
    from django_q.models import Schedule

    delay = timedelta(seconds=settings.EXTRACTION_RETRY_SECONDS * 2 ** max(run.attempts - 1, 0))
    Schedule.objects.update_or_create(
        name=retry_schedule_name(run.pk),
        defaults={
            "func": EXTRACT_TASK,
            "args": repr(run.pk),
            "schedule_type": Schedule.ONCE,
            "repeats": -1,
            "next_run": timezone.now() + delay,
        },
    )
    return delay


def retry_schedule_name(run_id: int) -> str:
    return f"extraction run {run_id} retry"


# Running -----------------------------------------------------------------------------


def execute_run(run_id: int) -> ExtractionRun:
    """The job: extract and reconcile the run's window, then each later window in a follow-up
    run until no unread message is left; the first run."""
    first, follow_up = execute_window(run_id)
    while follow_up is not None:
        _run, follow_up = execute_window(follow_up)
    return first


def execute_window(run_id: int) -> tuple[ExtractionRun, int | None]:
    """Extract and reconcile one run's window, or record why not; the run, and the id of the
    follow-up run it created for the messages after its window, if any.

    A failure is recorded on the run and its retry scheduled here (``_record_failure``), and
    the job then returns normally, so that django-q2 counts the task as done and does not
    deliver it again: the app's backoff is the one retry layer. Only when the failure cannot
    even be recorded (the database is gone) does this raise, and the broker's re-delivery
    (Q_RETRY) is then the only retry there is.
    """
    started = time.monotonic()
    try:
        conversation_id = _mark_running(run_id)
        if conversation_id is None:
            # Finished already (another delivery of this job, or a retry after success).
            return ExtractionRun.objects.get(pk=run_id), None
        with transaction.atomic():
            run = _locked_run(run_id, conversation_id)
            if run.status in FINISHED:
                # Another delivery of this job finished it while this one waited.
                return run, None
            extracted_through = _extract(run)
            run.error = ""
            run.raw_output = ""
            run.duration_ms = int((time.monotonic() - started) * 1000)
            run.finished_at = timezone.now()
            follow_up = _follow_up(run) if _save_result(run, extracted_through) else None
    except Exception as exc:
        return _record_failure(run_id, exc, started), None
    return run, follow_up


def _follow_up(run: ExtractionRun) -> int:
    """A new run of the same trigger for the messages after ``run``'s window."""
    return ExtractionRun.objects.create(
        conversation_id=run.conversation_id, trigger=run.trigger, extractor=run.extractor
    ).pk


_MARK_RUNNING_SQL = f"""
UPDATE {ExtractionRun._meta.db_table}
SET status = %s, attempts = attempts + 1, started_at = %s
WHERE id = %s AND status <> ALL(%s)
RETURNING conversation_id
"""


# What running a run sets (fields whose column is their name).
_RESULT_FIELDS = [
    "status",
    "skip_reason",
    "window_first",
    "window_last",
    "candidates",
    "created",
    "merged",
    "superseded",
    "skipped",
    "dropped_sensitive",
    "error",
    "raw_output",
    "duration_ms",
    "finished_at",
]
# The run's result and, when it read a window that is done with, the conversation's
# extracted_through moved past it: one statement. The conversation's row is then locked
# even when it had moved further (a batch stored while memory was paused), for the check
# for a follow-up run (_save_result).
_SAVE_RESULT_SQL = f"""
WITH advanced AS (
    UPDATE {_CONVERSATION} SET extracted_through = GREATEST(extracted_through, %(through)s::integer)
    WHERE id = %(conversation)s AND %(through)s::integer IS NOT NULL
)
UPDATE {ExtractionRun._meta.db_table}
SET {", ".join(f"{field} = %({field})s" for field in _RESULT_FIELDS)}
WHERE id = %(run)s
"""
# Unread messages that no queued or running run will read (that one goes through them).
_UNREAD_AND_NO_RUN_SQL = f"""
SELECT EXISTS (
    SELECT 1 FROM {Message._meta.db_table} m JOIN {_CONVERSATION} c ON c.id = m.conversation_id
    WHERE c.id = %(conversation)s AND m.position > c.extracted_through
) AND NOT EXISTS (
    SELECT 1 FROM {ExtractionRun._meta.db_table}
    WHERE conversation_id = %(conversation)s AND status = ANY(%(active)s)
)
"""


def _mark_running(run_id: int) -> int | None:
    """Count the attempt and show the run as running (committed at once, so a failure or a
    killed worker leaves them); its conversation's id, or None when it already finished."""
    with connection.cursor() as cursor:
        cursor.execute(
            _MARK_RUNNING_SQL, [RunStatus.RUNNING, timezone.now(), run_id, list(FINISHED)]
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def _lock_key(conversation_id: int) -> list[int]:
    """The key of the advisory lock that serialises a conversation's runs."""
    return [_LOCK_NAMESPACE, conversation_id % 2**31]


# The run's conversation's oldest unextracted messages, in order, read with the run (after
# the conversation's lock, so no other run has extracted them meanwhile). Raw SQL: it names
# the conversation by the table's own name, as the run's join does, and costs far less to
# build than the same subquery as an expression.
_UNREAD_MESSAGES_SQL = f"""
SELECT json_agg(unread ORDER BY position) FROM (
    SELECT id, position, role, content, speaker, sent_at, embedding_model
    FROM {Message._meta.db_table}
    WHERE conversation_id = {_CONVERSATION}.id AND position > {_CONVERSATION}.extracted_through
    ORDER BY position LIMIT %s
) unread
"""


def _columns(model: type[Model], table: str) -> tuple[list[Field], str]:
    """``model``'s stored fields, and their columns in ``table`` for a SELECT."""
    fields = list(model._meta.concrete_fields)
    return fields, ", ".join(f"{table}.{connection.ops.quote_name(f.column or '')}" for f in fields)


_RUN_FIELDS, _RUN_COLUMNS = _columns(ExtractionRun, "r")
_CONVERSATION_FIELDS, _CONVERSATION_COLUMNS = _columns(Conversation, _CONVERSATION)
_OWNER_FIELDS, _OWNER_COLUMNS = _columns(get_user_model(), "u")
_SETTINGS_FIELDS, _SETTINGS_COLUMNS = _columns(MemorySettings, "s")
_PROJECT_FIELDS, _PROJECT_COLUMNS = _columns(Project, "p")
# The fields whose values need converting from what the database driver returns.
_READ: list[tuple[type[Model], list[Field]]] = [
    (ExtractionRun, _RUN_FIELDS),
    (Conversation, _CONVERSATION_FIELDS),
    (get_user_model(), _OWNER_FIELDS),
    (MemorySettings, _SETTINGS_FIELDS),
    (Project, _PROJECT_FIELDS),
]
_CONVERTED: dict[type[Model], list[tuple[int, Any]]] = {
    model: [(i, f) for i, f in enumerate(fields) if hasattr(f, "from_db_value")]
    for model, fields in _READ
}
# The message before them, the context a secret may be given in ("the wifi password?" "it's
# …"; see memories.sensitive).
_MESSAGE_BEFORE_SQL = f"""
SELECT content FROM {Message._meta.db_table}
WHERE conversation_id = {_CONVERSATION}.id AND position = {_CONVERSATION}.extracted_through
"""
# The run with its conversation, the conversation's owner, their memory settings and
# project, the oldest messages not yet extracted and the one before them: what
# select_related would read, in SQL written once: a speed trick that earns its place
# (building the ORM's five-table query took half the time of running it; with the ORM's
# select_related, benchmarks/extraction.py --turns-embedded fell from 667 to 557 msg/s).
_LOCKED_RUN_SQL = f"""
SELECT {_RUN_COLUMNS}, {_CONVERSATION_COLUMNS}, {_OWNER_COLUMNS}, {_SETTINGS_COLUMNS},
       {_PROJECT_COLUMNS}, ({_UNREAD_MESSAGES_SQL}), ({_MESSAGE_BEFORE_SQL})
FROM {ExtractionRun._meta.db_table} r
JOIN {_CONVERSATION} ON {_CONVERSATION}.id = r.conversation_id
JOIN {get_user_model()._meta.db_table} u ON u.id = {_CONVERSATION}.owner_id
LEFT JOIN {MemorySettings._meta.db_table} s ON s.user_id = u.id
LEFT JOIN {Project._meta.db_table} p ON p.id = {_CONVERSATION}.project_id
WHERE r.id = %s
FOR UPDATE OF r
"""
# The conversation's lock, then the run read under it: two statements, so that the read's
# snapshot is taken once the lock is held (it sees what the run before committed).
_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s, %s)"


def _locked_run(run_id: int, conversation_id: int) -> ExtractionRun:
    """The run, locked, as ``_LOCKED_RUN_SQL`` reads it once its conversation is locked;
    ``unread_messages`` and ``message_before`` set on it."""
    window = max(settings.EXTRACTION_WINDOW_MESSAGES, 1)
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_SQL, _lock_key(conversation_id))
        cursor.execute(_LOCKED_RUN_SQL, [window, run_id])
        row = cursor.fetchone()
    if row is None:
        raise ExtractionRun.DoesNotExist(f"No extraction run {run_id}")
    values = iter(row)

    def instance(model: type[M], fields: list[Field]) -> M | None:
        columns = [next(values) for _field in fields]
        if columns[0] is None:  # A LEFT JOIN that found nothing.
            return None
        for index, converted in _CONVERTED[model]:
            # What the ORM's converters do (JSON columns arrive as text).
            columns[index] = converted.from_db_value(columns[index], None, connection)
        return model.from_db(connection.alias, [f.attname for f in fields], columns)

    run = instance(ExtractionRun, _RUN_FIELDS)
    conversation = instance(Conversation, _CONVERSATION_FIELDS)
    owner = instance(get_user_model(), _OWNER_FIELDS)
    memory_settings = instance(MemorySettings, _SETTINGS_FIELDS)
    project = instance(Project, _PROJECT_FIELDS)
    assert run is not None and conversation is not None and owner is not None
    if memory_settings is not None:
        owner.memory_settings = memory_settings
    conversation.owner, conversation.project = owner, project
    run.conversation = conversation
    run.unread_messages = next(values)  # type: ignore[attr-defined]
    run.message_before = next(values) or ""  # type: ignore[attr-defined]
    return run


def _window(run: ExtractionRun) -> list[WindowMessage]:
    """The oldest unextracted messages that fit the window, in order, each with who said it
    (the conversation's participants decide) and when."""
    unread_messages = run.unread_messages  # type: ignore[attr-defined]  # read with the run
    conversation = run.conversation
    unread = []
    for message in unread_messages or []:
        speaker = conversation.speaker_of(message["role"], message["speaker"])
        unread.append(
            WindowMessage(
                id=message["id"],
                position=message["position"],
                role=message["role"],
                content=message["content"],
                speaker=speaker.name,
                is_account_user=speaker.is_account_user,
                sent_at=datetime.fromisoformat(message["sent_at"]),
            )
        )
    window: list[WindowMessage] = []
    budget = settings.EXTRACTION_WINDOW_TOKENS
    for message in unread:
        tokens = estimate_tokens(message.content)
        if window and tokens > budget:
            break
        if not window and tokens > budget:
            # The oldest message alone is too long: its beginning is read.
            message = replace(message, content=message.content[: budget * 4])
        window.append(message)
        budget -= tokens
    return window


def _skip_reason(
    run: ExtractionRun, window: list[WindowMessage], memory_settings: MemorySettings
) -> str:
    conversation = run.conversation
    if not memory_settings.memory_enabled:
        return SKIP_MEMORY_OFF
    if memory_settings.privacy_paused:
        return SKIP_PRIVACY_PAUSED
    if not memory_settings.auto_extract and run.trigger != ExtractionTrigger.MANUAL:
        return SKIP_AUTO_OFF
    if conversation.temporary:
        return SKIP_TEMPORARY
    if run.summary and (
        conversation.extraction_runs.filter(status=RunStatus.SUCCEEDED, summary=run.summary)
        .exclude(pk=run.pk)
        .exists()
    ):
        return SKIP_SUMMARY_SEEN
    if not window and not run.summary:
        return SKIP_NOTHING_NEW
    if not run.summary and not worth_reading(window):
        return SKIP_TRIVIAL
    return ""


def _extract(run: ExtractionRun) -> int | None:
    """Set the run's result; the position its conversation is now extracted through, if it
    moved."""
    conversation = run.conversation
    window = _window(run)
    if window:
        run.window_first, run.window_last = window[0].position, window[-1].position
    memory_settings = _memory_settings(conversation.owner)
    if window and memory_settings.memory_enabled and not conversation.temporary:
        _embed_turns(window, run.unread_messages)  # type: ignore[attr-defined]
    reason = _skip_reason(run, window, memory_settings)
    if reason:
        run.status, run.skip_reason = RunStatus.SKIPPED, reason
        if window and reason in SKIP_ALL_UNREAD:
            # Messages that must never be remembered are passed over at once, all of them.
            last = conversation.messages.aggregate(last=Max("position"))["last"]
            run.window_last = max(last or 0, window[-1].position)
        # Messages that must never be remembered are not read again; those skipped only
        # because automatic extraction is off stay for an extraction asked for by hand.
        if window and reason != SKIP_AUTO_OFF:
            return run.window_last
        return None
    extractor = get_extractor(run.extractor)
    before = run.message_before  # type: ignore[attr-defined]  # read with the run
    screened_window, secrets = screened(window, before)
    messages = worth_reading(screened_window)
    candidates = extractor.extract(messages, run.summary)
    safe = [candidate for candidate in candidates if not _is_sensitive(candidate)]
    # Talk is not memory, nor what the owner never wants remembered (memories.gate): counted
    # with what reconciliation skips.
    rules = memory_settings.never_remember_rules
    kept = [
        candidate
        for candidate in safe
        if not rejection(candidate.kind, candidate.content)
        and not never_remember_rule(f"{candidate.content}\n{candidate.quote}", rules)
    ]
    for candidate in kept:
        candidate.kind = kind_by_definition(candidate.content, candidate.kind, candidate.quote)
    reconciler = Reconciler(
        conversation=conversation,
        run_id=run.pk,
        batch=run_batch(run.pk),
        review=memory_settings.review_extracted or settings.MEMORY_REVIEW_BY_DEFAULT,
        sent_at={m.id: m.sent_at for m in window if m.sent_at is not None},
    )
    tally = reconciler.reconcile(kept)
    run.status = RunStatus.SUCCEEDED
    # A clause taken out for its secret counts as a candidate dropped.
    run.candidates = secrets + len(candidates)
    run.dropped_sensitive = secrets + len(candidates) - len(safe)
    run.created, run.merged = tally.created, tally.merged
    run.superseded, run.skipped = tally.superseded, tally.skipped + len(safe) - len(kept)
    return window[-1].position if window else None


def _embed_turns(window: list[WindowMessage], unread: list[dict[str, Any]]) -> None:
    """Embed the window's messages for episodic recall: the run that reads them does it, one
    batch per window, rather than a job for every batch a client posts. A failing provider
    loses nothing: the turns are found by keyword meanwhile, and ``embed_memories`` (which
    covers messages) embeds what is missing. Turns the current model embedded already (as
    ``unread``, read with the run, shows) cost no query."""
    from conversations.jobs import embed_messages

    model = {message["id"]: message["embedding_model"] for message in unread}
    try:
        current = get_provider().model_name
        if all(model[message.id] == current for message in window):
            return
        # A savepoint: whatever fails here leaves the run's own transaction usable.
        with transaction.atomic():
            embed_messages([message.id for message in window])
    except Exception:
        logger.warning("Messages %s..%s not embedded", window[0].id, window[-1].id, exc_info=True)


def _memory_settings(user: User) -> MemorySettings:
    """The user's settings, read with the run when they exist."""
    try:
        return user.memory_settings
    except MemorySettings.DoesNotExist:
        return MemorySettings.for_user(user)


def screened(messages: list[WindowMessage], before: str = "") -> tuple[list[WindowMessage], int]:
    """The messages without the clauses that give a secret, also one given in the context
    of the message before ("the wifi password?" "it's Brisket4life!"), so that the facts
    beside a secret are still read; and how many secrets were taken out. A candidate that
    still holds one is dropped (``_is_sensitive``)."""
    contexts = [before, *(message.content for message in messages)]
    screened_messages, secrets = [], 0
    for message, context in zip(messages, contexts, strict=False):
        content, count = without_secrets(message.content, context)
        screened_messages.append(replace(message, content=content))
        secrets += count
    return screened_messages, secrets


def _is_sensitive(candidate: Candidate) -> bool:
    text = f"{candidate.content}\n{candidate.quote}"
    return REDACTED in text or contains_sensitive(text)


def _save_result(run: ExtractionRun, extracted_through: int | None) -> bool:
    """Save the run's result; whether it read a window (one not left for an extraction asked
    by hand) after which unread messages are left for a follow-up run."""
    parameters = {
        **{field: getattr(run, field) for field in _RESULT_FIELDS},
        "through": extracted_through,
        "conversation": run.conversation_id,
        "run": run.pk,
        "active": [RunStatus.QUEUED, RunStatus.RUNNING],
    }
    with connection.cursor() as cursor:
        cursor.execute(_SAVE_RESULT_SQL, parameters)
        if extracted_through is None:
            return False
        # After a window read, what is left for a follow-up run. The check's snapshot is taken
        # once the save holds the conversation's row, the lock ingestion takes: a batch stored
        # before is seen, and one stored after sees the run finished and asks for its own run.
        cursor.execute(_UNREAD_AND_NO_RUN_SQL, parameters)
        return bool(cursor.fetchone()[0])


# Characters of a failed run's raw output kept.
RAW_OUTPUT_KEPT = 100_000


def _record_failure(run_id: int, exc: Exception, started: float) -> ExtractionRun:
    run = ExtractionRun.objects.get(pk=run_id)
    raw_output = exc.raw_output if isinstance(exc, ExtractionFailed) else ""
    run.status = RunStatus.FAILED
    run.error = f"{type(exc).__name__}: {exc}"[:2000]
    # What the LLM answered is kept for diagnosis (its start), without any secret it may echo:
    # cut before it is redacted (a huge answer took a minute to redact), with a margin so that
    # a secret across the cut is still recognised whole.
    run.raw_output = redact(raw_output[: RAW_OUTPUT_KEPT + 1000])[0][:RAW_OUTPUT_KEPT]
    run.duration_ms = int((time.monotonic() - started) * 1000)
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "raw_output", "duration_ms", "finished_at"])
    if run.attempts < settings.EXTRACTION_MAX_ATTEMPTS:
        delay = schedule_retry(run)
        logger.warning("Extraction run %s failed (%s); retrying in %s", run_id, run.error, delay)
    else:
        logger.error(
            "Extraction run %s failed for good after %s attempts: %s",
            run_id,
            run.attempts,
            run.error,
        )
    return run
