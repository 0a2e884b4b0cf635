"""Which PostgreSQL the app talks to.

With ``DATABASE_URL`` set, that server. Without it, a private PostgreSQL with
pgvector that ``pgserver`` runs from a project-local data folder (see
config/embedded_postgres.py). Every process (web, autoreloader, worker,
management commands, tests) attaches to the same embedded server; pgserver
counts the processes using it and stops it when the last one exits, so it is
never started twice nor stopped under a user.

Reading the settings starts nothing: ``database_settings`` only says where the
data folder is, and the database backend (config/db_backend) starts or attaches
to the server when it first connects. Long-lived entry points (``manage.py
runserver``/``serve``/``qcluster``, wsgi, asgi) start it at once with
``start_embedded_servers`` so it belongs to the process that outlives its
forked workers and reloaded children.

The embedded server gets a memory cache (``shared_buffers``) sized to the
machine, or as ``MEMORYAPP_PG_SHARED_BUFFERS`` says: PostgreSQL's default of
128 MB holds a small part of a large memory table and its indexes, and recall
then waits on page reads. The value is written to the server's
``postgresql.auto.conf``; it needs a restart, which happens at once when no
other process is using the server, otherwise when it next starts.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config import embedded_postgres
from config.embedded_postgres import Running

EMBEDDED_DATABASE_NAME = "memoryapp"
EMBEDDED_ENGINE = "config.db_backend"
# The default cache: this share of the machine's (or container's) memory, within these bounds.
SHARED_BUFFERS_SHARE = 4
SHARED_BUFFERS_MIN_MB = 128
SHARED_BUFFERS_MAX_MB = 8192
_SIZE = re.compile(r"^\s*(\d+)\s*(MB|GB)\s*$", re.IGNORECASE)
# Set by the ASGI entry point: its process takes connections from a pool.
POOL_VARIABLE = "MEMORYAPP_CONNECTION_POOL"
# Connections a web process may hold at once (requests and side connections).
DEFAULT_POOL_SIZE = 20
# Seconds a request waits for one of them: under load it is answered 503 (Retry-After) at
# once rather than queued for long (the pool's own default, 30 s, made clients time out);
# benchmarks/preview_load.py measures it.
DEFAULT_POOL_TIMEOUT = 0.5
# Where a container's memory limit is found (cgroup v2, then v1).
CGROUP_MEMORY_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
)


def database_settings(environ: dict[str, str] | Any, base_dir: Path) -> dict[str, Any]:
    """Django's DATABASES["default"] for this environment."""
    url = environ.get("DATABASE_URL", "").strip()
    if url:
        config: dict[str, Any] = {**dj_database_url.parse(url)}
        config["ENGINE"] = "django.db.backends.postgresql"
        return with_connection_reuse(config, environ)
    pgdata = Path(environ.get("MEMORYAPP_PGDATA", "") or base_dir / "var" / "pgdata")
    embedded = {
        "ENGINE": EMBEDDED_ENGINE,
        "NAME": EMBEDDED_DATABASE_NAME,
        "USER": "postgres",
        # Filled in by the backend when it first connects (the server picks them).
        "HOST": "",
        "PORT": "",
        "EMBEDDED": {
            "PGDATA": str(pgdata.expanduser().resolve()),
            "SHARED_BUFFERS_MB": shared_buffers_mb(environ),
        },
    }
    return with_connection_reuse(embedded, environ)


def with_connection_reuse(config: dict[str, Any], environ: dict[str, str] | Any) -> dict[str, Any]:
    """``config`` with ``connection_reuse``'s settings, its OPTIONS merged with theirs: the
    URL's ``?sslmode=``, ``?host=``, ``?options=``… are connection options too, and a pool
    that replaced them would silently connect without TLS, or to another server."""
    reuse = connection_reuse(environ)
    options = {**config.get("OPTIONS", {}), **reuse.pop("OPTIONS", {})}
    return {**config, **reuse, **({"OPTIONS": options} if options else {})}


