from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django_q.conf import Conf
from django_q.models import OrmQ

from accounts.models import MemorySettings
from conversations.extraction.runs import EXTRACT_TASK, execute_run
from conversations.models import Conversation, ExtractionRun, RunStatus
from memories.models import Memory, Status
from tests.extraction_helpers import api_client, post_json

pytestmark = pytest.mark.django_db

BASE = "/api/v1/conversations"


def _start(client: Any, **fields: Any) -> dict[str, Any]:
    response = post_json(client, BASE, {"external_id": "chat-1", "title": "Planning", **fields})
    assert response.status_code in (200, 201), response.content
    return response.json()


def test_conversation_create_is_idempotent_by_external_id(alice: Any) -> None:
    client = api_client(alice)
    first = post_json(client, BASE, {"external_id": "chat-1", "title": "Planning"})
    again = post_json(client, BASE, {"external_id": "chat-1", "title": "Other title"})
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["title"] == "Planning"
    assert Conversation.objects.filter(owner=alice).count() == 1


def test_conversation_in_a_project_by_slug_or_id(alice: Any, bob: Any, project: Any) -> None:
    by_slug = post_json(api_client(alice), BASE, {"external_id": "a", "project": project.slug})
    by_id = post_json(api_client(bob), BASE, {"external_id": "b", "project": project.pk})
    assert by_slug.status_code == 201 and by_slug.json()["project"] == project.slug
    assert by_id.status_code == 201 and by_id.json()["project"] == project.slug


def test_viewer_cannot_and_stranger_does_not_see_the_project(
    vera: Any, charlie: Any, project: Any
) -> None:
    viewer = post_json(api_client(vera), BASE, {"external_id": "a", "project": project.slug})
    stranger = post_json(api_client(charlie), BASE, {"external_id": "a", "project": project.slug})
    assert viewer.status_code == 403
    assert viewer.json()["error"]["code"] == "FORBIDDEN"
    assert stranger.status_code == 404
    assert stranger.json()["error"]["code"] == "NOT_FOUND"
    assert not Conversation.objects.exists()


def test_messages_batch_is_stored_once_with_positions_in_order(alice: Any) -> None:
    client = api_client(alice)
    conversation = _start(client)
    batch = {
        "messages": [
            {"external_id": "m1", "role": "user", "content": "Hello there, a question."},
            {"external_id": "m2", "role": "assistant", "content": "Sure, ask away whenever."},
            {"external_id": "m1", "role": "user", "content": "Hello there, a question."},
        ]
    }
    first = post_json(client, f"{BASE}/{conversation['id']}/messages", batch)
    again = post_json(client, f"{BASE}/{conversation['id']}/messages", batch)
    assert first.status_code == 200, first.content
    assert first.json()["stored"] == 2
    assert [m["position"] for m in first.json()["messages"]] == [1, 2]
    assert again.json()["stored"] == 0
    assert again.json()["duplicates"] == 3
    assert [m["stored"] for m in again.json()["messages"]] == [False, False]
    more = post_json(
        client,
        f"{BASE}/{conversation['id']}/messages",
        {"messages": [{"external_id": "m3", "role": "user", "content": "Next one"}]},
    )
    assert more.json()["messages"] == [{"external_id": "m3", "position": 3, "stored": True}]


