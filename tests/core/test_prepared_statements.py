"""core.prepared_statements: statements prepared once per connection, logged as any other."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.prepared_statements import prepared_cursor

pytestmark = pytest.mark.django_db

STATEMENT = "SELECT %(a)s::integer + %(b)s::integer AS total"


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_a_statement_is_prepared_once_and_answers_as_usual() -> None:
    for a in range(3):
        with prepared_cursor() as cursor:
            cursor.execute(STATEMENT, {"a": a, "b": 40})
            assert cursor.fetchone() == (a + 40,)
    assert sum("AS total" in statement for statement in _prepared()) == 1


def test_django_cursors_prepare_nothing_beside_it() -> None:
    with prepared_cursor() as cursor:
        cursor.execute(STATEMENT, {"a": 1, "b": 2})
    for _ in range(10):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 41 + 1 AS unprepared")
    assert not any("unprepared" in statement for statement in _prepared())


def test_the_query_log_shows_the_statement_and_errors_are_djangos() -> None:
    from django.db import DataError

    with CaptureQueriesContext(connection) as captured, prepared_cursor() as cursor:
        cursor.execute(STATEMENT, {"a": 1, "b": 2})
        cursor.execute(STATEMENT, {"a": 3, "b": 4})
    assert [query["sql"] for query in captured] == ["SELECT $1::integer + $2::integer AS total"] * 2
    with pytest.raises(DataError), prepared_cursor() as cursor:
        cursor.execute("SELECT %s::integer", ["not a number"])


def test_turned_off_it_is_djangos_cursor(settings: Any) -> None:
    settings.DATABASE_PREPARED_STATEMENTS = False
    with prepared_cursor() as cursor:
        cursor.execute(STATEMENT + "_off", {"a": 1, "b": 2})
        assert cursor.fetchone() == (3,)
    assert not any("total_off" in statement for statement in _prepared())
