"""What a self-hoster does to a production database (docs/DEPLOY.md), on the separate server:
back up and restore, upgrade from the previous release with data in it, and ``check
--deploy`` with the documented production settings.

Backups connect through the server's socket folder (``?host=``): pg_dump must be at least
the server's version, and of the two here the machine's (15) is older than the server (16)
and pgserver's has no TLS. The docs say the same for a real deployment.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ARTIFACTS
from tests.deploy.app import App
from tests.deploy.releases import CLIENT_HOSTS, PREVIOUS_RELEASE, fill, previous_release
from tests.deploy.server import BASE_DIR, ExternalPostgres

DEPLOY_DOC = BASE_DIR / "docs" / "DEPLOY.md"
# What the fill leaves, each user: a few of everything.
USERS, MEMORIES, CONVERSATIONS, MESSAGES = 2, 12, 2, 10


def snapshot(server: ExternalPostgres, dbname: str) -> dict[str, tuple[int, str]]:
    """Every table's row count and a digest of its rows."""
    with server.connect(dbname) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            )
        ]
        digest = (
            "SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), ''))"
            ' FROM "{}" t'
        )
        found = {}
        for table in tables:
            row = conn.execute(digest.format(table)).fetchone()
            assert row is not None
            found[table] = (int(row[0]), str(row[1]))
        return found


def assert_serves(app: App, secrets: list[str]) -> None:
    """Through ``app``: every migration applied, each token recalls memories and may add one."""
    app.shell(
        "import json\n"
        "from django.db import connection\n"
        "from django.db.migrations.executor import MigrationExecutor\n"
        "from django.test import Client\n"
        "executor = MigrationExecutor(connection)\n"
        "assert not executor.migration_plan(executor.loader.graph.leaf_nodes()), 'unapplied'\n"
        f"for secret in {secrets!r}:\n"
        "    client = Client(HTTP_AUTHORIZATION=f'Bearer {secret}')\n"
        "    answer = client.post('/api/v1/injection-preview', json.dumps({'message': "
        "'What about pytest and Vue?', 'sources': ['memories']}), content_type='application/json')\n"
        "    assert answer.status_code == 200 and answer.json()['memories'], answer.content\n"
        "    added = client.post('/api/v1/memories', json.dumps({'content': 'Afterwards'}),"
        " content_type='application/json')\n"
        "    assert added.status_code == 201, added.content\n",
        ALLOWED_HOSTS=CLIENT_HOSTS,
    )


@pytest.fixture(scope="module")
def filled(external_postgres: ExternalPostgres) -> tuple[App, dict[str, str]]:
    external_postgres.create_database("ops")
    app = App(external_postgres.socket_url("ops"), name="ops")
    app.manage("migrate", "--noinput")
    return app, fill(app, USERS, MEMORIES, CONVERSATIONS, MESSAGES)


def test_a_backup_restores_every_users_data_into_an_empty_database(
    external_postgres: ExternalPostgres, filled: tuple[App, dict[str, str]], tmp_path: Path
) -> None:
    app, tokens = filled
    before = snapshot(external_postgres, "ops")
    for table in ("memoryapp_memory", "memoryapp_memoryevent", "memoryapp_conversation",
                  "memoryapp_message", "memoryapp_extractionrun", "accounts_apitoken",
                  "memoryapp_accesslog", "auth_user"):  # fmt: skip
        assert before[table][0] > 0, f"the fill left {table} empty"

    backup = tmp_path / "memoryapp.dump"
    assert "Backed up database ops" in app.manage("backup_database", str(backup))

    external_postgres.create_database("ops_restored")
    restored = App(external_postgres.socket_url("ops_restored"), name="ops-restored")
    assert "Restored" in restored.manage("restore_database", str(backup))
    assert snapshot(external_postgres, "ops_restored") == before

    # The restored database serves: tokens, vectors and search indexes came back, and the
    # sequences go on after the restored rows.
    assert_serves(restored, list(tokens.values()))

    # A database that is not empty is refused, and left as it was.
    again = restored.run_manage("restore_database", str(backup))
    assert again.returncode != 0
    assert "already has" in again.stderr and "empty database" in again.stderr
    assert "Traceback" not in again.stderr


def test_an_upgrade_from_the_previous_release_keeps_every_row(
    external_postgres: ExternalPostgres, tmp_path: Path
) -> None:
    external_postgres.create_database("upgrade")
    url = external_postgres.url("upgrade")
    old = App(url, name="upgrade-old", code_dir=previous_release(tmp_path / "previous"))
    old.manage("migrate", "--noinput")
    tokens = fill(old, USERS, MEMORIES, CONVERSATIONS, MESSAGES)
    before = snapshot(external_postgres, "upgrade")

    new = App(url, name="upgrade-new")
    started = time.monotonic()
    new.manage("migrate", "--noinput")
    seconds = time.monotonic() - started
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "upgrade-time.txt").write_text(
        f"migrate from {PREVIOUS_RELEASE} with {USERS} users x ({MEMORIES} memories, "
        f"{CONVERSATIONS} conversations x {MESSAGES} messages): {seconds:.1f} s\n"
    )
    after = snapshot(external_postgres, "upgrade")
    # A release may add models (their content types and permissions) and scheduled jobs: those
    # tables may grow; every other row is kept as it was.
    registries = {
        "django_migrations",
        "django_content_type",
        "auth_permission",
        "django_q_schedule",
    }
    counts = {table: after[table][0] for table in before if table not in registries}
    assert counts == {table: before[table][0] for table in counts}
    assert all(after[table][0] >= before[table][0] for table in registries & before.keys())
    assert_serves(new, list(tokens.values()))


def production_settings() -> dict[str, str]:
    """The settings docs/DEPLOY.md gives for production (its first ``env`` block)."""
    block = re.search(r"```env\n(.*?)```", DEPLOY_DOC.read_text(), re.DOTALL)
    assert block, "docs/DEPLOY.md has no ```env block"
    pairs = [line.split("=", 1) for line in block[1].splitlines() if "=" in line and line[0] != "#"]
    return {name.strip(): value.strip() for name, value in pairs}


def test_check_deploy_is_clean_with_the_documented_production_settings(
    external_postgres: ExternalPostgres, filled: tuple[App, dict[str, str]]
) -> None:
    app, _tokens = filled
    documented: dict[str, Any] = production_settings()
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS"} <= set(
        documented
    )
    # Its placeholders filled in: this server, and a key of the length it asks for.
    documented["DATABASE_URL"] = app.database_url
    documented["SECRET_KEY"] = app.secret_key
    out = app.run_manage("check", "--deploy", "--fail-level", "WARNING", **documented)
    assert out.returncode == 0, out.stderr
    assert "no issues" in out.stdout