def test_invalid_messages_get_a_json_error_and_store_nothing(alice: Any) -> None:
    client = api_client(alice)
    conversation = _start(client)
    response = post_json(
        client,
        f"{BASE}/{conversation['id']}/messages",
        {"messages": [{"external_id": "m1", "role": "robot", "content": ""}]},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert {field["field"] for field in error["details"]["fields"]} >= {"messages.0.role"}
    assert not Conversation.objects.get().messages.exists()


def test_someone_elses_conversation_is_not_found(alice: Any, charlie: Any) -> None:
    conversation = _start(api_client(alice))
    client = api_client(charlie)
    for path in ("messages", "end", "extract"):
        response = post_json(
            client,
            f"{BASE}/{conversation['id']}/{path}",
            {"messages": [{"external_id": "x", "role": "user", "content": "hi"}]},
        )
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"


def _user_turns(count: int, offset: int = 0) -> dict[str, Any]:
    messages = []
    for index in range(offset, offset + count):
        messages.append(
            {
                "external_id": f"u{index}",
                "role": "user",
                "content": f"I always use tabs in file {index}.",
            }
        )
        messages.append(
            {
                "external_id": f"a{index}",
                "role": "assistant",
                "content": "Noted, I will keep that in mind.",
            }
        )
    return {"messages": messages}


def test_every_five_user_turns_an_extraction_runs(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = api_client(alice)
    conversation = _start(client)
    path = f"{BASE}/{conversation['id']}/messages"
    with django_capture_on_commit_callbacks(execute=True):
        four = post_json(client, path, _user_turns(4))
    assert four.json()["extraction_run"] is None
    with django_capture_on_commit_callbacks(execute=True):
        fifth = post_json(client, path, _user_turns(1, offset=4))
    run = fifth.json()["extraction_run"]
    assert run["trigger"] == "turns"
    assert client.get(f"/api/v1/extraction-runs/{run['id']}").json()["task_id"]
    stored = ExtractionRun.objects.get(pk=run["id"])
    assert stored.status == "succeeded"
    assert (stored.window_first, stored.window_last) == (1, 10)
    assert Memory.objects.filter(owner=alice, status=Status.ACTIVE).exists()
    assert Conversation.objects.get(pk=conversation["id"]).extracted_through == 10


def test_end_summary_and_extract_answer_at_once_with_the_run(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = api_client(alice)
    conversation = _start(client)
    post_json(client, f"{BASE}/{conversation['id']}/messages", _user_turns(2))
    with django_capture_on_commit_callbacks(execute=True):
        ended = post_json(client, f"{BASE}/{conversation['id']}/end")
    assert ended.status_code == 202
    assert ended.json()["trigger"] == "end"
    with django_capture_on_commit_callbacks(execute=True):
        ended_again = post_json(client, f"{BASE}/{conversation['id']}/end")
    assert ended_again.json()["id"] == ended.json()["id"]

    summary = "## Goal\n- Ship the survey importer\n\n## Discoveries\n- The project uses CGCS2000\n"
    with django_capture_on_commit_callbacks(execute=True):
        summarised = post_json(client, f"{BASE}/{conversation['id']}/summary", {"summary": summary})
    assert summarised.status_code == 202
    state = client.get(f"/api/v1/extraction-runs/{summarised.json()['id']}").json()
    assert state["status"] == "succeeded"
    assert state["created"] == 2
    assert Memory.objects.filter(content="The project uses CGCS2000", kind="fact").exists()

    with django_capture_on_commit_callbacks(execute=True):
        manual = post_json(client, f"{BASE}/{conversation['id']}/extract")
    state = client.get(f"/api/v1/extraction-runs/{manual.json()['id']}").json()
    assert state["status"] == "skipped"
    assert state["skip_reason"] == "no new messages since the last extraction"


def test_extraction_run_of_someone_else_is_not_found(
    alice: Any, charlie: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = api_client(alice)
    conversation = _start(client)
    with django_capture_on_commit_callbacks(execute=True):
        run = post_json(client, f"{BASE}/{conversation['id']}/extract").json()
    response = api_client(charlie).get(f"/api/v1/extraction-runs/{run['id']}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_memories_are_pending_when_the_user_reviews_extractions(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    client = api_client(alice)
    conversation = _start(client)
    post_json(client, f"{BASE}/{conversation['id']}/messages", _user_turns(1))
    with django_capture_on_commit_callbacks(execute=True):
        post_json(client, f"{BASE}/{conversation['id']}/extract")
    memory = Memory.objects.get(owner=alice)
    assert memory.status == Status.PENDING
    assert memory.origin == "extracted"


def _chatter(first: int, count: int) -> list[dict[str, str]]:
    return [
        {
            "external_id": f"m{n}",
            "role": "user" if n % 2 else "assistant",
            "content": f"Turn {n}: the weather report for the harbour this afternoon.",
        }
        for n in range(first, first + count)
    ]


@pytest.mark.parametrize("batch", [1, 7, 50], ids=["one-per-request", "batches-of-7", "of-50"])
@pytest.mark.parametrize("sync", [True, False], ids=["jobs-inline", "jobs-queued"])
def test_every_message_is_read_in_exactly_one_window(
    alice: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    sync: bool,
    batch: int,
) -> None:
    """A client posting 1,000 messages without waiting: none unread, none read twice."""
    settings.API_RATE_LIMIT = ""
    monkeypatch.setattr(Conf, "SYNC", sync)
    client = api_client(alice)
    conversation = _start(client)
    path = f"{BASE}/{conversation['id']}/messages"
    total = 1000
    for first in range(1, total + 1, batch):
        with django_capture_on_commit_callbacks(execute=True):
            messages = _chatter(first, min(batch, total + 1 - first))
            response = post_json(client, path, {"messages": messages})
        assert response.status_code == 200, response.content
    with django_capture_on_commit_callbacks(execute=True):
        # The last few turns, fewer than a trigger's worth, are read when it ends.
        post_json(client, f"{BASE}/{conversation['id']}/end")
    runs = ExtractionRun.objects.filter(conversation_id=conversation["id"])
    queued = list(runs.filter(status=RunStatus.QUEUED).order_by("pk").values_list("pk", flat=True))
    if sync:
        assert not queued
    else:
        # Triggers, the end's included, coalesced into one queued run: one job for the worker.
        assert len(queued) == 1
        # (Beside the jobs embedding the stored messages for episodic recall.)
        extraction_jobs = [q for q in OrmQ.objects.all() if q.func() == EXTRACT_TASK]
        assert len(extraction_jobs) == 1
        for run_id in queued:
            execute_run(run_id)
    read = Counter[int]()
    for window_first, window_last in runs.exclude(window_first=None).values_list(
        "window_first", "window_last"
    ):
        assert window_first is not None and window_last is not None
        assert window_last - window_first < settings.EXTRACTION_WINDOW_MESSAGES
        read.update(range(window_first, window_last + 1))
    assert sorted(read) == list(range(1, total + 1))
    assert set(read.values()) == {1}
    assert not runs.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.FAILED])
    assert Conversation.objects.get(pk=conversation["id"]).extracted_through == total
