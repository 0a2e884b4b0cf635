"""Database work on other connections than the request's, so it need not wait in line.

Django gives each thread its own connection, so a small pool of threads is a
pool of connections: while the request's own connection searches memories, the
injection preview turns the query into lexemes and searches past turns on them
(PostgreSQL runs them side by side, on two cores), and
its bookkeeping (recall/bookkeeping.py) is written there after the answer has gone out.

Work written after the answer (``after``) has a thread and connection of its own, one at a
time: bookkeeping updates rows that other processes' bookkeeping updates too, and may wait
for their locks. In the request threads' pool a request's side work queued behind it, and
with 4 clients a preview now and then waited over a second (benchmarks/recall_speed.py).

Another connection cannot see what the caller's open transaction has written,
so inside a transaction (``atomic``, and every test that runs inside one) the
work runs at once on the caller's connection instead. ``MEMORY_SIDE_CONNECTIONS``
= 0 does that always.

A speed trick that earns its place (benchmarks/speed_tricks.py, 3 rounds at --scale 1):
preview p95 50.9 ms with it, 53.4 ms without (+4.7 %).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import close_old_connections, connection, connections

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

# The pools of side threads by what they run: work a request waits for (REQUEST, as many
# threads as MEMORY_SIDE_CONNECTIONS), and work written after it (AFTER, one thread).
REQUEST, AFTER = "side-connection", "after-answer"
_executors: dict[str, tuple[ThreadPoolExecutor, int]] = {}
_executor_lock = threading.Lock()


def _pool(kind: str = REQUEST) -> ThreadPoolExecutor | None:
    size = settings.MEMORY_SIDE_CONNECTIONS
    if size <= 0:
        return None
    if kind == AFTER:
        size = 1
    with _executor_lock:
        if kind not in _executors:
            _executors[kind] = (ThreadPoolExecutor(size, thread_name_prefix=kind), size)
        return _executors[kind][0]


def _forget_pool() -> None:
    """In a forked child: the parent's threads are not there, so the child makes its own."""
    global _executors, _executor_lock
    _executors, _executor_lock = {}, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def finish() -> None:
    """Wait for the side work under way and close the side connections (a database cannot
    be dropped while they are open); the next side work opens new ones."""
    while True:
        with _executor_lock:
            executor = _executors.pop(next(iter(_executors)), None) if _executors else None
        if executor is None:
            return
        pool, size = executor
        # Each thread closes its own connection: the barrier holds each one's task until
        # every thread has taken one.
        barrier = threading.Barrier(size)
        for _thread in range(size):
            pool.submit(_close_connections, barrier)
        # Work still running may start more in a new pool: the loop waits for that too.
        pool.shutdown(wait=True)


def _close_connections(barrier: threading.Barrier) -> None:
    barrier.wait()
    connections.close_all()


# A side connection that finished work this recently is not health-checked again: Django
# checks a connection once a request (CONN_HEALTH_CHECKS, a SELECT 1), and a preview gives a
# side connection several tasks. Checking before each cost a preview p50/p95 0.5/1.0 ms
# (benchmarks/recall_speed.py --scale 1, interleaved A/B of 1,200 previews each way).
RECHECK_AFTER_IDLE_SECONDS = 1.0
_last_used = threading.local()


def _on_side_connection(work: Callable[[], T]) -> T:
    just_used = time.monotonic() - getattr(_last_used, "at", -math.inf) < RECHECK_AFTER_IDLE_SECONDS
    # A pooled connection (CONN_MAX_AGE 0) just used is kept: given back, it was borrowed, and
    # checked, anew for each task, three times a preview: p50/p95 0.5/1.2 ms (benchmarks/
    # proxy.py, interleaved A/B of 500 requests each way). Otherwise, as Django does around
    # each request, a connection past CONN_MAX_AGE, or broken (an error in its last task), is
    # replaced before use.
    pooled = connection.pool is not None  # type: ignore[attr-defined]  # PostgreSQL's wrapper
    if not (just_used and pooled and not connection.errors_occurred):
        close_old_connections()
    if just_used:
        connection.health_check_done = True  # type: ignore[attr-defined]  # Django's flag
    try:
        return work()
    finally:
        _last_used.at = time.monotonic()


def _side_pool(kind: str) -> ThreadPoolExecutor | None:
    """The pool to use now: none inside a transaction, whose writes only its connection sees."""
    return None if connection.in_atomic_block else _pool(kind)


def _submit(work: Callable[[], T], kind: str = REQUEST) -> Future[T] | None:
    """``work`` started on a side connection of the ``kind`` pool; None when it must run on
    the caller's: inside a transaction, or once the interpreter is exiting (the pool takes no
    more work then)."""
    pool = _side_pool(kind)
    if pool is None:
        return None
    try:
        return pool.submit(_on_side_connection, work)
    except RuntimeError:
        return None


def start(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Start ``work`` on a side connection; its result (or exception) comes from the future.
    Inside a transaction it has already run, on the caller's connection."""
    future = _submit(partial(work, *args, **kwargs))
    if future is not None:
        return future
    done: Future[T] = Future()
    try:
        done.set_result(work(*args, **kwargs))
    except Exception as exc:
        done.set_exception(exc)
    return done


def after(work: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
    """Run ``work`` without waiting for it; a failure is logged. Inside a transaction it runs
    now, on the caller's connection, and commits or fails with the caller's writes."""
    future = _submit(partial(work, *args, **kwargs), AFTER)
    if future is None:
        work(*args, **kwargs)
    else:
        future.add_done_callback(_log_failure)


def _log_failure(future: Future[None]) -> None:
    if (error := future.exception()) is not None:
        logger.error("Background database work failed", exc_info=error)
