"""A forked process (django-q2's sentinel, workers, pusher and monitor are forked from
``qcluster``) opens its own database connections instead of using its parent's pooled ones:
two processes writing on one connection mix their messages (the pusher then failed with
"can't change 'autocommit' now", and a worker's lock was not its own)."""

from __future__ import annotations

import os

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def test_a_forked_child_does_not_use_its_parents_pooled_connection() -> None:
    parent = _backend_pid()
    # As django-q2 does before it forks: the connection goes back to the pool, still open.
    connection.close()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        try:
            os.write(write, str(_backend_pid()).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    answer = os.read(read, 100).decode()
    os.close(read)
    assert answer and int(answer) != parent
    # The child's connection was its own: the parent's pool never hands it out.
    assert _backend_pid() != int(answer)
