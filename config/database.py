"""Which PostgreSQL the app talks to.

With ``DATABASE_URL`` set, that server. Without it, a private PostgreSQL with
pgvector that ``pgserver`` runs from a project-local data folder. Every process
(web, autoreloader, worker, management commands, tests) attaches to the same
embedded server; pgserver counts the processes using it and stops it when the
last one exits, so it is never started twice nor stopped under a user.

The embedded server gets a memory cache (``shared_buffers``) sized to the
machine, or as ``MEMORYAPP_PG_SHARED_BUFFERS`` says: PostgreSQL's default of
128 MB holds a small part of a large memory table and its indexes, and recall
then waits on page reads. The value is written to the server's
``postgresql.auto.conf``; it needs a restart, which happens at once when no
other process is using the server, otherwise when it next starts.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

EMBEDDED_DATABASE_NAME = "memoryapp"
# The default cache: this share of the machine's (or container's) memory, within these bounds.
SHARED_BUFFERS_SHARE = 4
SHARED_BUFFERS_MIN_MB = 128
SHARED_BUFFERS_MAX_MB = 8192
_SIZE = re.compile(r"^\s*(\d+)\s*(MB|GB)\s*$", re.IGNORECASE)
# Where a container's memory limit is found (cgroup v2, then v1).
CGROUP_MEMORY_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
)


def database_settings(environ: dict[str, str] | Any, base_dir: Path) -> dict[str, Any]:
    """Django's DATABASES["default"] for this environment."""
    url = environ.get("DATABASE_URL", "").strip()
    if url:
        config = dj_database_url.parse(url, conn_max_age=int(environ.get("DB_CONN_MAX_AGE", "60")))
        config["ENGINE"] = "django.db.backends.postgresql"
        return dict(config)
    pgdata = Path(environ.get("MEMORYAPP_PGDATA", "") or base_dir / "var" / "pgdata")
    return embedded_database(pgdata, shared_buffers_mb(environ))


def shared_buffers_mb(environ: dict[str, str] | Any) -> int:
    """``MEMORYAPP_PG_SHARED_BUFFERS`` in MB, or a quarter of the memory (128 MB to 8 GB)."""
    raw = environ.get("MEMORYAPP_PG_SHARED_BUFFERS", "").strip()
    if not raw:
        share = memory_mb() // SHARED_BUFFERS_SHARE
        return max(SHARED_BUFFERS_MIN_MB, min(SHARED_BUFFERS_MAX_MB, share))
    match = _SIZE.match(raw)
    if not match or int(match[1]) == 0:
        raise ImproperlyConfigured(
            f"MEMORYAPP_PG_SHARED_BUFFERS must be a size such as 512MB or 4GB, not {raw!r}."
        )
    return int(match[1]) * (1024 if match[2].upper() == "GB" else 1)


def memory_mb() -> int:
    """The memory this process may use: the machine's, or its container's limit when lower."""
    import psutil

    limits = [psutil.virtual_memory().total]
    for path in CGROUP_MEMORY_LIMITS:
        try:
            limits.append(int(path.read_text()))
        except (OSError, ValueError):  # no such file, or "max" (no limit)
            continue
    return min(limits) // (1024 * 1024)


def embedded_database(pgdata: Path, shared_buffers: int) -> dict[str, Any]:
    """Start (or attach to) the embedded server, with ``shared_buffers`` MB of cache."""
    # platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); its /tmp fallback is fine.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pgserver
    from pgserver.postgres_server import PostgresServer

    pgdata = pgdata.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_processes(pgdata)
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    if _configure(server, shared_buffers):
        # Detaching stops the server when no other process uses it, and get_server starts it
        # again with the new setting. Otherwise it keeps running, get_server hands back this
        # handle, now unregistered, and the setting waits for the server's next start.
        server.cleanup()
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
        with PostgresServer._lock:
            server.global_process_id_list.get_and_add(os.getpid())
    with _connect(server) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (EMBEDDED_DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE_NAME}"')
    info = server.get_postmaster_info()
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": EMBEDDED_DATABASE_NAME,
        "USER": "postgres",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def _connect(server: Any) -> Any:
    import psycopg

    info = server.get_postmaster_info()
    return psycopg.connect(
        host=str(info.socket_dir),
        port=info.port,
        user="postgres",
        dbname="postgres",
        autocommit=True,
    )


def _configure(server: Any, shared_buffers: int) -> bool:
    """Write ``shared_buffers`` (MB) to the server's configuration when it runs with another;
    True when it must restart for that."""
    from psycopg import sql

    with _connect(server) as conn:
        row = conn.execute(
            "SELECT setting::bigint * pg_size_bytes(unit) / (1024 * 1024) "
            "FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
        if row is not None and row[0] == shared_buffers:
            return False
        conn.execute(
            sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(
                sql.Literal(f"{shared_buffers}MB")
            )
        )
    return True


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
