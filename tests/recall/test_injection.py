from __future__ import annotations

import hashlib
import json
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.models import Conversation
from memories import services
from memories.models import Memory, Scope
from memories.tokens import estimate_tokens
from recall import bookkeeping
from recall.context import preview_context
from recall.injection import PreviewRequest, injection_preview
from recall.models import AccessLog
from teams.models import Membership
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db


def preview(user, message="tea", **fields):
    return injection_preview(user, PreviewRequest(message=message, **fields))


def ids(result, key="memories"):
    return [entry["id"] for entry in result[key]]


def test_token_estimate_counts_cjk_characters_one_each():
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 3  # 11 characters / 4, rounded up
    assert estimate_tokens("我喜欢用 vitest") == 4 + 2  # 4 CJK characters, then " vitest"
    assert estimate_tokens("测试") == 2


def test_markdown_block_has_a_section_per_scope(alice, project):
    chat = Conversation.objects.create(owner=alice, external_id="c1")
    remember(alice, "I like green tea", kind="preference")
    remember(alice, "The team drinks tea at four", scope=Scope.PROJECT, project=project)
    remember(alice, "We are choosing a tea vendor", scope=Scope.CONVERSATION, conversation=chat)

    result = preview(alice, "tea", project=project, conversation=chat)

    assert result["block"] == (
        "## Memory\n\n### About the user\n- I like green tea\n"
        "\n### Project knowledge\n- The team drinks tea at four\n"
        "\n### This conversation\n- We are choosing a tea vendor\n"
    )
    assert result["hash"] == hashlib.sha256(result["block"].encode()).hexdigest()
    assert result["tokens"]["total"] == estimate_tokens(result["block"])
    assert result["enabled"] is True and result["degraded"] is None


def test_project_memories_only_for_the_named_project(alice, project):
    remember(alice, "The team drinks tea at four", scope=Scope.PROJECT, project=project)

    assert preview(alice, "tea")["memories"] == []
    assert len(preview(alice, "tea", project=project)["memories"]) == 1


def test_xml_and_json_formats_escape_content(alice, project):
    remember(alice, "Tea <strong> & milk", kind="preference")
    remember(alice, "Tea budget fixed", scope=Scope.PROJECT, project=project)

    xml = preview(alice, project=project, fmt="xml")["block"]
    assert xml == (
        "<user_memory>\n- [preference] Tea &lt;strong&gt; &amp; milk\n</user_memory>\n"
        "<project-memory>\n- [fact] Tea budget fixed\n</project-memory>\n"
    )
    block = json.loads(preview(alice, project=project, fmt="json")["block"])
    assert block == {
        "user": [{"kind": "preference", "content": "Tea <strong> & milk"}],
        "project": [{"kind": "fact", "content": "Tea budget fixed"}],
    }


def test_pinned_memories_come_first_even_without_a_match(alice):
    matching = remember(alice, "Tea is my favourite drink", kind="preference")
    pinned = remember(alice, "Always answer in British English", pinned=True)

    result = preview(alice, "tea")

    assert ids(result) == [pinned.pk, matching.pk]
    assert result["block"].index("British English") < result["block"].index("Tea is")


def test_each_scope_has_its_own_budget(alice, project):
    for n in range(5):
        remember(alice, f"Tea fact number {n} " + "x" * 40, scope=Scope.PROJECT, project=project)
    remember(alice, "Tea preference short", kind="preference")

    result = preview(
        alice, project=project, scope_budgets={"user": 600, "project": 30, "conversation": 600}
    )

    assert result["tokens"]["project"] <= 30
    project_kept = [m for m in result["memories"] if m["scope"] == "project"]
    assert len(project_kept) == 1
    assert {d["reason"] for d in result["dropped"]} == {"scope_budget"}
    assert len(result["dropped"]) == 4
    assert any(m["scope"] == "user" for m in result["memories"])


def test_over_the_total_budget_the_lowest_scored_go_first_whatever_their_scope(alice, project):
    chat = Conversation.objects.create(owner=alice, external_id="c1")
    best = remember(alice, "Green tea with lemon, hot", scope=Scope.CONVERSATION, conversation=chat)
    second = remember(alice, "Green tea from Ming", scope=Scope.PROJECT, project=project)
    third = remember(alice, "Tea order is pending")
    query = {"message": "green tea lemon", "project": project, "conversation": chat}
    full = preview(alice, dry_run=True, **query)
    assert set(ids(full)) == {best.pk, second.pk, third.pk}
    assert [m["id"] for m in sorted(full["memories"], key=lambda m: -m["score"])] == [
        best.pk,
        second.pk,
        third.pk,
    ]

    tight = preview(alice, budget=full["tokens"]["total"] - 1, **query)
    assert set(ids(tight)) == {best.pk, second.pk}
    assert [(d["id"], d["reason"]) for d in tight["dropped"]] == [(third.pk, "total_budget")]
    assert tight["tokens"]["total"] <= full["tokens"]["total"] - 1

    only_best = preview(alice, budget=20, **query)
    assert ids(only_best) == [best.pk]
    assert only_best["tokens"]["total"] <= 20


