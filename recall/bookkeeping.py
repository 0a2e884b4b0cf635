"""What an injection preview leaves behind: its access log row (``recall.access``) and one
more use of each memory it injected (``access_count``, ``last_accessed_at``, which ranking
and forgetting read).

A speed trick that earns its place: the preview answers first, and what it leaves behind is
gathered in the process and written by one flush on a side connection at most every
FLUSH_SECONDS, all previews' rows in one INSERT and all uses in one UPDATE. Written after
each preview, it took a side connection and both cores away from the next one: preview p95
50.9 ms batched, 63.1 ms written after each (benchmarks/speed_tricks.py, 3 rounds at
--scale 1: +19 %). Concurrent
previews inject the same memories (pinned ones always), and an UPDATE each would also queue
on those rows' locks.

Inside a transaction (a caller's atomic block, every test that runs in one) it is written at
once on the caller's connection, and commits or fails with the caller's writes.

Bookkeeping, not a change with an event (see memories.services' docstring): committed
without waiting for the disk, so a crash may lose the last fraction of a second of it,
never anything a user wrote. What is still gathered when the process exits is written then.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.utils import timezone

from core import side_connections
from memories.models import Memory
from memories.sensitive import redact
from recall.models import AccessLog

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from accounts.models import ApiToken
    from conversations.models import Conversation

logger = logging.getLogger(__name__)

FLUSH_SECONDS = 0.25
# How much of the user's message the access log keeps (the /settings/access page).
QUERY_LOGGED_CHARS = 500

# The uses of the memories no other transaction has locked are counted; the ids of those
# that one has are returned, to be counted by the next flush. Waiting for the locks (other
# processes' flushes update the same memories: pinned ones are in every preview) held back
# the cleanup of old row versions, so that a fifth of the updates, with 4 clients, no longer
# fit in their page and added an entry to every index of the table, HNSW ones included.
_COUNT_USES_SQL = f"""
WITH locked AS (
    SELECT id FROM {Memory._meta.db_table} WHERE id = ANY(%(ids)s) FOR UPDATE SKIP LOCKED
), counted AS (
    UPDATE {Memory._meta.db_table} m
    SET access_count = m.access_count + v.uses,
        last_accessed_at = GREATEST(m.last_accessed_at, v.last_used)
    FROM unnest(%(ids)s::bigint[], %(uses)s::int[], %(last_used)s::timestamptz[])
        AS v(id, uses, last_used)
    WHERE m.id = v.id AND m.id IN (SELECT id FROM locked)
)
SELECT id FROM {Memory._meta.db_table} WHERE id = ANY(%(ids)s) AND id NOT IN (SELECT id FROM locked)
"""

_lock = threading.Lock()
# Gathered and not yet written: access log rows, and {memory id: (uses, last used)}.
_logs: list[AccessLog] = []
_uses: dict[int, tuple[int, datetime]] = {}
_flush_due = False


def record_access(
    *,
    user: User,
    memory_ids: Sequence[int],
    api_token: ApiToken | None,
    client: str,
    conversation: Conversation | None,
    block_hash: str,
    message_ids: Sequence[int] = (),
    query: str = "",
) -> None:
    """The access log row of a preview, and one use of each memory it injected, at ``now``."""
    now = timezone.now()
    log = AccessLog(
        user=user,
        api_token=api_token,
        client=client[:100],
        conversation=conversation,
        memory_ids=list(memory_ids),
        message_ids=list(message_ids),
        query=query[:QUERY_LOGGED_CHARS],
        block_hash=block_hash,
        created_at=now,
    )
    uses = {memory_id: (1, now) for memory_id in memory_ids}
    if connection.in_atomic_block:
        _gather([], _write([log], uses))
    else:
        _gather([log], uses)


def _gather(logs: list[AccessLog], uses: dict[int, tuple[int, datetime]]) -> None:
    """Keep ``logs`` and ``uses`` for the next flush, and make sure one is coming."""
    global _flush_due
    if not logs and not uses:
        return
    with _lock:
        _logs.extend(logs)
        for memory_id, (count, last_used) in uses.items():
            gathered, gathered_last_used = _uses.get(memory_id, (0, last_used))
            _uses[memory_id] = (gathered + count, max(gathered_last_used, last_used))
        if _flush_due:
            return
        _flush_due = True
    timer = threading.Timer(FLUSH_SECONDS, side_connections.after, args=(flush,))
    timer.daemon = True
    timer.start()


def flush() -> None:
    """Write what was gathered, on the current thread's connection."""
    global _flush_due
    with _lock:
        logs, uses = _logs[:], dict(_uses)
        _logs.clear()
        _uses.clear()
        _flush_due = False
    if logs or uses:
        _gather([], _write(logs, uses))


def _write(
    logs: list[AccessLog], uses: dict[int, tuple[int, datetime]]
) -> dict[int, tuple[int, datetime]]:
    """Write ``logs`` and ``uses``; the uses of memories another transaction has locked are
    returned, not written (``_COUNT_USES_SQL``)."""
    for log in logs:
        log.query = redact(log.query)[0]
    with transaction.atomic():
        if len(connection.atomic_blocks) == 1:  # Not part of a caller's transaction.
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit = off")
        AccessLog.objects.bulk_create(logs)
        if not uses:
            return {}
        ids = list(uses)
        with connection.cursor() as cursor:
            cursor.execute(
                _COUNT_USES_SQL,
                {
                    "ids": ids,
                    "uses": [uses[pk][0] for pk in ids],
                    "last_used": [uses[pk][1] for pk in ids],
                },
            )
            return {memory_id: uses[memory_id] for (memory_id,) in cursor.fetchall()}


def _forget_gathered() -> None:
    """In a forked child: the parent writes what it gathered, and its timer is not here."""
    global _flush_due, _lock
    _lock = threading.Lock()
    _logs.clear()
    _uses.clear()
    _flush_due = False


def _flush_at_exit() -> None:
    try:
        flush()
    except Exception:
        logger.exception("The last access log rows and uses could not be written")


os.register_at_fork(after_in_child=_forget_gathered)
atexit.register(_flush_at_exit)
