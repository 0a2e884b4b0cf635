"""``manage.py backup_database FILE``: the whole database in one file (pg_dump's custom format).

Everything is in it: every user's memories and their history, conversations, messages,
extraction runs, API tokens (hashed), the access log, teams, settings and the job queue.
``restore_database FILE`` brings it back into an empty database (docs/DEPLOY.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from config import postgres_programs


class Command(BaseCommand):
    help = "Back up the whole database into FILE (pg_dump's custom format)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        target: Path = options["file"]
        # Ownership and grants are the server admin's: the restore gives every object to
        # the role it runs as. The extension's comment is its owner's (a superuser's).
        postgres_programs.run(
            "pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--no-comments",
            f"--file={target}",
        )  # fmt: skip
        size_mb = target.stat().st_size / (1024 * 1024)
        self.stdout.write(
            f"Backed up database {connection.settings_dict['NAME']} into {target} "
            f"({size_mb:.1f} MB)."
        )
