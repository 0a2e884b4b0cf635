"""A memory's history: how each change becomes a MemoryEvent, in Python and in SQL.

``memories.services`` builds the events of its changes with ``build_event`` from the memory's
``snapshot()`` before and after, and saves many at once with ``save_events``. Writers in
set-based SQL, too slow to load rows into Python (``forgetting``: a million rows a night),
build the same event rows in SQL from what this module gives them: ``insert_events_sql``
(the event columns), ``snapshot_sql`` (``Memory.snapshot()`` in SQL, the ``after``),
``before_sql`` (the ``before``: the snapshot after, the changed fields put back, the revision
one lower) and the actions and actor labels (``EventAction``, ``FORGETTING_ACTOR_LABEL``).

Bookkeeping written outside events, on purpose (not part of a snapshot, never undone):

- ``access_count`` and ``last_accessed_at``: recall's use counts
  (``recall.injection``'s batched UPDATE after each injection). A use is not a change
  of what the memory says; an event per use would grow the history by every prompt.
  Forgetting reads them, and its own changes are recorded.
- ``embedding`` and ``embedding_model``: the vector of the content
  (``embeddings.store_embeddings``, from a job after a change). It is derived from
  content whose change already has its event, and is recomputed, not restored, after
  an undo.
- ``search_document`` / ``search_vector``: derived from content and tags likewise.
- ``faded_at`` and ``confidence_lowered_at``: forgetting's own once-per-period marks,
  written by the same statement as its events.

None of these writes touches a snapshot field (``BOOKKEEPING_FIELDS``; a test checks), so
they need no event and bypass none.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import connection
from django.db.models import Model

from memories.models import Memory, MemoryEvent

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def build_event(
    memory: Memory,
    action: str,
    *,
    actor: User | None,
    actor_label: str = "",
    before: dict[str, Any] | None,
    batch: uuid.UUID | None = None,
) -> MemoryEvent:
    """The event of a change just made to ``memory`` (not saved yet)."""
    return MemoryEvent(
        memory=memory,
        action=action,
        actor=actor,
        actor_label=actor_label,
        before=before,
        after=memory.snapshot(),
        batch=batch,
    )


# Written outside events (see the module's docstring); none is in Memory.snapshot().
BOOKKEEPING_FIELDS = (
    "access_count",
    "last_accessed_at",
    "embedding",
    "embedding_model",
    "search_document",
    "search_vector",
    "faded_at",
    "confidence_lowered_at",
)

# Who a change made by no person is recorded as (MemoryEvent.actor_label).
FORGETTING_ACTOR_LABEL = "forgetting"

# A MemoryEvent row, in the order the set-based inserts give them.
EVENT_COLUMNS = ("memory_id", "action", "actor_id", "actor_label", "before", "after", "batch")


def insert_events_sql(rows: str) -> str:
    """INSERT of the events ``rows`` (SQL giving EVENT_COLUMNS and created_at, in order) selects."""
    columns = ", ".join((*EVENT_COLUMNS, "created_at"))
    return f"INSERT INTO {MemoryEvent._meta.db_table} ({columns})\n{rows}"


def _iso_sql(column: str) -> str:
    """A timestamp column as ``datetime.isoformat()`` writes it in UTC (as snapshot() does)."""
    return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')"""


def snapshot_sql(alias: str) -> str:
    """``Memory.snapshot()`` in SQL, of the row ``alias``: an event's ``after``."""
    return f"""jsonb_build_object(
        'content', {alias}.content, 'kind', {alias}.kind, 'scope', {alias}.scope,
        'project_id', {alias}.project_id, 'tags', to_jsonb({alias}.tags),
        'importance', {alias}.importance, 'confidence', {alias}.confidence,
        'pinned', {alias}.pinned, 'status', {alias}.status,
        'deleted_at', {_iso_sql(f"{alias}.deleted_at")},
        'forgotten_at', {_iso_sql(f"{alias}.forgotten_at")},
        'valid_until', {_iso_sql(f"{alias}.valid_until")},
        'superseded_by_id', {alias}.superseded_by_id, 'revision', {alias}.revision)"""


def before_sql(after: str, revision: str, put_back: dict[str, str]) -> str:
    """An event's ``before`` in SQL: the snapshot ``after`` with the changed fields put back
    (field: SQL of its old value) and the revision one lower (every change raises it)."""
    pairs = ", ".join(f"'{field}', {value}" for field, value in put_back.items())
    return f"({after} || jsonb_build_object({pairs}, 'revision', {revision} - 1))"


def json_rows_sql(model: type[Model], names: Sequence[str], alias: str) -> str:
    """The rows of a JSON array parameter of objects (``json_rows``) as a record set
    ``alias`` of ``model``'s fields ``names`` (attnames), typed as the fields: many rows in one
    parameter. An array parameter per column costs more than the statement: psycopg escapes
    the elements of an array of JSON texts one by one, in Python (0.4-0.6 ms of CPU for an
    extraction run's four events and three changed rows, against 0.04 ms)."""
    types = ", ".join(f"{n} {model._meta.get_field(n).db_type(connection)}" for n in names)
    return f"jsonb_to_recordset(%s::jsonb) AS {alias}({types})"


def json_rows(rows: list[dict[str, Any]]) -> str:
    """The parameter of ``json_rows_sql``: times and uuids as their text, which the columns'
    types read."""

    def text(value: Any) -> str:
        if isinstance(value, datetime):
            return value.isoformat()
        if isinstance(value, uuid.UUID):
            return str(value)
        raise TypeError(f"{type(value).__name__} is not JSON")

    return json.dumps(rows, default=text)


EVENT_ROW_COLUMNS = (*EVENT_COLUMNS, "created_at")
INSERT_EVENTS_SQL = insert_events_sql(
    f"SELECT * FROM {json_rows_sql(MemoryEvent, EVENT_ROW_COLUMNS, 'e')}"
)


def save_events(events: list[MemoryEvent]) -> None:
    """Save many events (from ``build_event``) in one statement, whatever their number: bulk_create's
    SQL costs more to build than to run. The events get no ids."""
    if not events:
        return
    with connection.cursor() as cursor:
        cursor.execute(INSERT_EVENTS_SQL, [events_rows(events)])


def events_rows(events: list[MemoryEvent]) -> str:
    """The parameter of INSERT_EVENTS_SQL."""
    return json_rows(
        [{column: getattr(event, column) for column in EVENT_ROW_COLUMNS} for event in events]
    )


def record_event(memory: Memory, action: str, **details: Any) -> MemoryEvent:
    """Save the event of a change just made (``details`` as for ``build_event``)."""
    event = build_event(memory, action, **details)
    event.save()
    return event
