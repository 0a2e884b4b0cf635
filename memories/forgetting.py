"""Forgetting: memories nobody uses fade, in set-based SQL.

relevance = exp(-rate * days unused) * (1 + ln(1 + uses)) * importance, where
"days unused" counts from the last use (or the creation). Each daily pass:

- forgets (soft, restorable) active memories whose relevance is below
  MEMORY_FORGET_BELOW, and ``context`` memories unused for
  MEMORY_CONTEXT_FADE_DAYS;
- lowers the importance (* MEMORY_FADE_IMPORTANCE_FACTOR) of those below
  MEMORY_FADE_BELOW, and the confidence (* MEMORY_UNUSED_CONFIDENCE_FACTOR,
  floor MEMORY_CONFIDENCE_FLOOR) of those unused for MEMORY_UNUSED_DAYS —
  each at most once per MEMORY_UNUSED_DAYS, so the pass can run any number
  of times;
- never touches pinned memories, nor pending, rejected, deleted or already
  forgotten ones.

One statement per range of ids updates every memory of the range it
concerns and writes their MemoryEvents (INSERT … SELECT from the UPDATE's
RETURNING), built from ``services``' event SQL (columns, snapshot, before,
actor label) as every other writer's are; the whole pass is one transaction. A ForgettingReport per day
makes a second pass the same day a no-op.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.events import FORGETTING_ACTOR_LABEL, before_sql, insert_events_sql, snapshot_sql
from memories.models import EventAction, ForgettingReport, Memory, state_sql

ACTOR_LABEL = FORGETTING_ACTOR_LABEL

_MEMORY = Memory._meta.db_table


# In double precision: EXTRACT returns numeric, and exp() of a numeric over a million rows
# costs several times the rest of the selection.
_DAYS_UNUSED = (
    "(date_part('epoch', %(now)s - COALESCE(m.last_accessed_at, m.created_at)) / 86400.0)"
)
_RELEVANCE = (
    f"(exp(-%(rate)s::float8 * {_DAYS_UNUSED}) * (1 + ln(1 + m.access_count)) * m.importance)"
)
_ELIGIBLE = f"{state_sql('active', 'm')} AND NOT m.pinned"
_FORGET = f"({_RELEVANCE} < %(forget_below)s OR (m.kind = 'context' AND {_DAYS_UNUSED} >= %(context_days)s))"


def _not_since(column: str) -> str:
    return f"(m.{column} IS NULL OR m.{column} <= %(now)s - make_interval(days => %(unused_days)s))"


_FADE = f"({_RELEVANCE} < %(fade_below)s AND {_not_since('faded_at')})"
_UNUSED = f"({_DAYS_UNUSED} >= %(unused_days)s AND {_not_since('confidence_lowered_at')})"

# One statement covers one range of ids, so its join stays small and in memory
# however many memories there are. It reads each row once and changes it once: a
# memory that is forgotten is not also faded. The state before a change is the
# state after it with the changed fields put back: one snapshot is built per row.
# Only forgetting writes an indexed column (forgotten_at); a fade leaves every
# index alone, so it is a heap-only update when its page has room.
_IN_RANGE = "m.id >= %(first)s AND m.id < %(stop)s"

# Each changed row's event, built as services builds every event.
_BEFORE_FORGOTTEN = before_sql("after", "revision", {"forgotten_at": "NULL"})
_BEFORE_FADED = before_sql(
    "after", "revision", {"importance": "importance_before", "confidence": "confidence_before"}
)
_INSERT_EVENTS = insert_events_sql(f"""
    SELECT id, CASE WHEN forget THEN '{EventAction.FORGOTTEN}' ELSE '{EventAction.DECAYED}' END,
           NULL::integer, '{ACTOR_LABEL}',
           CASE WHEN forget THEN {_BEFORE_FORGOTTEN} ELSE {_BEFORE_FADED} END,
           after, %(batch)s::uuid, %(now)s
    FROM changed""")

_PASS_SQL = f"""
WITH target AS (
    SELECT m.id, m.importance, m.confidence, {_FORGET} AS forget,
           NOT {_FORGET} AND {_FADE} AS fade, NOT {_FORGET} AND {_UNUSED} AS unused
    FROM {_MEMORY} m WHERE {_IN_RANGE} AND {_ELIGIBLE} AND ({_FORGET} OR {_FADE} OR {_UNUSED})
), changed AS (
    UPDATE {_MEMORY} m
    SET forgotten_at = CASE WHEN target.forget THEN %(now)s END,
        importance = CASE WHEN target.fade
            THEN m.importance * %(importance_factor)s ELSE m.importance END,
        faded_at = CASE WHEN target.fade THEN %(now)s ELSE m.faded_at END,
        confidence = CASE WHEN target.unused
            THEN LEAST(m.confidence, GREATEST(%(confidence_floor)s, m.confidence * %(confidence_factor)s))
            ELSE m.confidence END,
        confidence_lowered_at = CASE WHEN target.unused
            THEN %(now)s ELSE m.confidence_lowered_at END,
        revision = m.revision + 1,
        updated_at = %(now)s
    -- Eligibility again on the row being updated: a concurrent change (pinned, deleted…) wins.
    FROM target WHERE m.id = target.id AND {_IN_RANGE} AND {_ELIGIBLE}
    RETURNING m.id, m.kind, m.revision, target.forget, target.fade, target.unused,
              target.importance AS importance_before, target.confidence AS confidence_before,
              {snapshot_sql("m")} AS after
), events AS (
    {_INSERT_EVENTS}
)
SELECT kind, count(*) FILTER (WHERE forget), count(*) FILTER (WHERE fade),
       count(*) FILTER (WHERE unused)
