"""PostgreSQL's own programs (pg_dump, pg_restore) run against the app's database.

They connect as the app does: the same server, role, password and connection options
(``?sslmode=``, ``?sslrootcert=``, ``?host=``… of DATABASE_URL), handed to them as libpq's
environment variables, so no password shows in a process list. The embedded server is
started first if needed. Of the programs on the PATH and those pgserver ships (version 16),
the first recent enough for the server is used: pg_dump refuses a newer server than itself.
pgserver's programs have no TLS: a connection that requires it needs the PATH's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from django.core.management.base import CommandError
from django.db import connection

from config.embedded_postgres import binaries

# libpq's environment variable for each connection parameter the app may use.
ENVIRONMENT = {
    "host": "PGHOST",
    "port": "PGPORT",
    "user": "PGUSER",
    "password": "PGPASSWORD",
    "dbname": "PGDATABASE",
    "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "sslcrl": "PGSSLCRL",
    "options": "PGOPTIONS",
    "application_name": "PGAPPNAME",
    "connect_timeout": "PGCONNECT_TIMEOUT",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
    "passfile": "PGPASSFILE",
    "service": "PGSERVICE",
}
# The sslmode values that make a connection fail without TLS.
TLS_MODES = ("require", "verify-ca", "verify-full")
_VERSION = re.compile(r"\s(\d+)(?:\.\d+)?")


def connection_environment() -> dict[str, str]:
    """libpq's variables for the app's database, the process's own environment beside them
    (other options, such as keepalives, do not matter to a dump or a restore)."""
    params = connection.get_connection_params()
    environ = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
    for name, variable in ENVIRONMENT.items():
        if params.get(name) not in (None, ""):
            environ[variable] = str(params[name])
    return environ


def server_major_version() -> int:
    connection.ensure_connection()
    return int(connection.pg_version) // 10000  # type: ignore[attr-defined]


def program(name: str, *, tls: bool) -> Path:
    """``name`` (pg_dump, pg_restore) in a version at least the server's; with ``tls``, one
    that can connect with TLS (pgserver's are built without it)."""
    needed = server_major_version()
    candidates = [found for found in (shutil.which(name),) if found]
    if not tls:
        candidates.append(str(binaries() / name))
    versions = []
    for candidate in candidates:
        output = subprocess.run(
            [candidate, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
        match = _VERSION.search(output)
        version = int(match[1]) if match else 0
        if version >= needed:
            return Path(candidate)
        versions.append(f"{candidate} (version {version})")
    raise CommandError(
        f"{name} {needed} or newer{' with TLS' if tls else ''} is needed for this PostgreSQL "
        f"{needed} server; found {', '.join(versions) or 'none'}. Install PostgreSQL {needed}'s "
        "client programs (Debian, Ubuntu: postgresql-client-"
        f"{needed}), or run this where the server's socket folder is reachable (?host=)."
    )


def run(name: str, *args: str) -> None:
    """Run ``name`` with ``args`` against the app's database; its error as a CommandError."""
    environ = connection_environment()
    result = subprocess.run(
        [str(program(name, tls=environ.get("PGSSLMODE", "") in TLS_MODES)), *args],
        env=environ,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise CommandError(f"{name} failed: {result.stderr.strip()}")
