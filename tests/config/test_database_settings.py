from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from config import database, embedded_postgres
from config.database import (
    EMBEDDED_DATABASE_NAME,
    EMBEDDED_ENGINE,
    database_settings,
    embedded_server,
    ensure_embedded,
    shared_buffers_mb,
)
from config.embedded_postgres import Running
from memories.migration_operations import VECTOR_MISSING

BASE_DIR = Path(settings.BASE_DIR)


def test_database_url_points_at_that_server() -> None:
    config = database_settings(
        {"DATABASE_URL": "postgres://app:s3cret@db.internal:5433/memories"}, BASE_DIR
    )
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.internal", 5433, "memories")
    assert (config["USER"], config["PASSWORD"]) == ("app", "s3cret")


@pytest.mark.django_db
def test_without_database_url_the_embedded_server_is_used_and_shared() -> None:
    pgdata = os.environ.get("MEMORYAPP_PGDATA") or str(BASE_DIR / "var" / "pgdata")
    config = database_settings({"MEMORYAPP_PGDATA": pgdata}, BASE_DIR)
    assert config["ENGINE"] == EMBEDDED_ENGINE
    assert config["NAME"] == EMBEDDED_DATABASE_NAME
    # The settings only say where the server lives; connecting starts it and fills in its
    # address, the same running server as this test process uses: attached, not started twice.
    assert (config["HOST"], config["PORT"]) == ("", "")
    running = ensure_embedded(config)
    assert running.host == connection.settings_dict["HOST"] == settings.DATABASES["default"]["HOST"]
    assert running.port == connection.settings_dict["PORT"] == settings.DATABASES["default"]["PORT"]


def _run(code_or_args: list[str], pgdata: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MEMORYAPP_PGDATA": str(pgdata),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, *code_or_args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _postgres_processes_of(pgdata: Path) -> list[int]:
    import psutil

    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if any("postgres" in part for part in cmdline[:1]) and str(pgdata) in " ".join(cmdline):
            found.append(process.pid)
    return found


@pytest.mark.parametrize(
    "command",
    [
        ["-c", "import config.settings; import config.test_settings"],
        ["-c", "import django; django.setup(); import config.urls"],
        ["manage.py", "help"],
        ["manage.py", "help", "qcluster"],
    ],
    ids=["import-settings", "setup", "help", "help-of-a-command"],
)
# (`manage.py check` does start it: memories/checks.py reads the embedding column's size.)
def test_reading_the_settings_starts_no_server(tmp_path: Path, command: list[str]) -> None:
    pgdata = tmp_path / "pgdata"
    result = _run(command, pgdata)
    assert result.returncode == 0, result.stderr
    # No server was initialised or started for that data folder.
    assert not (pgdata / "postmaster.pid").exists()
    assert not (pgdata / "PG_VERSION").exists()
    assert _postgres_processes_of(pgdata) == []


def test_the_first_connection_starts_the_server_and_the_last_process_stops_it(
    tmp_path: Path,
) -> None:
    pgdata = tmp_path / "pgdata"
    code = (
        "import django, pathlib, sys; django.setup()\n"
        "from django.conf import settings; from django.db import connection\n"
        "assert settings.DATABASES['default']['HOST'] == ''\n"
        "with connection.cursor() as cursor: cursor.execute('SELECT current_database()');"
        " print(cursor.fetchone()[0])\n"
        "assert (pathlib.Path(sys.argv[1]) / 'postmaster.pid').exists()\n"
        "print(settings.DATABASES['default']['HOST'])\n"
    )
    result = _run(["-c", code, str(pgdata)], pgdata)
    assert result.returncode == 0, result.stderr
    name, host = result.stdout.split()
    assert name == EMBEDDED_DATABASE_NAME and host
    # This process was its only user: the server stopped when it exited.
    assert not (pgdata / "postmaster.pid").exists()


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


def _running_shared_buffers(running: Running) -> str:
    with psycopg.connect(
        host=running.host, port=running.port, user="postgres", dbname=EMBEDDED_DATABASE_NAME
    ) as conn:
        row = conn.execute("SHOW shared_buffers").fetchone()
    assert row is not None
    return str(row[0])


def test_the_cache_size_is_applied_at_first_start_and_when_it_changes(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"

    def start(size: str) -> Running:
        return embedded_server(pgdata, shared_buffers_mb({"MEMORYAPP_PG_SHARED_BUFFERS": size}))

    try:
        assert _running_shared_buffers(start("144MB")) == "144MB"
        # Changed while only this process uses the server: restarted at once.
        assert _running_shared_buffers(start("160MB")) == "160MB"
        # Changed while another process uses it: it keeps running, this process stays
        # registered, and the new size applies when the server next starts.
        embedded_postgres.set_registered_processes(pgdata, [os.getpid(), os.getppid()])
        assert _running_shared_buffers(start("176MB")) == "160MB"
        registered = embedded_postgres.registered_processes(pgdata)
        assert sorted(registered) == sorted([os.getpid(), os.getppid()])
        embedded_postgres.set_registered_processes(pgdata, [os.getpid()])
        assert _running_shared_buffers(start("176MB")) == "176MB"
    finally:
        embedded_postgres.stop(pgdata)


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
