from __future__ import annotations

import threading

import pytest

from memories import side_connections


def thread_name() -> str:
    return threading.current_thread().name


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
    side_connections.start(thread_name).result()
    assert side_connections._executor is not None
    pool, _size = side_connections._executor
    pool.shutdown(wait=True)
    ran_in: list[str] = []

    try:
        side_connections.after(lambda: ran_in.append(thread_name()))
    finally:
        side_connections._executor = None

    assert ran_in == [thread_name()]
