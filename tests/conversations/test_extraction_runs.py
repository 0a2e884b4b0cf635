from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.models import OrmQ, Schedule, Task

from accounts.models import MemorySettings
from conversations import jobs
from conversations.extraction import ExtractionFailed, WindowMessage, runs
from conversations.extraction.runs import execute_run, extraction_request
from conversations.models import Conversation, ExtractionRun, RunStatus
from memories.models import Memory, MemoryEvent
from tests.extraction_helpers import (
    add_messages,
    api_client,
    conversation_with,
    lock_conversation,
    post_json,
)

pytestmark = pytest.mark.django_db

TALK = [("user", "I prefer Vue over React."), ("assistant", "Got it, Vue it is for the frontend.")]


def _run(conversation: Any, trigger: str = "turns", summary: str = "") -> ExtractionRun:
    run = extraction_request(conversation=conversation, trigger=trigger, summary=summary)
    return execute_run(run.pk)


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ({"memory_enabled": False}, runs.SKIP_MEMORY_OFF),
        ({"auto_extract": False}, runs.SKIP_AUTO_OFF),
    ],
)
def test_skipped_when_the_user_turned_it_off(
    alice: Any, setup: dict[str, bool], reason: str
) -> None:
    MemorySettings.objects.filter(user=alice).update(**setup)
    run = _run(conversation_with(alice, *TALK))
    assert (run.status, run.skip_reason) == (RunStatus.SKIPPED, reason)
    assert not Memory.objects.exists()


def test_asking_by_hand_works_with_automatic_extraction_off(alice: Any) -> None:
    MemorySettings.objects.filter(user=alice).update(auto_extract=False)
    conversation = conversation_with(alice, *TALK)
    assert _run(conversation, "turns").status == RunStatus.SKIPPED
    assert _run(conversation, "manual").created == 1


def test_temporary_conversation_is_skipped_and_never_read_again(alice: Any) -> None:
    conversation = conversation_with(alice, *TALK, temporary=True)
    run = _run(conversation)
    assert (run.status, run.skip_reason) == (RunStatus.SKIPPED, runs.SKIP_TEMPORARY)
    conversation.refresh_from_db()
    assert conversation.extracted_through == 2
    assert not Memory.objects.exists()


def test_trivial_window_is_skipped(alice: Any) -> None:
    conversation = conversation_with(
        alice,
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("user", "Thanks a lot!"),
        ("user", "谢谢！"),
    )
    run = _run(conversation)
    assert (run.status, run.skip_reason) == (RunStatus.SKIPPED, runs.SKIP_TRIVIAL)


def test_a_window_is_never_extracted_twice(alice: Any) -> None:
    conversation = conversation_with(alice, *TALK)
    first = _run(conversation)
    second = _run(conversation)
    assert first.created == 1
    assert (second.status, second.skip_reason) == (RunStatus.SKIPPED, runs.SKIP_NOTHING_NEW)
    add_messages(conversation, ("user", "We use pytest for tests."))
    third = _run(conversation)
    assert (third.window_first, third.window_last, third.created) == (3, 3, 1)


def test_a_run_embeds_the_turns_it_reads_unless_they_are_already(
    alice: Any, monkeypatch: Any
) -> None:
    embed_messages = jobs.embed_messages
    asked: list[list[int]] = []

    def recorded(ids: list[int]) -> int:
        asked.append(ids)
        return embed_messages(ids)

    monkeypatch.setattr(jobs, "embed_messages", recorded)
    conversation = conversation_with(alice, *TALK)
    _run(conversation)
    turns = list(conversation.messages.order_by("position"))
    assert asked == [[turn.pk for turn in turns]]
    assert all(turn.embedding is not None for turn in turns)
    (turn,) = add_messages(conversation, ("user", "We use pytest for tests."))
    embed_messages([turn.pk])
    assert _run(conversation).window_last == 3
    assert len(asked) == 1


