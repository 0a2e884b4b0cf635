"""Timestamps read by psycopg's C loader, for the queries that read hundreds of them.

Django loads every ``timestamptz`` through psycopg's pure-Python loader, then puts its time
zone on each value. The C loader gives the same values, time zone included, since Django
sets the session's time zone to its own (``DatabaseWrapper.ensure_timezone``). The injection
preview reads ~470 timestamps: preview p95 50.9 ms with the C loader, 58.6 ms without
(benchmarks/speed_tricks.py, 3 rounds at --scale 1: +13 %). Extraction's lookups went back
to Django's loader: it gained nothing there.
"""

from __future__ import annotations

from typing import Any

from psycopg import adapters
from psycopg.postgres import types
from psycopg.pq import Format

_C_LOADER = adapters.get_loader(types["timestamptz"].oid, Format.TEXT)


def read_timestamps_in_c(cursor: Any) -> None:
    """Make ``cursor`` (one of Django's) load the ``timestamptz`` columns in C."""
    cursor.cursor.adapters.register_loader("timestamptz", _C_LOADER)
