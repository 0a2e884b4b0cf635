from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from pgvector.django import VectorExtension

VECTOR_MISSING = (
    "This PostgreSQL server does not provide the pgvector extension: install pgvector on it "
    "(https://github.com/pgvector/pgvector#installation) or unset DATABASE_URL to use the "
    "embedded server, which includes it."
)


def vector_extension_available(schema_editor: Any) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return cursor.fetchone() is not None


class CreateVectorExtension(VectorExtension):
    """CREATE EXTENSION vector, or one clear sentence when the server cannot provide it."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if not vector_extension_available(schema_editor):
            raise ImproperlyConfigured(VECTOR_MISSING)
        super().database_forwards(app_label, schema_editor, from_state, to_state)
