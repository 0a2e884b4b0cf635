from __future__ import annotations

import threading

import pytest

from core import side_connections


def thread_name() -> str:
    return threading.current_thread().name


def wait_for(event: threading.Event) -> None:
    event.wait()


def fail() -> None:
    raise ValueError("no")


def test_work_runs_on_a_side_thread_and_its_failure_reaches_the_caller():
    assert side_connections.start(thread_name).result().startswith("side-connection")
    with pytest.raises(ValueError, match="no"):
        side_connections.start(fail).result()


def test_inside_a_transaction_work_runs_on_the_callers_connection(db):
    assert side_connections.start(thread_name).result() == thread_name()
    ran_in: list[str] = []
    side_connections.after(lambda: ran_in.append(thread_name()))
    assert ran_in == [thread_name()]


def test_once_the_pool_takes_no_more_work_it_runs_on_the_caller():
    """As when the interpreter exits while bookkeeping is under way."""
    side_connections.after(lambda: None)
    pool, _size = side_connections._executors[side_connections.AFTER]
    pool.shutdown(wait=True)
    ran_in: list[str] = []

    try:
        side_connections.after(lambda: ran_in.append(thread_name()))
    finally:
        del side_connections._executors[side_connections.AFTER]

    assert ran_in == [thread_name()]


def test_work_after_the_answer_never_holds_up_a_requests_side_work(settings):
    """Bookkeeping may wait for row locks another process holds: however much of it waits,
    a request's side work still starts at once."""
    settings.MEMORY_SIDE_CONNECTIONS = 2
    side_connections.finish()
    released = threading.Event()
    try:
        for _work in range(3):
            side_connections.after(wait_for, released)
        assert side_connections.start(thread_name).result(timeout=5).startswith("side-connection")
    finally:
        released.set()
        side_connections.finish()


def test_work_after_the_answer_runs_one_at_a_time_on_its_own_thread():
    ran_in: list[str] = []
    for _work in range(3):
        side_connections.after(lambda: ran_in.append(thread_name()))
    side_connections.finish()
    assert len(ran_in) == 3 and len(set(ran_in)) == 1
    assert ran_in[0].startswith(side_connections.AFTER)


@pytest.mark.django_db(transaction=True)
def test_a_side_connection_is_health_checked_only_after_being_idle(settings, monkeypatch):
    from django.db import connection
    from django.db.backends.postgresql.base import DatabaseWrapper

    settings.MEMORY_SIDE_CONNECTIONS = 1
    side_connections.finish()
    checks: list[str] = []
    is_usable = DatabaseWrapper.is_usable

    def counted_is_usable(self: DatabaseWrapper) -> bool:
        checks.append(thread_name())
        return is_usable(self)

    monkeypatch.setattr(DatabaseWrapper, "is_usable", counted_is_usable)

    def query() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    try:
        side_connections.start(query).result()  # A new connection: healthy.
        side_connections.start(query).result()  # Just used: not checked again.
        assert checks == []
        monkeypatch.setattr(side_connections, "RECHECK_AFTER_IDLE_SECONDS", 0.0)
        side_connections.start(query).result()
        assert len(checks) == 1 and checks[0].startswith("side-connection")
    finally:
        side_connections.finish()


def test_a_pooled_side_connection_is_kept_while_in_use(settings, monkeypatch):
    """In the web server connections come from a pool (CONN_MAX_AGE 0): a side thread keeps
    the one it just used rather than give it back and borrow (and check) one for each task;
    after an idle spell, or an error, it gives it back as Django does after a request."""
    from django.db import connection
    from django.db.backends.postgresql.base import DatabaseWrapper

    settings.MEMORY_SIDE_CONNECTIONS = 1
    side_connections.finish()
    given_back: list[str] = []
    monkeypatch.setattr(
        side_connections, "close_old_connections", lambda: given_back.append(thread_name())
    )
    monkeypatch.setattr(DatabaseWrapper, "pool", property(lambda self: object()))

    def failed_query() -> None:
        connection.errors_occurred = True

    try:
        side_connections.start(thread_name).result()  # Never used: from the pool.
        side_connections.start(thread_name).result()  # Just used: kept.
        assert len(given_back) == 1
        side_connections.start(failed_query).result()
        side_connections.start(thread_name).result()  # After an error: given back.
        assert len(given_back) == 2
        monkeypatch.setattr(side_connections, "RECHECK_AFTER_IDLE_SECONDS", 0.0)
        side_connections.start(thread_name).result()  # Idle: given back.
        assert len(given_back) == 3
    finally:
        side_connections.finish()
