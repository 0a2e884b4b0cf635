"""Which PostgreSQL the app talks to.

With ``DATABASE_URL`` set, that server. Without it, a private PostgreSQL with
pgvector that ``pgserver`` runs from a project-local data folder. Every process
(web, autoreloader, worker, management commands, tests) attaches to the same
embedded server; pgserver counts the processes using it and stops it when the
last one exits, so it is never started twice nor stopped under a user.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import dj_database_url

EMBEDDED_DATABASE_NAME = "memoryapp"


def database_settings(environ: dict[str, str] | Any, base_dir: Path) -> dict[str, Any]:
    """Django's DATABASES["default"] for this environment."""
    url = environ.get("DATABASE_URL", "").strip()
    if url:
        config = dj_database_url.parse(url, conn_max_age=int(environ.get("DB_CONN_MAX_AGE", "60")))
        config["ENGINE"] = "django.db.backends.postgresql"
        return dict(config)
    pgdata = Path(environ.get("MEMORYAPP_PGDATA", "") or base_dir / "var" / "pgdata")
    return embedded_database(pgdata)


def embedded_database(pgdata: Path) -> dict[str, Any]:
    # platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); its /tmp fallback is fine.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pgserver
    import psycopg

    pgdata = pgdata.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_processes(pgdata)
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    info = server.get_postmaster_info()
    host = str(info.socket_dir)
    with psycopg.connect(
        host=host, port=info.port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (EMBEDDED_DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE_NAME}"')
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": EMBEDDED_DATABASE_NAME,
        "USER": "postgres",
        "HOST": host,
        "PORT": str(info.port),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def _forget_dead_processes(pgdata: Path) -> None:
    """Drop processes that died without saying so from pgserver's list of users of the server.

    pgserver stops the server when the last process on that list exits; a process
    killed outright never leaves it (and one killed while writing leaves the file
    empty), which would keep the server running forever or break the next start.
    """
    import psutil
    from pgserver.postgres_server import PostgresServer

    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    with PostgresServer._lock:
        try:
            pids = json.loads(handles.read_text())
        except ValueError:
            pids = None
        alive = [pid for pid in pids or [] if isinstance(pid, int) and psutil.pid_exists(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))
