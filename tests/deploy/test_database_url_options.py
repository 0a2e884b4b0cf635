"""A DATABASE_URL's options (``?sslmode=``, ``?host=``, ``?options=``…) reach the connection
whether the process takes its connections from a pool (the ASGI web server) or not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from config.database import POOL_VARIABLE, database_settings
from tests.deploy.app import App
from tests.deploy.server import ExternalPostgres

BASE_DIR = Path(settings.BASE_DIR)
POOL = {"on": {POOL_VARIABLE: "true"}, "off": {}}

URLS = {
    "sslmode": (
        "postgres://app:pw@db.internal:5432/memories?sslmode=verify-full"
        "&sslrootcert=/etc/ssl/db-ca.pem",
        {"sslmode": "verify-full", "sslrootcert": "/etc/ssl/db-ca.pem"},
    ),
    "host": (
        "postgres://app:pw@/memories?host=/var/run/postgresql-17",
        {"host": "/var/run/postgresql-17"},
    ),
    "options": (
        "postgres://app:pw@db.internal/memories?sslmode=require"
        "&options=-c%20statement_timeout%3D5s",
        {"sslmode": "require", "options": "-c statement_timeout=5s"},
    ),
}


@pytest.mark.parametrize("pool", POOL)
@pytest.mark.parametrize("url_name", URLS)
def test_the_url_options_are_kept_with_the_pool_on_and_off(pool: str, url_name: str) -> None:
    url, options = URLS[url_name]
    config = database_settings({"DATABASE_URL": url, **POOL[pool]}, BASE_DIR)
    assert {name: config["OPTIONS"][name] for name in options} == options
    if pool == "on":
        assert config["OPTIONS"]["pool"]["max_size"] == 20
        assert config["CONN_MAX_AGE"] == 0
    else:
        assert "pool" not in config["OPTIONS"]
        assert config["CONN_MAX_AGE"] == 60


def test_a_url_without_options_has_only_the_pools() -> None:
    plain = "postgres://app:pw@db.internal/memories"
    assert "OPTIONS" not in database_settings({"DATABASE_URL": plain}, BASE_DIR)
    pooled = database_settings({"DATABASE_URL": plain, POOL_VARIABLE: "on"}, BASE_DIR)
    assert set(pooled["OPTIONS"]) == {"pool"}


# What a process that connected through the settings says of its connection.
REPORT = (
    "import json\n"
    "from django.db import connection\n"
    "connection.ensure_connection()\n"
    'row = connection.cursor().execute("SELECT current_database(), current_user, '
    "current_setting('statement_timeout'), inet_server_addr() IS NULL\").fetchone()\n"
    "print(json.dumps({'pooled': connection.pool is not None,"
    " 'tls': connection.connection.pgconn.ssl_in_use, 'database': row[0], 'user': row[1],"
    " 'statement_timeout': row[2], 'unix_socket': row[3]}))\n"
)


def _connect_as_the_app(server: ExternalPostgres, url: str, pool: str) -> dict[str, object]:
    out = App(url).shell(REPORT, **POOL[pool])
    return dict(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize("pool", POOL)
def test_the_app_connects_with_tls_and_options_as_the_url_says(
    external_postgres: ExternalPostgres, pool: str
) -> None:
    url = external_postgres.url(
        sslmode="verify-full",
        sslrootcert=str(external_postgres.root / "ca.pem"),
        options="-c statement_timeout=4321ms",
    )
    assert _connect_as_the_app(external_postgres, url, pool) == {
        "pooled": pool == "on",
        "tls": True,
        "database": "memoryapp",
        "user": "memoryapp",
        "statement_timeout": "4321ms",
        # The TLS front hands the server its decrypted stream on its socket.
        "unix_socket": True,
    }


@pytest.mark.parametrize("pool", POOL)
def test_the_app_connects_through_the_socket_folder_the_url_names(
    external_postgres: ExternalPostgres, pool: str
) -> None:
    # Without its ?host=, the connection would go to the machine's default socket folder
    # (another server, or none).
    report = _connect_as_the_app(external_postgres, external_postgres.socket_url(), pool)
    assert report["unix_socket"] is True and report["tls"] is False
    assert (report["database"], report["user"], report["pooled"]) == (
        "memoryapp",
        "memoryapp",
        pool == "on",
    )
