"""Helpers of the tests of deleting for good: where a text is still stored."""

from __future__ import annotations

from django.db import connection

# Column types whose text a search can read: text, JSON and arrays of them.
_TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb", "ARRAY", "tsvector")


def columns_holding(text: str) -> list[str]:
    """Every ``table.column`` of the database (information_schema) holding ``text`` in some row."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT table_name, column_name FROM information_schema.columns
               WHERE table_schema = current_schema() AND data_type = ANY(%s)
               AND table_name IN (SELECT table_name FROM information_schema.tables
                                  WHERE table_schema = current_schema()
                                  AND table_type = 'BASE TABLE')""",
            [list(_TEXT_TYPES)],
        )
        columns = cursor.fetchall()
        found = []
        for table, column in columns:
            cursor.execute(
                f'SELECT 1 FROM "{table}" WHERE strpos("{column}"::text, %s) > 0 LIMIT 1', [text]
            )
            if cursor.fetchone():
                found.append(f"{table}.{column}")
    return found
