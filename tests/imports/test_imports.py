"""Importing: preview, stored conversations, memories in time order, re-import, Undo, saved
memories through the same checks as any memory, refused files, resuming after a dead worker."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.extraction.runs import execute_run
from conversations.models import Conversation, ExtractionRun, Message
from imports import services
from imports.errors import BUSY, MALFORMED_FILE, WRONG_SERVICE, ImportNotAllowed
from imports.models import Import, ImportStatus
from memories.kinds import guess_kind
from memories.models import Memory, Origin, Status
from memories.services import memory_create
from tests.extraction_helpers import conversation_with
from tests.imports.helpers import CHATGPT_JSON, CLAUDE_JSON, DATA, chatgpt_zip, imported, upload

pytestmark = pytest.mark.django_db(transaction=True)


def contents(**filters: Any) -> set[str]:
    return set(Memory.objects.filter(**filters).values_list("content", flat=True))


def test_preview_says_what_the_file_holds_before_anything_is_written(alice: Any) -> None:
    job = services.create_import(owner=alice, source="chatgpt", upload=chatgpt_zip())
    job.refresh_from_db()
    assert job.status == ImportStatus.READY
    assert job.preview == {
        "conversations": 3,
        "messages": 7,
        "new_conversations": 3,
        "new_messages": 7,
        "first_at": "2023-01-01T12:00:00+00:00",
        "last_at": "2024-06-12T10:05:00+00:00",
        "languages": [["en", 2], ["zh", 1]],
        "already_imported": 0,
        "private": 2,
        "empty": 1,
        "left_out": 3,
        "attachments": 2,
        "latest_titles": ["Frontend framework", "测量数据", "Older frontend talk"],
    }
    assert not Conversation.objects.exists() and not Memory.objects.exists()
    # The upload is gone; what stays is the normalised copy the import reads.
    assert [p.name for p in services.import_dir(job).iterdir()] == [services.COPY_FILE]


def test_a_chatgpt_export_becomes_conversations_and_memories_in_time_order(alice: Any) -> None:
    job = imported(alice, "chatgpt", chatgpt_zip())
    assert job.status == ImportStatus.DONE
    assert (job.conversations_stored, job.messages_stored, job.messages_extracted) == (3, 7, 7)
    conversations = Conversation.objects.filter(owner=alice).order_by("created_at")
    assert [c.external_id for c in conversations] == [
        "chatgpt:vue-0005",
        "chatgpt:chinese-0004",
        "chatgpt:6a1c0f3e-react-0001",
    ]
    assert {c.client for c in conversations} == {"chatgpt"}
    assert set(job.conversations.all()) == set(conversations)
    react = conversations.last()
    assert react.title == "Frontend framework"
    assert list(react.messages.values_list("external_id", "role", "sent_at")) == [
        ("r-1", "user", datetime(2024, 6, 12, 10, 0, tzinfo=UTC)),
        ("r-3", "assistant", datetime(2024, 6, 12, 10, 1, 20, tzinfo=UTC)),
        ("r-4", "user", datetime(2024, 6, 12, 10, 5, tzinfo=UTC)),
    ]
    # The file lists the React chat (2024) before the Vue one (2023); read in time order,
    # the newer preference replaces the older, from the day it was said.
    vue = Memory.objects.get(content__contains="Vue")
    react_memory = Memory.objects.get(content__contains="React")
    assert vue.superseded_by == react_memory
    assert vue.valid_from == datetime(2023, 1, 1, 12, 0, tzinfo=UTC)
    assert react_memory.valid_from == datetime(2024, 6, 12, 10, 0, tzinfo=UTC)
    assert job.memories_superseded == 1
    assert job.memories_created == Memory.objects.filter(owner=alice).count() == 3
    # Temporary and do-not-remember chats were skipped entirely.
    assert not Message.objects.filter(content__contains="Svelte").exists()
    assert not Message.objects.filter(content__contains="Angular").exists()


def test_a_claude_export_is_imported(alice: Any) -> None:
    job = imported(alice, "claude", upload(CLAUDE_JSON))
    assert (job.status, job.conversations_stored, job.messages_stored) == ("done", 2, 5)
    survey = Conversation.objects.get(external_id="claude:3f2b1c9a-0001-4c1e-9a55-claude000001")
    assert (survey.title, survey.client) == ("Planning the survey app", "claude")
    assert survey.created_at == datetime(2024, 3, 5, 9, 15, tzinfo=UTC)
    assert "[file: schema.sql]" in survey.messages.first().content
    assert any("Vue" in content for content in contents(owner=alice))
    assert any("pytest" in content for content in contents(owner=alice))


def test_a_second_import_of_the_same_file_skips_what_exists(alice: Any) -> None:
    imported(alice, "chatgpt", chatgpt_zip())
    memories = Memory.objects.count()
    again = services.create_import(owner=alice, source="chatgpt", upload=upload(CHATGPT_JSON))
    again.refresh_from_db()
    assert again.preview["already_imported"] == 3
    assert (again.preview["new_conversations"], again.preview["new_messages"]) == (0, 0)
    services.start_import(again, keep_conversations=True, build_memories=True)
    again.refresh_from_db()
    assert (again.status, again.conversations_stored, again.conversations_skipped) == (
        "done",
        0,
        3,
    )
    assert Conversation.objects.count() == 3 and Message.objects.count() == 7
    assert Memory.objects.count() == memories


def test_memories_only_drops_the_messages_once_read(alice: Any) -> None:
    job = imported(alice, "chatgpt", chatgpt_zip(), keep_conversations=False)
    assert job.status == "done" and job.messages_extracted == 7
    assert Conversation.objects.count() == 3
    assert not Message.objects.exists()
    assert Memory.objects.filter(owner=alice, conversation__imports=job).count() == 3


def test_conversations_only_are_kept_searchable_and_never_extracted(alice: Any) -> None:
    job = imported(alice, "claude", upload(CLAUDE_JSON), build_memories=False)
    assert (job.status, job.phase, job.messages_indexed) == ("done", "embed", 5)
    assert not ExtractionRun.objects.exists() and not Memory.objects.exists()
    for conversation in Conversation.objects.all():
        assert conversation.extracted_through == conversation.messages.count()
    assert not Message.objects.filter(embedding_model="").exists()


def test_building_memories_needs_memory_on_and_not_paused(alice: Any) -> None:
    job = services.create_import(owner=alice, source="claude", upload=upload(CLAUDE_JSON))
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)
    with pytest.raises(ImportNotAllowed) as caught:
        services.start_import(job, keep_conversations=True, build_memories=True)
    assert caught.value.code == "memory_off"
    MemorySettings.objects.filter(user=alice).update(memory_enabled=True, paused_indefinitely=True)
    with pytest.raises(ImportNotAllowed) as caught:
        services.start_import(job, keep_conversations=True, build_memories=True)
    assert caught.value.code == "memory_paused"
    with pytest.raises(ImportNotAllowed) as caught:
        services.start_import(job, keep_conversations=False, build_memories=False)
    assert caught.value.code == "nothing_chosen"
    services.start_import(job, keep_conversations=True, build_memories=False)
    job.refresh_from_db()
    assert job.status == "done" and not Memory.objects.exists()


def test_undo_removes_the_conversations_and_every_memory_made_from_them(alice: Any) -> None:
    # Said in a chat in 2022, before anything in the export.
    earlier = conversation_with(alice, ("user", "I prefer Vue for frontend work."))
    earlier.messages.update(sent_at=datetime(2022, 5, 1, tzinfo=UTC))
    execute_run(ExtractionRun.objects.create(conversation=earlier, trigger="manual").pk)
    before = Memory.objects.get()
    job = imported(alice, "chatgpt", chatgpt_zip())
    before.refresh_from_db()
    # The import's 2023 chat confirmed it, and its 2024 chat replaced it with React.
    assert before.confidence > 0.8
    assert before.superseded_by is not None
    made = set(Memory.objects.filter(conversation__imports=job).values_list("pk", flat=True))
    assert made
    services.undo_import(job)
    job.refresh_from_db()
    assert job.status == ImportStatus.UNDONE
    assert (job.conversations_undone, job.memories_undone) == (3, len(made) + 1)
    assert list(Conversation.objects.all()) == [earlier]
    assert set(Memory.objects.in_trash().values_list("pk", flat=True)) == made
    # The memory the import had changed is as it was before it, in effect again.
    assert list(Memory.objects.in_effect()) == [before]
    before.refresh_from_db()
    assert (before.confidence, before.superseded_by) == (0.8, None)
    with pytest.raises(ImportNotAllowed):
        services.undo_import(job)
    # An undone import may be forgotten; the files are gone already.
    assert not services.import_dir(job).exists()
    services.discard_import(job)
    assert not Import.objects.exists()


def press_undo(job: Import) -> None:
    try:
        services.undo_import(job)
    finally:
        connection.close()


def test_undo_while_importing_stops_the_import(alice: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(services, "STORE_BATCH_CONVERSATIONS", 1)
    real = services._store_conversations

    def store_then_undo(job: Import, items: list[Any]) -> Any:
        result = real(job, items)
        if job.spool_offset:
            # The person presses Undo (on another connection) while the second batch is
            # being written: that batch is rolled back, and the worker undoes the first.
            thread = threading.Thread(target=press_undo, args=[job])
            thread.start()
            thread.join()
        return result

    monkeypatch.setattr(services, "_store_conversations", store_then_undo)
    job = imported(alice, "chatgpt", chatgpt_zip())
    assert job.status == ImportStatus.UNDONE
    assert not Conversation.objects.exists() and not Memory.objects.exists()


def test_saved_memories_go_through_the_checks_of_any_memory_added(alice: Any) -> None:
    memory_create(owner=alice, content="Lives in Lisbon")
    job = services.create_import(
        owner=alice, source="memories", upload=upload(DATA / "chatgpt_memories.txt")
    )
    job.refresh_from_db()
    assert job.preview["counts"] == {
        "new": 3,
        "known": 1,
        "repeated": 1,
        "refused": 1,
        "too_long": 0,
    }
    statuses = [(item["content"], item["status"]) for item in job.preview["items"]]
    assert ("Lives in Lisbon", "known") in statuses
    assert ("My password is hunter2", "refused") in statuses
    assert not Memory.objects.filter(origin=Origin.IMPORTED).exists()
    services.start_import(job, keep_conversations=True, build_memories=True)
    job.refresh_from_db()
    assert (job.status, job.memories_created, job.memories_known) == ("done", 3, 0)
    added = Memory.objects.filter(origin=Origin.IMPORTED).order_by("pk")
    assert [m.content for m in added] == [
        "Prefers pytest over unittest for tests",
        "Works on a survey app for a rail team",
        "我喜欢用 Vue 做报表",
    ]
    assert [m.kind for m in added] == [guess_kind(m.content) for m in added]
    assert {event.actor for m in added for event in m.events.all()} == {alice}
    services.undo_import(job)
    assert set(Memory.objects.in_trash()) == set(added)
    assert Memory.objects.in_effect().get().content == "Lives in Lisbon"


def test_saved_memories_pasted_as_claude_gives_them(alice: Any) -> None:
    text = (DATA / "claude_memories.md").read_text()
    job = services.create_import(owner=alice, source="memories", text=text)
    services.start_import(job, keep_conversations=True, build_memories=True)
    assert contents(origin=Origin.IMPORTED) == {
        "Works on a survey app for a rail team, with Django and PostgreSQL.",
        "Uses CGCS2000 coordinates for the survey data, converted from WGS84 when importing.",
        "Has a dog named Pixel",
        "Goes hiking most weekends",
    }


def test_a_secret_in_a_saved_memory_is_redacted(alice: Any) -> None:
    job = services.create_import(
        owner=alice,
        source="memories",
        text="- Deploys with the key AKIAABCDEFGHIJKLMNOP to the staging bucket",
    )
    services.start_import(job, keep_conversations=True, build_memories=True)
    (memory,) = Memory.objects.filter(origin=Origin.IMPORTED)
    assert "AKIA" not in memory.content and "[redacted" in memory.content


@pytest.mark.parametrize(
    ("source", "path", "code"),
    [("chatgpt", CLAUDE_JSON, WRONG_SERVICE), ("claude", CHATGPT_JSON, WRONG_SERVICE)],
)
def test_a_file_from_the_wrong_service_writes_nothing(
    alice: Any, source: str, path: Path, code: str
) -> None:
    job = services.create_import(owner=alice, source=source, upload=upload(path))
    job.refresh_from_db()
    assert (job.status, job.error_code) == (ImportStatus.INVALID, code)
    assert not Conversation.objects.exists() and not services.import_dir(job).exists()


def test_a_malformed_file_writes_nothing(alice: Any) -> None:
    data = CHATGPT_JSON.read_bytes()[:-200]
    job = services.create_import(
        owner=alice, source="chatgpt", upload=SimpleUploadedFile("conversations.json", data)
    )
    job.refresh_from_db()
    assert (job.status, job.error_code) == (ImportStatus.INVALID, MALFORMED_FILE)
    assert job.error_details == {"reason": "json", "after": 5}
    assert not Conversation.objects.exists()
    with pytest.raises(ImportNotAllowed):
        services.start_import(job, keep_conversations=True, build_memories=True)


def test_one_import_at_a_time(alice: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(services, "enqueue_step", lambda import_id: None)
    first = services.create_import(owner=alice, source="chatgpt", upload=chatgpt_zip())
    with pytest.raises(ImportNotAllowed) as caught:
        services.create_import(owner=alice, source="claude", upload=upload(CLAUDE_JSON))
    assert caught.value.code == BUSY
    # A preview waiting for a choice does not block: a new upload replaces it.
    services.run_import(first.pk)
    second = services.create_import(owner=alice, source="claude", upload=upload(CLAUDE_JSON))
    assert list(Import.objects.values_list("pk", flat=True)) == [second.pk]


def test_an_import_resumes_after_its_worker_died_and_never_doubles(
    alice: Any, monkeypatch: Any
) -> None:
    """A worker killed in the middle of a batch loses only that batch; the check every minute
    gives the import to another worker, which goes on where it stopped."""
    monkeypatch.setattr(services, "STORE_BATCH_CONVERSATIONS", 1)
    calls = {"stored": 0}
    real = services.add_conversations

    def dies_on_the_second(*args: Any, **kwargs: Any) -> Any:
        calls["stored"] += 1
        if calls["stored"] == 2:
            raise KeyboardInterrupt  # As the worker's process killed mid-batch.
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "add_conversations", dies_on_the_second)
    job = services.create_import(owner=alice, source="chatgpt", upload=chatgpt_zip())
    with pytest.raises(KeyboardInterrupt):
        services.start_import(job, keep_conversations=True, build_memories=True)
    job.refresh_from_db()
    assert (job.status, job.conversations_stored, Conversation.objects.count()) == (
        "importing",
        1,
        1,
    )
    assert services.resume_stalled() == []  # Not stalled yet: its heartbeat is recent.
    Import.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    assert services.resume_stalled() == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.conversations_stored, job.messages_stored) == ("done", 3, 7)
    assert Conversation.objects.count() == 3 and Message.objects.count() == 7
    assert job.conversations.count() == 3
    assert job.messages_extracted == 7


def test_short_steps_go_on_as_new_jobs(alice: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(services, "STEP_SECONDS", 0.0)
    monkeypatch.setattr(services, "STORE_BATCH_CONVERSATIONS", 1)
    steps: list[int] = []
    real = services.enqueue_step

    def counted(import_id: int) -> None:
        steps.append(import_id)
        real(import_id)

    monkeypatch.setattr(services, "enqueue_step", counted)
    job = imported(alice, "chatgpt", chatgpt_zip())
    assert (job.status, job.conversations_stored, job.messages_extracted) == ("done", 3, 7)
    assert len(steps) > 5


def test_repeated_failures_stop_the_import_which_can_be_tried_again(
    alice: Any, monkeypatch: Any
) -> None:
    real = services._store_conversations
    monkeypatch.setattr(services, "_store_conversations", lambda *args: 1 / 0)
    job = imported(alice, "claude", upload(CLAUDE_JSON))
    for _attempt in range(services.MAX_FAILURES - 1):
        assert job.status == "importing"
        Import.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
        services.resume_stalled()
        job.refresh_from_db()
    assert (job.status, job.error_code) == ("failed", "IMPORT_FAILED")
    assert "ZeroDivisionError" in job.error_details["error"]
    monkeypatch.setattr(services, "_store_conversations", real)
    services.resume_import(job)
    job.refresh_from_db()
    assert (job.status, job.conversations_stored, job.error_code) == ("done", 2, "")


def test_a_preview_nobody_confirms_is_discarded_after_a_week(alice: Any) -> None:
    job = services.create_import(owner=alice, source="claude", upload=upload(CLAUDE_JSON))
    directory = services.import_dir(job)
    Import.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(days=8))
    services.resume_stalled()
    assert not Import.objects.exists() and not directory.exists()


def test_messages_in_review_mode_wait_for_review(alice: Any) -> None:
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    imported(alice, "claude", upload(CLAUDE_JSON))
    assert Memory.objects.exists()
    assert set(Memory.objects.values_list("status", flat=True)) == {Status.PENDING}


def test_the_copy_holds_only_conversations_to_import(alice: Any) -> None:
    job = services.create_import(owner=alice, source="chatgpt", upload=chatgpt_zip())
    lines = (services.import_dir(job) / services.COPY_FILE).read_text().splitlines()
    assert [json.loads(line)["external_id"] for line in lines] == [
        "6a1c0f3e-react-0001",
        "chinese-0004",
        "vue-0005",
    ]


def test_an_erased_account_leaves_no_import_files(alice: Any) -> None:
    from config.my_data import erase_account

    job = services.create_import(owner=alice, source="claude", upload=upload(CLAUDE_JSON))
    directory = services.import_dir(job)
    assert directory.exists()
    erase_account(alice)
    assert not Import.objects.exists() and not directory.exists()


def test_the_imports_memories_are_its_result_not_memory_updated_notices(alice: Any) -> None:
    from conversations.notices import extraction_notices

    imported(alice, "chatgpt", chatgpt_zip())
    assert Memory.objects.exists()
    assert extraction_notices(alice) == []
