"""Real ``manage.py qcluster`` (and ``serve``) processes stop promptly on SIGTERM, and a run
whose worker was killed outright is run again.

Each process starts in a session of its own, as under a service manager, so that a
signal can go to its whole process group (what systemd, ``docker stop`` with an init and
process managers do) without reaching the tests.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django_q.conf import Conf

from conversations import jobs
from conversations.extraction import runs
from conversations.models import ExtractionRun, RunStatus
from tests.conftest import ARTIFACTS
from tests.conversations.test_extraction_llm import FakeOpenAI
from tests.conversations.test_extraction_worker import BASE_DIR, _test_database_url
from tests.extraction_helpers import conversation_with

pytestmark = pytest.mark.django_db(transaction=True)

STOPS_WITHIN = 15.0
GRACE = 3.0
ANSWER = (
    '{"memories": [{"kind": "preference", "content": "Prefers Vue over React", '
    '"messages": [1], "quote": "I prefer Vue over React."}]}'
)

Start = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.answer = ANSWER
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def start(monkeypatch: pytest.MonkeyPatch, llm: FakeOpenAI) -> Iterator[Start]:
    """Start a manage.py command in a session of its own; killed at the end if still there."""
    monkeypatch.setattr(Conf, "SYNC", False)
    started: list[subprocess.Popen[bytes]] = []
    ARTIFACTS.mkdir(exist_ok=True)

    def start(*command: str, log: str = "qcluster-signals.log") -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": _test_database_url(),
            "Q_SYNC": "false",
            "Q_WORKERS": "1",
            "WORKER_STOP_SECONDS": str(GRACE),
            "EXTRACTION_LLM_URL": llm.url,
            "EXTRACTION_LLM_TIMEOUT": "60",
        }
        path = ARTIFACTS / log
        with path.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "manage.py", *command],
                cwd=BASE_DIR,
                env=env,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        process.log = path
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _wait_until_up(process: subprocess.Popen[bytes], marker: str = "running.") -> None:
    log: Path = process.log
    deadline = time.monotonic() + 60
    while marker not in log.read_text(errors="replace"):
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
        time.sleep(0.2)


def _stops_within(process: subprocess.Popen[bytes], seconds: float) -> float:
    started = time.monotonic()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        log: Path = process.log
        raise AssertionError(
            f"still running {seconds:g} s after SIGTERM:\n{log.read_text(errors='replace')[-3000:]}"
        ) from None
    return time.monotonic() - started


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # Zombies awaiting their parent count as gone.
    out = subprocess.run(["ps", "-o", "stat=", "-g", str(pgid)], capture_output=True, text=True)
    return any(not state.startswith("Z") for state in out.stdout.split())


def _wait_for_status(run_id: int, status: str, timeout: float = 60) -> ExtractionRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = ExtractionRun.objects.get(pk=run_id)
        if run.status == status:
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} is {run.status}, not {status}, after {timeout} s")


def _wait_for_the_llm_call(llm: FakeOpenAI) -> None:
    deadline = time.monotonic() + 60
    while not llm.requests:
        assert time.monotonic() < deadline, "the worker never called the LLM"
        time.sleep(0.1)


def _start_a_run(alice: Any) -> ExtractionRun:
    conversation = conversation_with(
        alice, ("user", "I prefer Vue over React."), ("assistant", "Noted, Vue it is.")
    )
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual", extractor="llm")
    runs.enqueue_run(run.pk)
    return run


def test_sigterm_stops_an_idle_worker(start: Start) -> None:
    worker = start("qcluster")
    _wait_until_up(worker)
    worker.send_signal(signal.SIGTERM)
    _stops_within(worker, STOPS_WITHIN)
    assert worker.returncode == 0
    assert not _group_alive(worker.pid)


def test_sigterm_to_the_whole_process_group_stops_it(start: Start) -> None:
    # django-q2's own cluster waited forever here for its sentinel, killed by the signal.
    worker = start("qcluster")
    _wait_until_up(worker)
    os.killpg(worker.pid, signal.SIGTERM)
    _stops_within(worker, STOPS_WITHIN)
    time.sleep(0.5)
    assert not _group_alive(worker.pid)


def test_sigterm_stops_a_worker_in_the_middle_of_a_slow_task(
    alice: Any, start: Start, llm: FakeOpenAI
) -> None:
    llm.delay = 60  # The LLM is slow: the task would hold the worker for a minute.
    worker = start("qcluster")
    _wait_until_up(worker)
    _start_a_run(alice)
    _wait_for_the_llm_call(llm)
    worker.send_signal(signal.SIGTERM)
    assert _stops_within(worker, STOPS_WITHIN) < GRACE + 5
    time.sleep(0.5)
    assert not _group_alive(worker.pid)


def test_a_run_whose_worker_was_killed_is_run_again(
    alice: Any, start: Start, llm: FakeOpenAI, settings: Any
) -> None:
    settings.EXTRACTION_RUN_GRACE_SECONDS = 2
    llm.delay = 60
    first = start("qcluster")
    _wait_until_up(first)
    run = _start_a_run(alice)
    _wait_for_status(run.pk, RunStatus.RUNNING)
    _wait_for_the_llm_call(llm)
    time.sleep(2.5)
    # Its worker is alive (waiting for the LLM) past the grace: the run is still its own.
    assert jobs.reclaim_extraction_runs() == 0

    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    llm.delay = 0
    second = start("qcluster", log="qcluster-signals-2.log")
    _wait_until_up(second)
    # What the job every minute (or the conversation's next trigger) does.
    assert jobs.reclaim_extraction_runs() == 1
    again = _wait_for_status(run.pk, RunStatus.SUCCEEDED, timeout=30)
    assert (again.attempts, again.created, again.window_first, again.window_last) == (2, 1, 1, 2)
    assert again.conversation.extracted_through == 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("group", [False, True], ids=["to-serve", "to-the-group"])
def test_sigterm_stops_serve_and_its_worker(start: Start, group: bool) -> None:
    serve = start("serve", "--noreload", f"127.0.0.1:{_free_port()}", log="serve-signals.log")
    _wait_until_up(serve, "Uvicorn running")
    _wait_until_up(serve, "running.")  # its worker too
    if group:
        os.killpg(serve.pid, signal.SIGTERM)
    else:
        serve.send_signal(signal.SIGTERM)
    _stops_within(serve, STOPS_WITHIN)
    time.sleep(0.5)
    assert not _group_alive(serve.pid)
