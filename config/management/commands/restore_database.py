"""``manage.py restore_database FILE``: a ``backup_database`` file into an empty database.

The database must be empty (no tables): made by the admin step of docs/DEPLOY.md, pgvector
included. The restore is one transaction: it happens whole or not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from config import postgres_programs


class Command(BaseCommand):
    help = "Restore a backup_database FILE into the (empty) database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["file"]
        if not source.is_file():
            raise CommandError(f"No backup file at {source}.")
        name = connection.settings_dict["NAME"]
        if tables := connection.introspection.table_names():
            raise CommandError(
                f"Database {name} already has {len(tables)} tables: restore into an empty "
                "database (create one as docs/DEPLOY.md says and point DATABASE_URL at it)."
            )
        postgres_programs.run(
            "pg_restore", "--no-owner", "--no-privileges", "--exit-on-error",
            "--single-transaction", f"--dbname={name}", str(source),
        )  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        self.stdout.write(f"Restored {source} into database {name}.")
