"""A run whose worker died (killed, crashed) is found and run again within a minute, instead
of showing "running" and holding its conversation's next runs until Q_RETRY re-delivers it.

A worker holds its conversation's lock while it runs a window, on its database session, so
PostgreSQL lets go of it the moment the worker dies: a run marked running a while ago
whose conversation nobody holds has lost its worker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from conversations import jobs
from conversations.extraction import runs
from conversations.models import Conversation, ExtractionRun, RunStatus
from memories.jobs import SCHEDULES, Every
from memories.models import Memory
from tests.extraction_helpers import add_messages, conversation_with, lock_conversation

pytestmark = pytest.mark.django_db

TURNS = [
    ("user", "I prefer Vue over React."),
    ("assistant", "Noted, Vue for the frontend."),
    ("user", "We use pytest for the tests."),
    ("user", "My favourite editor is Neovim."),
    ("user", "I live in Lyon these days."),
    ("user", "I drink mango tea every morning."),
]


def _died_running(conversation: Conversation, *, seconds_ago: float = 30) -> ExtractionRun:
    """A run as a worker killed mid-run leaves it: marked running (its attempt counted), its
    window's transaction rolled back."""
    run = ExtractionRun.objects.create(conversation=conversation, trigger="turns")
    assert runs._mark_running(run.pk) == conversation.pk
    ExtractionRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - timedelta(seconds=seconds_ago)
    )
    return run


@pytest.fixture
def holding() -> Iterator[Callable[[Conversation], None]]:
    """A live worker, on its own connection, holding a conversation's lock."""
    release = threading.Event()
    threads: list[threading.Thread] = []

    def hold(conversation: Conversation) -> None:
        held = threading.Event()

        def worker() -> None:
            try:
                with transaction.atomic():
                    lock_conversation(conversation)
                    held.set()
                    release.wait(20)
            finally:
                connection.close()

        thread = threading.Thread(target=worker)
        thread.start()
        threads.append(thread)
        assert held.wait(10)

    yield hold
    release.set()
    for thread in threads:
        thread.join(10)


def test_the_next_trigger_runs_a_dead_workers_run_again(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    conversation = conversation_with(alice, *TURNS)
    dead = _died_running(conversation)

    add_messages(conversation, ("user", "We deploy with Docker."))
    with django_capture_on_commit_callbacks(execute=True):
        asked = runs.maybe_request_turns_extraction(conversation)

    # The dead worker's run is run again, from where the conversation was extracted through:
    # it reads every message once, and no other run is needed for them.
    assert asked is None
    dead.refresh_from_db()
    assert (dead.status, dead.attempts) == (RunStatus.SUCCEEDED, 2), dead.error
    assert (dead.window_first, dead.window_last) == (1, 7)
    conversation.refresh_from_db()
    assert conversation.extracted_through == 7
    assert Memory.objects.filter(owner=alice).count() == dead.created > 0
    assert conversation.extraction_runs.count() == 1


def test_the_periodic_check_runs_it_again(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    dead = _died_running(conversation_with(alice, *TURNS))
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reclaim_extraction_runs() == 1
    dead.refresh_from_db()
    assert (dead.status, dead.attempts) == (RunStatus.SUCCEEDED, 2)
    assert SCHEDULES["reclaim dead extraction runs"] == (
        "conversations.jobs.reclaim_extraction_runs",
        Every(minutes=1),
    )


def test_a_run_whose_worker_is_alive_is_left_alone(
    alice: Any, holding: Callable[[Conversation], None], django_capture_on_commit_callbacks: Any
) -> None:
    # A slow LLM call: the run started long ago, but its worker holds the conversation.
    slow = conversation_with(alice, *TURNS)
    long_running = _died_running(slow, seconds_ago=600)
    holding(slow)
    # Marked running a moment ago: its worker may not have taken the lock yet.
    just_started = _died_running(conversation_with(alice, *TURNS), seconds_ago=1)

    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reclaim_extraction_runs() == 0
        assert runs.maybe_request_turns_extraction(slow) is None
    for run in (long_running, just_started):
        run.refresh_from_db()
        assert (run.status, run.attempts) == (RunStatus.RUNNING, 1)


def test_a_run_that_kills_its_worker_every_time_fails_for_good(
    alice: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EXTRACTION_MAX_ATTEMPTS = 1
    dead = _died_running(conversation_with(alice, *TURNS))
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reclaim_extraction_runs() == 1
    dead.refresh_from_db()
    assert (dead.status, dead.attempts) == (RunStatus.FAILED, 1)
    assert "worker" in dead.error and dead.finished_at is not None
    # The conversation is not held up: the next trigger asks for a new run.
    with django_capture_on_commit_callbacks(execute=True):
        fresh = runs.maybe_request_turns_extraction(dead.conversation)
    assert fresh is not None
    fresh.refresh_from_db()
    assert fresh.status == RunStatus.SUCCEEDED


def test_the_grace_is_short(settings: Any) -> None:
    # Found within a minute: the grace, then the next minute's check at the latest.
    assert settings.EXTRACTION_RUN_GRACE_SECONDS <= 15
