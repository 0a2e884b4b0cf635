"""A real django-q2 worker, killed in the middle of an import: the next one goes on where it
stopped, and nothing is stored or read twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import F, Sum
from django_q.conf import Conf

from conversations.models import ExtractionRun, Message
from imports import services
from imports.models import Import
from tests.conftest import ARTIFACTS
from tests.imports.helpers import CLAUDE_JSON

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def database_url() -> str:
    """The test database, for the worker's process."""
    db = connection.settings_dict
    return f"postgresql://{db['USER']}@{quote(str(db['HOST']), safe='')}:{db['PORT']}/{db['NAME']}"


def start_worker(imports_dir: Path, log: Any) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "Q_SYNC": "false",
        "Q_WORKERS": "1",
        "IMPORTS_DIR": str(imports_dir),
        "MEMORY_EMBEDDING_PROVIDER": "local",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=BASE_DIR, env=env, stdout=log, stderr=log
    )


def kill(worker: subprocess.Popen[bytes]) -> None:
    """The whole cluster at once, as a machine losing power."""
    processes = [psutil.Process(worker.pid), *psutil.Process(worker.pid).children(recursive=True)]
    for process in processes:
        process.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)


def wait_for(job: Import, done: Callable[[Import], bool], timeout: float = 300) -> None:
    started = time.monotonic()
    while not done(job):
        assert time.monotonic() - started < timeout, f"import is {job.status}/{job.phase}"
        assert job.status not in ("failed", "invalid"), job.error_details
        time.sleep(0.2)
        job.refresh_from_db()


def export(conversations: int) -> SimpleUploadedFile:
    """Claude's export with the first test conversation ``conversations`` times over."""
    template = json.loads(CLAUDE_JSON.read_text())[1]
    items = [{**template, "uuid": f"copy-{number}"} for number in range(conversations)]
    return SimpleUploadedFile("conversations.json", json.dumps(items).encode())


def test_a_killed_worker_is_followed_by_one_that_goes_on(
    alice: Any, monkeypatch: Any, imports_dir: Path
) -> None:
    monkeypatch.setattr(Conf, "SYNC", False)  # Jobs go to the database broker.
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / "qcluster-imports.log").open("wb") as log:
        worker = start_worker(imports_dir, log)
        try:
            job = services.create_import(owner=alice, source="claude", upload=export(400))
            wait_for(job, lambda job: job.status == "ready")
            services.start_import(job, keep_conversations=True, build_memories=True)
            wait_for(job, lambda job: job.extract_cursor >= 20)
            kill(worker)
            job.refresh_from_db()
            assert job.status == "importing"
            worker = start_worker(imports_dir, log)
            monkeypatch.setattr(services, "STALL_SECONDS", 0)
            # The check every minute, without waiting for the minute. PostgreSQL lets go of
            # the dead worker's lock once it sees its connection gone.
            deadline = time.monotonic() + 30
            while services.resume_stalled() != [job.pk]:
                assert time.monotonic() < deadline, "the import was not taken up again"
                time.sleep(0.5)
            wait_for(job, lambda job: job.status == "done")
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    assert (job.conversations_stored, job.messages_stored) == (400, 800)
    assert job.conversations.count() == 400
    assert Message.objects.count() == 800
    assert job.messages_extracted == 800
    # Every message was read by exactly one run's window.
    windows = ExtractionRun.objects.filter(window_first__isnull=False).aggregate(
        read=Sum(F("window_last") - F("window_first") + 1)
    )
    assert windows["read"] == 800