def test_limit_drops_the_lowest_ranked(alice):
    for n in range(4):
        remember(alice, f"Tea note {n}")

    result = preview(alice, limit=2)

    assert len(result["memories"]) == 2
    assert [d["reason"] for d in result["dropped"]] == ["limit", "limit"]


def test_same_inputs_give_the_same_block_and_hash(alice):
    memory = remember(alice, "Tea without sugar", kind="preference")
    remember(alice, "茶要绿茶", kind="preference")

    first = preview(alice, "tea 绿茶")
    second = preview(alice, "tea 绿茶")
    assert first["block"] == second["block"] and first["hash"] == second["hash"]

    services.memory_update(
        memory=memory, changes={"content": "Tea with honey"}, expected_revision=None, actor=alice
    )
    third = preview(alice, "tea 绿茶")
    assert third["hash"] != first["hash"]
    assert "Tea with honey" in third["block"]


def test_superseded_memories_and_as_of(alice):
    then = timezone.now() - timedelta(days=30)
    old = remember(alice, "Tea budget is 100", valid_from=then - timedelta(days=30))
    new = remember(alice, "Tea budget is 200", valid_from=then + timedelta(days=1))
    services.memory_supersede(old=old, new=new, actor=alice)

    assert ids(preview(alice, "tea budget")) == [new.pk]
    assert ids(preview(alice, "tea budget", as_of=then)) == [old.pk]


def test_memory_off_gives_an_empty_block_and_says_why(alice):
    remember(alice, "Tea please")
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)

    result = preview(alice)

    assert result["enabled"] is False
    assert result["reason"] == "memory_disabled"
    assert result["block"] == "" and result["memories"] == []
    assert not AccessLog.objects.exists()


def test_settings_projects_and_past_people_are_read_in_one_round_trip(alice, project):
    Conversation.objects.create(
        owner=alice, external_id="c", participants=[{"name": "Mia", "role": "user"}]
    )
    Conversation.objects.create(
        owner=alice, external_id="t", temporary=True, participants=[{"name": "Zed"}]
    )

    with CaptureQueriesContext(connection) as queries:
        context = preview_context(alice, None)

    assert len(queries) == 1
    assert context.memory_settings.memory_enabled is True
    assert context.project_ids == [project.pk]
    # A temporary conversation's people are nobody a query is known to be about.
    assert context.past.names == {"Mia"} and context.past.any


def test_the_context_read_made_once_per_user_still_reads_what_changed_since(alice, project):
    first = preview_context(alice, None)
    Membership.objects.filter(user=alice).delete()
    Conversation.objects.create(
        owner=alice, external_id="n", participants=[{"name": "Noor", "role": "user"}]
    )

    again = preview_context(alice, None)

    assert first.project_ids == [project.pk] and not first.past.any
    assert again.project_ids == [] and again.past.names == {"Noor"}


def test_a_user_without_settings_yet_gets_them_made_with_the_defaults(alice, settings):
    remember(alice, "Tea please")
    settings.MEMORY_ENABLED_BY_DEFAULT = True
    MemorySettings.objects.filter(user=alice).delete()

    result = preview(alice)

    assert MemorySettings.objects.get(user=alice).memory_enabled is True
    assert ids(result) == [Memory.objects.get().pk]


def test_a_temporary_conversation_gets_nothing(alice):
    remember(alice, "Tea please")
    private = Conversation.objects.create(owner=alice, external_id="p", temporary=True)

    for result in (preview(alice, conversation=private), preview(alice, temporary=True)):
        assert result["enabled"] is True
        assert result["reason"] == "temporary_conversation"
        assert result["block"] == ""
    assert Memory.objects.get().access_count == 0


def test_injection_counts_use_and_logs_access(alice):
    first = remember(alice, "Tea at nine")
    second = remember(alice, "Tea at three")
    unrelated = remember(alice, "Bicycle is blue")

    result = injection_preview(alice, PreviewRequest(message="tea"), client="desk app")

    counts = dict(Memory.objects.values_list("id", "access_count"))
    assert counts == {first.pk: 1, second.pk: 1, unrelated.pk: 0}
    assert Memory.objects.get(pk=first.pk).last_accessed_at is not None
    log = AccessLog.objects.get()
    assert sorted(log.memory_ids) == sorted([first.pk, second.pk])
    assert log.block_hash == result["hash"] and log.client == "desk app"


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_bookkeeping_is_written_shortly_after_the_answer(
    alice, monkeypatch
):
    """On a side connection, committed on its own (without waiting for the disk)."""
    monkeypatch.setattr(bookkeeping, "FLUSH_SECONDS", 0.05)
    memory = remember(alice, "Tea at nine")

    result = preview(alice)
    deadline = time.monotonic() + 10
    while not AccessLog.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.02)

    assert connection.get_autocommit()
    memory.refresh_from_db()
    assert memory.access_count == 1 and memory.last_accessed_at is not None
    assert AccessLog.objects.get().memory_ids == ids(result) == [memory.pk]


