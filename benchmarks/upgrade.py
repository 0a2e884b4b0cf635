"""An upgrade from the previous release on a large database, timed.

    python benchmarks/upgrade.py                                   # 100,000 memories and messages
    python benchmarks/upgrade.py --memories 1000000 --messages 1000000

Starts a separate PostgreSQL server as the deploy tests do (tests/deploy/server.py: TLS,
passwords, the app's own role), builds the previous release's database with that release's
code (its migrations, then its API: users, tokens, memories, conversations extracted,
previews in the access log), copies those rows in SQL up to the sizes asked for, and times
this release's ``manage.py migrate`` on it. ``make test`` runs the same upgrade on a small
database (tests/deploy/test_operations.py); this is the one to run before a release whose
migrations touch large tables.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from _setup import setup_django


def columns(conn: psycopg.Connection[Any], table: str, leave_out: set[str]) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
        "AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [f'"{row[0]}"' for row in rows if row[0] not in leave_out]


def grow(conn: psycopg.Connection[Any], table: str, target: int) -> None:
    """Copy ``table``'s rows until it holds ``target`` of them."""
    count = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]  # type: ignore[index]
    if not count:
        return
    names = ", ".join(columns(conn, table, {"id"}))
    copies = max(0, target // count - 1)
    conn.execute(
        f'INSERT INTO "{table}" ({names}) SELECT {names} FROM "{table}", '
        f"generate_series(1, {copies})"
    )


def grow_messages(conn: psycopg.Connection[Any], target: int) -> None:
    """Copy conversations with their messages until there are ``target`` messages."""
    count = conn.execute("SELECT count(*) FROM memoryapp_message").fetchone()[0]  # type: ignore[index]
    if not count:
        return
    copies = max(0, target // count - 1)
    conversation = columns(conn, "memoryapp_conversation", {"id", "external_id"})
    message = columns(conn, "memoryapp_message", {"id", "conversation_id"})
    names = ", ".join(conversation)
    conn.execute(
        f"INSERT INTO memoryapp_conversation ({names}, external_id) SELECT {names}, "
        f"external_id || '-copy-' || g FROM memoryapp_conversation, generate_series(1, {copies}) g"
    )
    picked = ", ".join(f"m.{name}" for name in message)
    conn.execute(
        f"INSERT INTO memoryapp_message ({', '.join(message)}, conversation_id) "
        f"SELECT {picked}, copy.id FROM memoryapp_message m "
        "JOIN memoryapp_conversation source ON source.id = m.conversation_id "
        "JOIN memoryapp_conversation copy ON copy.owner_id = source.owner_id "
        "AND copy.external_id LIKE source.external_id || '-copy-%'"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=4)
    args = parser.parse_args()
    setup_django()
    from tests.deploy.app import App
    from tests.deploy.releases import PREVIOUS_RELEASE, fill, previous_release
    from tests.deploy.server import ExternalPostgres

    server = ExternalPostgres().start()
    try:
        url = server.url()
        with tempfile.TemporaryDirectory() as folder:
            old = App(
                url, name="upgrade-bench-old", code_dir=previous_release(Path(folder) / "old")
            )
            old.manage("migrate", "--noinput")
            fill(old, args.users, 50, 5, 40)
        started = time.perf_counter()
        with server.connect() as conn:
            grow(conn, "memoryapp_memory", args.memories)
            grow(conn, "memoryapp_accesslog", args.memories // 10)
            grow_messages(conn, args.messages)
            conn.commit()
        with server.connect() as conn:
            conn.autocommit = True
            conn.execute("VACUUM ANALYZE")
            sizes = conn.execute(
                "SELECT (SELECT count(*) FROM memoryapp_memory), "
                "(SELECT count(*) FROM memoryapp_message), "
                "pg_size_pretty(pg_database_size(current_database()))"
            ).fetchone()
        assert sizes is not None
        print(
            f"previous release {PREVIOUS_RELEASE}: {sizes[0]:,} memories, {sizes[1]:,} messages, "
            f"{sizes[2]} (filled in {time.perf_counter() - started:.0f} s)"
        )
        new = App(url, name="upgrade-bench-new")
        started = time.perf_counter()
        new.manage("migrate", "--noinput", timeout=7200)
        print(f"manage.py migrate to this release: {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        new.manage("migrate", "--noinput")
        print(f"manage.py migrate again (nothing to do): {time.perf_counter() - started:.1f} s")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
