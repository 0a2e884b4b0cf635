from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from memoryapp.database import EMBEDDED_DATABASE_NAME, database_settings
from memoryapp.migration_operations import VECTOR_MISSING

BASE_DIR = Path(settings.BASE_DIR)


def test_database_url_points_at_that_server() -> None:
    config = database_settings(
        {"DATABASE_URL": "postgres://app:s3cret@db.internal:5433/memories"}, BASE_DIR
    )
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.internal", 5433, "memories")
    assert (config["USER"], config["PASSWORD"]) == ("app", "s3cret")


def test_without_database_url_the_embedded_server_is_used_and_shared() -> None:
    pgdata = os.environ.get("MEMORYAPP_PGDATA") or str(BASE_DIR / "var" / "pgdata")
    config = database_settings({"MEMORYAPP_PGDATA": pgdata}, BASE_DIR)
    # The same running server as this test process uses: attached, not started twice.
    assert config["HOST"] == settings.DATABASES["default"]["HOST"]
    assert config["PORT"] == settings.DATABASES["default"]["PORT"]
    assert config["NAME"] == EMBEDDED_DATABASE_NAME


@pytest.mark.django_db
def test_the_embedded_server_provides_pgvector() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone() is not None


def _system_postgres_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _system_postgres_reachable(), reason="no PostgreSQL without pgvector here")
def test_a_server_without_pgvector_fails_migrate_with_one_clear_sentence() -> None:
    # This machine's system PostgreSQL 15 has no pgvector.
    env = {**os.environ, "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/test"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "memoryapp", "0001", "--noinput"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert VECTOR_MISSING in result.stderr
    assert "Traceback" not in result.stderr