@pytest.mark.django_db(transaction=True)
def test_the_bookkeeping_of_previews_close_together_is_written_together(alice, monkeypatch):
    """Concurrent previews inject the same memories: their access log rows are one INSERT
    and their uses one UPDATE, instead of an UPDATE each queueing on the rows' locks."""
    monkeypatch.setattr(bookkeeping, "FLUSH_SECONDS", 60)  # written when the test says
    memory = remember(alice, "Tea at nine")
    before = timezone.now()
    results = [preview(alice) for _preview in range(3)]
    assert not AccessLog.objects.exists()

    with CaptureQueriesContext(connection) as captured:
        bookkeeping.flush()

    writes = [q["sql"] for q in captured if q["sql"].lstrip().startswith(("INSERT", "WITH"))]
    assert len(writes) == 2
    assert [log.block_hash for log in AccessLog.objects.order_by("pk")] == [
        result["hash"] for result in results
    ]
    memory.refresh_from_db()
    assert memory.access_count == 3
    assert memory.last_accessed_at is not None and memory.last_accessed_at > before


@pytest.mark.django_db(transaction=True)
def test_a_use_of_a_memory_another_transaction_locked_is_counted_once_it_is_free(
    alice, monkeypatch
):
    """Bookkeeping never waits for a lock (it held back the cleanup of old row versions):
    the use waits, gathered, for a flush after the lock is gone."""
    monkeypatch.setattr(bookkeeping, "FLUSH_SECONDS", 60)  # written when the test says
    locked, free = remember(alice, "Tea at nine"), remember(alice, "Tea with lemon")
    holding, release = threading.Event(), threading.Event()

    def hold_lock() -> None:
        try:
            with transaction.atomic():
                Memory.objects.select_for_update().get(pk=locked.pk)
                holding.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert holding.wait(timeout=10)
        assert sorted(ids(preview(alice, message="tea"))) == sorted([locked.pk, free.pk])
        bookkeeping.flush()
        counts = dict(Memory.objects.values_list("id", "access_count"))
        assert counts == {locked.pk: 0, free.pk: 1}
    finally:
        release.set()
        holder.join()

    bookkeeping.flush()
    counts = dict(Memory.objects.values_list("id", "access_count"))
    assert counts == {locked.pk: 1, free.pk: 1}
    assert AccessLog.objects.count() == 1


def test_counting_use_touches_no_index(alice):
    """Use counts change on every preview: PostgreSQL updates such rows in place (HOT),
    without new index entries, only while no index covers the columns it writes."""
    # Not embedded: the test's one transaction keeps every earlier row version, and pages
    # of rows with vectors would fill up.
    memories = [
        services.memory_create(owner=alice, content=f"Tea at {hour}")
        for hour in ("nine", "ten", "noon")
    ]

    def updates() -> tuple[int, int, list[str]]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_stat_get_xact_tuples_updated(oid), "
                "pg_stat_get_xact_tuples_hot_updated(oid), reloptions "
                "FROM pg_class WHERE oid = 'memoryapp_memory'::regclass"
            )
            return cursor.fetchone()

    updated_before, hot_before, _options = updates()
    preview(alice)
    updated, hot, options = updates()

    assert updated - updated_before == hot - hot_before == len(memories)
    # Room on each page for the new versions (migration 0009).
    assert "fillfactor=50" in options


def test_dry_run_changes_nothing(alice):
    memory = remember(alice, "Tea at nine")

    result = preview(alice, dry_run=True)

    assert ids(result) == [memory.pk]
    memory.refresh_from_db()
    assert memory.access_count == 0 and memory.last_accessed_at is None
    assert not AccessLog.objects.exists()


def test_query_is_the_message_plus_three_recent_messages(alice):
    remember(alice, "Coffee beans come from Yunnan")
    remember(alice, "Sourdough starter lives in the fridge")

    too_far = preview(
        alice, "what about it?", recent_messages=["coffee", "a", "b", "c"], dry_run=True
    )
    recent = preview(alice, "what about it?", recent_messages=["coffee", "a", "b"], dry_run=True)

    assert too_far["memories"] == []
    assert [m["content"] for m in recent["memories"]] == ["Coffee beans come from Yunnan"]
