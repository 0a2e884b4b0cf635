from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pgserver
import psycopg
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from config import database
from config.database import EMBEDDED_DATABASE_NAME, database_settings, shared_buffers_mb
from memories.migration_operations import VECTOR_MISSING

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


@pytest.mark.parametrize(
    ("memory", "expected"), [(512, 128), (16 * 1024, 4096), (24 * 1024, 6144), (256 * 1024, 8192)]
)
def test_the_default_cache_is_a_quarter_of_the_memory_within_bounds(
    monkeypatch: pytest.MonkeyPatch, memory: int, expected: int
) -> None:
    monkeypatch.setattr(database, "memory_mb", lambda: memory)
    assert shared_buffers_mb({}) == expected


@pytest.mark.parametrize(("raw", "expected"), [("512MB", 512), (" 2 gb ", 2048), ("1GB", 1024)])
def test_the_cache_size_can_be_set(raw: str, expected: int) -> None:
    assert shared_buffers_mb({"MEMORYAPP_PG_SHARED_BUFFERS": raw}) == expected


@pytest.mark.parametrize("raw", ["lots", "512", "0MB", "1.5GB", "-1GB"])
def test_a_cache_size_that_is_not_a_size_is_refused(raw: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="MEMORYAPP_PG_SHARED_BUFFERS"):
        shared_buffers_mb({"MEMORYAPP_PG_SHARED_BUFFERS": raw})


def _running_shared_buffers(config: dict[str, str]) -> str:
    with psycopg.connect(
        host=config["HOST"], port=config["PORT"], user="postgres", dbname=config["NAME"]
    ) as conn:
        row = conn.execute("SHOW shared_buffers").fetchone()
    assert row is not None
    return str(row[0])


def test_the_cache_size_is_applied_at_first_start_and_when_it_changes(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"

    def start(size: str) -> dict[str, str]:
        environ = {"MEMORYAPP_PGDATA": str(pgdata), "MEMORYAPP_PG_SHARED_BUFFERS": size}
        return database_settings(environ, BASE_DIR)

    try:
        assert _running_shared_buffers(start("144MB")) == "144MB"
        # Changed while only this process uses the server: restarted at once.
        assert _running_shared_buffers(start("160MB")) == "160MB"
        # Changed while another process uses it: it keeps running, this process stays
        # registered, and the new size applies when the server next starts.
        handles = pgdata / ".handle_pids.json"
        handles.write_text(json.dumps([os.getpid(), os.getppid()]))
        assert _running_shared_buffers(start("176MB")) == "160MB"
        assert sorted(json.loads(handles.read_text())) == sorted([os.getpid(), os.getppid()])
        handles.write_text(json.dumps([os.getpid()]))
        assert _running_shared_buffers(start("176MB")) == "176MB"
    finally:
        pgserver.get_server(pgdata).cleanup()


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