FROM changed GROUP BY kind
"""

_DRY_RUN_SQL = f"""
SELECT m.kind,
       count(*) FILTER (WHERE {_FORGET}),
       count(*) FILTER (WHERE NOT {_FORGET} AND {_FADE}),
       count(*) FILTER (WHERE NOT {_FORGET} AND {_UNUSED})
FROM {_MEMORY} m WHERE {_ELIGIBLE} GROUP BY m.kind
"""

# How many ids one statement covers.
BATCH_IDS = 20_000

OUTCOMES = ("forgotten", "importance_lowered", "confidence_lowered")


def _parameters(now: datetime, batch: uuid.UUID) -> dict[str, Any]:
    return {
        "now": now,
        "batch": batch,
        "rate": settings.MEMORY_FORGET_DECAY_RATE,
        "forget_below": settings.MEMORY_FORGET_BELOW,
        "fade_below": settings.MEMORY_FADE_BELOW,
        "context_days": settings.MEMORY_CONTEXT_FADE_DAYS,
        "unused_days": settings.MEMORY_UNUSED_DAYS,
        "importance_factor": settings.MEMORY_FADE_IMPORTANCE_FACTOR,
        "confidence_factor": settings.MEMORY_UNUSED_CONFIDENCE_FACTOR,
        "confidence_floor": settings.MEMORY_CONFIDENCE_FLOOR,
    }


def _counts(rows: list[tuple[str, int, int, int]]) -> dict[str, Any]:
    """{"forgotten": {"fact": 3, …}, …, "total": {"forgotten": 3, …}} from (kind, forgotten,
    importance lowered, confidence lowered) rows."""
    counts: dict[str, Any] = {outcome: defaultdict(int) for outcome in OUTCOMES}
    for kind, *by_outcome in rows:
        for outcome, count in zip(OUTCOMES, by_outcome, strict=True):
            if count:
                counts[outcome][kind] += count
    result: dict[str, Any] = {outcome: dict(counts[outcome]) for outcome in OUTCOMES}
    result["total"] = {outcome: sum(counts[outcome].values()) for outcome in OUTCOMES}
    return result


def preview(now: datetime | None = None) -> dict[str, Any]:
    """What a pass would do now, changing nothing."""
    parameters = _parameters(now or timezone.now(), uuid.uuid4())
    with connection.cursor() as cursor:
        cursor.execute(_DRY_RUN_SQL, parameters)
        return _counts(cursor.fetchall())


def forget(now: datetime | None = None) -> ForgettingReport:
    """Today's pass, or the report of the pass that already ran today."""
    now = now or timezone.now()
    started = time.monotonic()
    with transaction.atomic():
        report, created = ForgettingReport.objects.get_or_create(run_on=now.date())
        if not created:
            return report
        parameters = _parameters(now, uuid.uuid4())
        rows: list[tuple[str, int, int, int]] = []
        with connection.cursor() as cursor:
            # Room for a range's changed rows and their snapshots without spilling to disk.
            cursor.execute("SET LOCAL work_mem = '64MB'")
            cursor.execute(f"SELECT min(id), max(id) FROM {_MEMORY}")
            first, last = cursor.fetchone()
            for start in range(first or 0, (last or 0) + 1, BATCH_IDS):
                parameters.update(first=start, stop=start + BATCH_IDS)
                cursor.execute(_PASS_SQL, parameters)
                rows += cursor.fetchall()
        report.counts = _counts(rows)
        report.counts["batch"] = str(parameters["batch"])
        report.duration_ms = int((time.monotonic() - started) * 1000)
        report.save(update_fields=["counts", "duration_ms"])
    return report