def test_a_backlog_is_read_in_order_one_window_per_run(alice: Any, settings: Any) -> None:
    settings.EXTRACTION_WINDOW_MESSAGES = 10
    turns = [("user", f"We use tool{n} for step {n}.") for n in range(1, 26)]
    conversation = conversation_with(alice, *turns)
    run = _run(conversation)
    # The oldest ten first, then follow-up runs of the same trigger for the rest.
    assert (run.window_first, run.window_last, run.created) == (1, 10, 10)
    windows = conversation.extraction_runs.order_by("pk").values_list(
        "trigger", "status", "window_first", "window_last"
    )
    assert list(windows) == [
        ("turns", RunStatus.SUCCEEDED, 1, 10),
        ("turns", RunStatus.SUCCEEDED, 11, 20),
        ("turns", RunStatus.SUCCEEDED, 21, 25),
    ]
    conversation.refresh_from_db()
    assert conversation.extracted_through == 25
    assert Memory.objects.count() == 25


def test_a_queued_run_is_left_the_rest_of_the_backlog(alice: Any, settings: Any) -> None:
    settings.EXTRACTION_WINDOW_MESSAGES = 2
    conversation = conversation_with(alice, *TALK, *TALK)
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual")
    waiting = ExtractionRun.objects.create(conversation=conversation, trigger="end")
    first = execute_run(run.pk)
    assert (first.window_first, first.window_last) == (1, 2)
    # No follow-up: the queued run reads the rest.
    assert conversation.extraction_runs.count() == 2
    waiting = execute_run(waiting.pk)
    assert (waiting.window_first, waiting.window_last) == (3, 4)


def test_a_conversation_that_must_not_be_read_is_passed_over_in_one_run(alice: Any) -> None:
    turns = [("user", f"We use tool{n} for step {n}.") for n in range(1, 26)]
    conversation = conversation_with(alice, *turns, temporary=True)
    run = _run(conversation)
    assert (run.status, run.window_first, run.window_last) == (RunStatus.SKIPPED, 1, 25)
    assert conversation.extraction_runs.count() == 1


def test_the_window_fits_the_token_budget(alice: Any, settings: Any) -> None:
    settings.EXTRACTION_WINDOW_TOKENS = 40
    turns = [
        ("user", "I prefer Vue over React. " + "x" * 200),
        ("user", "We use pytest for tests."),
    ]
    conversation = conversation_with(alice, *turns)
    run = _run(conversation)
    # The first message alone is over budget: its beginning is read, then the next window.
    assert (run.window_first, run.window_last) == (1, 1)
    windows = conversation.extraction_runs.order_by("pk").values_list("window_first", "window_last")
    assert list(windows) == [(1, 1), (2, 2)]


def test_the_same_summary_is_extracted_once(alice: Any) -> None:
    conversation = conversation_with(alice)
    summary = "## Discoveries\n- The project uses CGCS2000\n"
    assert _run(conversation, "summary", summary).created == 1
    again = _run(conversation, "summary", summary)
    assert (again.status, again.skip_reason) == (RunStatus.SKIPPED, runs.SKIP_SUMMARY_SEEN)
    assert Memory.objects.get().confidence == 0.8


def test_a_run_that_finished_is_not_run_again(alice: Any) -> None:
    run = _run(conversation_with(alice, *TALK))
    again = execute_run(run.pk)
    assert again.attempts == 1 and again.status == RunStatus.SUCCEEDED
    assert Memory.objects.count() == 1