def connection_reuse(environ: dict[str, str] | Any) -> dict[str, Any]:
    """How connections are reused: a pool in the ASGI web server, one per thread elsewhere.

    Under ASGI Django runs each request's view in a thread of its own, so a connection kept
    per thread (CONN_MAX_AGE) would be opened anew by every request and left open until the
    thread's objects are collected; a pool (psycopg_pool) reuses a few connections whatever
    the thread. config/asgi.py asks for it (POOL_VARIABLE). Other processes keep a
    connection per thread: the django-q2 worker forks its workers, and a pool's connections
    must not be shared across a fork.
    """
    if environ.get(POOL_VARIABLE, "").strip().lower() not in ("1", "true", "yes", "on"):
        return {
            "CONN_MAX_AGE": int(environ.get("DB_CONN_MAX_AGE", "") or 60),
            "CONN_HEALTH_CHECKS": True,
        }
    size = int(environ.get("DB_POOL_SIZE", "") or DEFAULT_POOL_SIZE)
    timeout = float(environ.get("DB_POOL_TIMEOUT", "") or DEFAULT_POOL_TIMEOUT)
    return {
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {"pool": {"min_size": 1, "max_size": size, "timeout": timeout}},
    }


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


_started: dict[tuple[str, int], Running] = {}
_starting = threading.Lock()


def ensure_embedded(settings_dict: dict[str, Any]) -> Running:
    """The embedded server of these connection settings, started once per process.

    Forked children (django-q2 workers) inherit this process's registration with the
    server, so they only read where it listens.
    """
    embedded = settings_dict["EMBEDDED"]
    key = (str(embedded["PGDATA"]), int(embedded["SHARED_BUFFERS_MB"]))
    with _starting:
        if key not in _started:
            _started[key] = embedded_server(Path(key[0]), key[1])
        return _started[key]


def start_embedded_servers() -> None:
    """Start the embedded server now, if the settings use one (entry points call this)."""
    from django.conf import settings

    for settings_dict in settings.DATABASES.values():
        if settings_dict.get("EMBEDDED"):
            ensure_embedded(settings_dict)


def forget_dead_users_of_embedded_servers() -> None:
    """Drop the processes that died without detaching (a reloaded child killed on Ctrl-C)
    from the embedded servers' lists of users, so this process's exit stops them."""
    from django.conf import settings

    for settings_dict in settings.DATABASES.values():
        if settings_dict.get("EMBEDDED"):
            embedded_postgres.forget_dead_processes(Path(settings_dict["EMBEDDED"]["PGDATA"]))


def embedded_server(pgdata: Path, shared_buffers: int) -> Running:
    """Start (or attach to) the embedded server, with ``shared_buffers`` MB of cache, and
    create the app's database in it."""
    pgdata = pgdata.expanduser().resolve()
    server = embedded_postgres.start(pgdata)
    if _configure(server, shared_buffers):
        server = embedded_postgres.restart(server)
    with _connect(server) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (EMBEDDED_DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE_NAME}"')
    return embedded_postgres.address(server)


def _connect(server: Any) -> Any:
    import psycopg

    running = embedded_postgres.address(server)
    return psycopg.connect(
        host=running.host,
        port=running.port,
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


# Connections inherited by forked children, kept (never closed nor collected) so that a
# child never ends its parent's sessions.
_inherited: list[Any] = []


def forget_inherited_connections() -> None:
    """In a forked child (django-q2 forks its sentinel, workers, pusher and monitor): the
    parent's pooled and open connections are its parent's sockets, and two processes using
    one connection mix their messages (a pusher failed with "can't change 'autocommit'
    now", a worker's lock was not its own). The child opens its own instead; the inherited
    ones are set aside unclosed (closing one would end the parent's session)."""
    import sys

    if "django.db.backends.postgresql.base" not in sys.modules:
        return  # No connection was made before the fork.
    from django.db import connections
    from django.db.backends.postgresql.base import DatabaseWrapper

    pools: dict[str, Any] = DatabaseWrapper._connection_pools  # type: ignore[attr-defined]
    _inherited.extend(pools.values())
    pools.clear()
    for wrapper in connections.all(initialized_only=True):
        if wrapper.connection is not None:
            _inherited.append(wrapper.connection)
            wrapper.connection = None


os.register_at_fork(after_in_child=forget_inherited_connections)
