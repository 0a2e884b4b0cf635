"""Statements the database server parses and plans once per connection.

Django binds parameters in the client and never prepares a statement (so that
connection poolers in transaction mode work). An extraction run sends the same
few statements every time, and for most of them parsing and planning cost as
much as running them: the run's five-table read took 0.35 ms to plan and run
and 1.15 ms to send as text; prepared, 0.72 ms. A cursor from
``prepared_cursor`` binds parameters on the server and prepares each statement
the first time its connection sends it; it is Django's cursor otherwise (logged,
errors wrapped, in the same transaction). A prepared statement holds one
statement only, and a parameter needs a type the server can infer (cast it where
the SQL does not say, e.g. ``%s::integer IS NULL``).

Only statements whose plan cannot depend on their parameters belong here (rows found
by id): after five runs the server may keep one generic plan for a prepared
statement, which would serve a pool of ten memories and one of a million alike.
Reconciliation's searches stay unprepared (preparing them too gained nothing).

The server plans a prepared statement again after a migration changes its tables; one that
changes the type of a column it returns fails it instead ("cached plan must not change
result type") until the connection is replaced (``DB_CONN_MAX_AGE``, a minute by default):
a run that fails so is retried (runs.py). Restart the worker after such a migration.

``DATABASE_PREPARED_STATEMENTS=false`` turns it off, for a pooler that cannot
keep prepared statements (PgBouncer before 1.21 in transaction mode): the
cursor is then Django's own.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorWrapper

# Django leaves the connection's threshold unset, which prepares nothing; with this one only
# what these cursors ask for is prepared, never a statement by how often it is sent.
_ONLY_WHEN_ASKED = 2**31 - 1


class _PreparingCursor(psycopg.Cursor[Any]):
    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: Any = None
    ) -> _PreparingCursor:
        super().execute(query, params, prepare=True, binary=binary)
        return self

    def _send_query_prepared(self, name: bytes, pgq: Any, *, binary: bool | None = None) -> None:
        # Kept as an unprepared statement keeps it: Django's query log reads the SQL from it.
        self._query = pgq
        super()._send_query_prepared(name, pgq, binary=binary)


def prepared_cursor() -> CursorWrapper:
    """A cursor of the default connection whose statements are prepared (see above)."""
    wrapper = connection.cursor()
    if settings.DATABASE_PREPARED_STATEMENTS:
        raw = connection.connection
        if raw.prepare_threshold is None:
            raw.prepare_threshold = _ONLY_WHEN_ASKED
        wrapper.cursor = _PreparingCursor(raw)
    return wrapper