def test_a_run_killed_midway_leaves_nothing_and_is_retried(alice: Any) -> None:
    # A database failure on the second memory stands for a worker dying mid-run.
    with connection.cursor() as cursor:
        cursor.execute(
            """CREATE FUNCTION fail_insert() RETURNS trigger AS $$
               BEGIN RAISE EXCEPTION 'worker lost'; END $$ LANGUAGE plpgsql;
               CREATE TRIGGER fail_second BEFORE INSERT ON memoryapp_memory
               FOR EACH ROW WHEN (NEW.content LIKE '%pytest%') EXECUTE FUNCTION fail_insert();"""
        )
    conversation = conversation_with(alice, ("user", "I prefer Vue. We use pytest for tests."))
    run = _run(conversation)
    assert run.status == RunStatus.FAILED
    assert "worker lost" in run.error
    assert not Memory.objects.exists() and not MemoryEvent.objects.exists()
    conversation.refresh_from_db()
    assert conversation.extracted_through == 0
    retry = Schedule.objects.get(name=runs.retry_schedule_name(run.pk))
    assert retry.func == runs.EXTRACT_TASK and retry.args == repr(run.pk)

    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER fail_second ON memoryapp_memory")
    retried = execute_run(run.pk)
    assert (retried.status, retried.attempts, retried.created) == (RunStatus.SUCCEEDED, 2, 2)


def test_retries_back_off_and_stop(alice: Any, settings: Any) -> None:
    settings.EXTRACTION_RETRY_SECONDS = 10
    settings.EXTRACTION_MAX_ATTEMPTS = 3
    run = ExtractionRun.objects.create(
        conversation=conversation_with(alice), trigger="manual", attempts=2
    )
    delay = runs.schedule_retry(run)
    assert delay.total_seconds() == 20
    run.attempts = 3
    assert runs.schedule_retry(run).total_seconds() == 40


@pytest.mark.django_db(transaction=True)
def test_runs_of_one_conversation_never_overlap(alice: Any) -> None:
    conversation = conversation_with(alice, *TALK)
    # Created directly: extraction_request would run it at once (sync mode, no transaction).
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual")
    finished: list[ExtractionRun] = []

    def worker() -> None:
        try:
            finished.append(execute_run(run.pk))
        finally:
            connection.close()

    with transaction.atomic():
        # Another run holds the conversation: it extracts the window and commits.
        lock_conversation(conversation)
        thread = threading.Thread(target=worker)
        thread.start()
        deadline = time.monotonic() + 20
        while not _waiting_on_advisory_lock() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _waiting_on_advisory_lock(), f"the run did not wait for the lock: {finished}"
        assert not finished
        Conversation.objects.filter(pk=conversation.pk).update(extracted_through=2)
    thread.join(timeout=20)
    assert finished[0].status == RunStatus.SKIPPED
    assert finished[0].skip_reason == runs.SKIP_NOTHING_NEW
    assert not Memory.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_batch_stored_while_a_run_works_is_read_by_a_follow_up(
    alice: Any, monkeypatch: Any
) -> None:
    conversation = conversation_with(alice, *TALK)
    client = api_client(alice)
    rules = runs.get_extractor("rules")
    stored: list[int] = []

    def post_batch() -> None:
        try:
            late = {"external_id": "late", "role": "user", "content": "We use pytest for tests."}
            response = post_json(
                client, f"/api/v1/conversations/{conversation.pk}/messages", {"messages": [late]}
            )
            stored.append(response.json()["stored"])
        finally:
            connection.close()

    class Interrupted:
        """The rules, while a client stores a batch (committed before the run saves)."""

        def extract(self, messages: list[WindowMessage], summary: str = "") -> list[Any]:
            if not stored:
                thread = threading.Thread(target=post_batch)
                thread.start()
                thread.join(timeout=20)
            return rules.extract(messages, summary)

    monkeypatch.setattr(runs, "get_extractor", lambda name=None: Interrupted())
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual")
    execute_run(run.pk)
    assert stored == [1]
    # The batch asked for no run of its own (one was running): a follow-up read it.
    windows = conversation.extraction_runs.order_by("pk").values_list(
        "trigger", "status", "window_first", "window_last"
    )
    assert list(windows) == [
        ("manual", RunStatus.SUCCEEDED, 1, 2),
        ("manual", RunStatus.SUCCEEDED, 3, 3),
    ]


