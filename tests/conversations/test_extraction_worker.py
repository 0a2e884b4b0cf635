"""A real django-q2 worker (not sync mode) takes a conversation from ingestion to the review page."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection
from django_q.conf import Conf

from accounts.models import MemorySettings
from conversations.models import ExtractionRun, RunStatus
from memories.models import Memory
from tests.conftest import ARTIFACTS, client_for
from tests.extraction_helpers import api_client, post_json

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def _test_database_url() -> str:
    db = connection.settings_dict
    host = quote(str(db["HOST"]), safe="")
    return f"postgresql://{db['USER']}@{host}:{db['PORT']}/{db['NAME']}"


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    # Jobs go to the database broker for the worker instead of running inline.
    monkeypatch.setattr(Conf, "SYNC", False)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": _test_database_url(),
        "Q_SYNC": "false",
        "Q_WORKERS": "1",
    }
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / "qcluster.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=BASE_DIR, env=env, stdout=log, stderr=log
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for(run_id: int, timeout: float = 120) -> ExtractionRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = ExtractionRun.objects.get(pk=run_id)
        if run.status in (RunStatus.SUCCEEDED, RunStatus.SKIPPED, RunStatus.FAILED):
            return run
        time.sleep(0.25)
    log = (ARTIFACTS / "qcluster.log").read_text(errors="replace")[-3000:]
    raise AssertionError(f"run {run_id} still {run.status} after {timeout} s; worker log:\n{log}")


def test_worker_extracts_an_ingested_conversation(alice: Any, worker: Any) -> None:
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    client = api_client(alice)
    conversation = post_json(client, "/api/v1/conversations", {"external_id": "desk-42"}).json()
    post_json(
        client,
        f"/api/v1/conversations/{conversation['id']}/messages",
        {
            "messages": [
                {
                    "external_id": "1",
                    "role": "user",
                    "content": "I prefer Vue over React for dashboards.",
                },
                {
                    "external_id": "2",
                    "role": "assistant",
                    "content": "Noted: Vue for the dashboards.",
                },
                {"external_id": "3", "role": "user", "content": "我们决定用 Django 而不是 Flask。"},
            ]
        },
    )
    queued = post_json(client, f"/api/v1/conversations/{conversation['id']}/end").json()
    assert queued["status"] == "queued" and queued["task_id"]

    run = _wait_for(queued["id"])
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.created == 2
    assert Memory.objects.filter(owner=alice, status="pending").count() == 2

    page = client_for(alice).get("/review/").content.decode()
    assert "Prefers Vue over React for dashboards" in page
    assert "选择 Django 而不是 Flask" in page
    state = client.get(f"/api/v1/extraction-runs/{run.pk}").json()
    assert state["status"] == "succeeded" and state["window_last"] == 3