def _waiting_on_advisory_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return bool(cursor.fetchone()[0])


class _FailingExtractor:
    calls = 0

    def extract(self, messages: list[WindowMessage], summary: str = "") -> list[Any]:
        _FailingExtractor.calls += 1
        raise ExtractionFailed("the model answered no JSON", raw_output="Sure! Here you go")


def _deliver_queued_tasks() -> None:
    """What a django-q2 cluster does with the ORM broker: take the queued tasks, run them,
    save their results and acknowledge those that succeeded (others are delivered again
    after Q_RETRY seconds)."""
    from multiprocessing import Queue, Value

    from django_q.monitor import monitor
    from django_q.signing import SignedPackage
    from django_q.worker import worker

    broker = get_broker()
    # As in sync mode, the worker keeps the test's database connection open.
    Conf.SYNC = True
    task_queue: Queue[Any] = Queue()
    result_queue: Queue[Any] = Queue()
    for ack_id, payload in broker.dequeue() or []:
        task = SignedPackage.loads(payload)
        task["ack_id"] = ack_id
        task_queue.put(task)
    task_queue.put("STOP")
    worker(task_queue, result_queue, Value("f", -1))
    result_queue.put("STOP")
    monitor(result_queue, broker)


def test_a_failing_run_is_retried_by_the_app_alone(
    alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.EXTRACTION_RETRY_SECONDS = 10
    settings.EXTRACTION_MAX_ATTEMPTS = 3
    monkeypatch.setattr(runs, "get_extractor", lambda name=None: _FailingExtractor())
    monkeypatch.setattr(Conf, "SYNC", False)
    _FailingExtractor.calls = 0
    run = ExtractionRun.objects.create(
        conversation=conversation_with(alice, *TALK), trigger="manual"
    )
    task_id = runs.enqueue_run(run.pk)
    assert OrmQ.objects.count() == 1

    _deliver_queued_tasks()
    # The job recorded the failure and returned: django-q2 acknowledged it and will not
    # deliver it again; the app's retry is the only one.
    assert not OrmQ.objects.exists()
    task = Task.objects.get(id=task_id)
    assert (task.success, task.result, task.attempt_count) == (True, RunStatus.FAILED, 1)
    run.refresh_from_db()
    assert (run.status, run.attempts, _FailingExtractor.calls) == (RunStatus.FAILED, 1, 1)
    assert "no JSON" in run.error and run.raw_output == "Sure! Here you go"
    retry = Schedule.objects.get(name=runs.retry_schedule_name(run.pk))
    assert retry.func == runs.EXTRACT_TASK and retry.args == repr(run.pk)
    assert run.finished_at is not None
    assert round((retry.next_run - run.finished_at).total_seconds()) == 10

    # The schedule's task fails again: one more attempt, twice the delay.
    assert jobs.extract_conversation(run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    retry.refresh_from_db()
    assert (run.attempts, _FailingExtractor.calls) == (2, 2)
    assert run.finished_at is not None
    assert round((retry.next_run - run.finished_at).total_seconds()) == 20

    # The last attempt: failed for good, no further retry.
    assert jobs.extract_conversation(run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert (run.attempts, _FailingExtractor.calls) == (3, 3)
    assert Schedule.objects.get(name=runs.retry_schedule_name(run.pk)).next_run == retry.next_run
    assert not OrmQ.objects.exists()


def test_a_job_that_raised_would_be_delivered_again(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counter-example: why the job must not raise when a run fails."""

    def lost(run_id: int) -> ExtractionRun:
        raise RuntimeError("worker lost")

    monkeypatch.setattr(runs, "execute_run", lost)
    monkeypatch.setattr(Conf, "SYNC", False)
    run = ExtractionRun.objects.create(
        conversation=conversation_with(alice, *TALK), trigger="manual"
    )
    runs.enqueue_run(run.pk)
    _deliver_queued_tasks()
    assert OrmQ.objects.count() == 1
