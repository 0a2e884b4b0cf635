"""The move to apps by area: a database of the old layout, with a row in every table,
migrates to the new one and keeps every row (state-only migrations, same tables)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

# The last migrations of the single-app layout...
OLD_LEAVES = [("memoryapp", "0009_memory_fillfactor_50"), ("accounts", "0001_initial")]
# ...and the apps the move created, unapplied.
BEFORE_THE_MOVE: list[tuple[str, str | None]] = [
    *OLD_LEAVES,
    ("teams", None),
    ("conversations", None),
    ("recall", None),
]

TABLES = [
    "accounts_memorysettings",
    "accounts_apitoken",
    "accounts_team",
    "accounts_membership",
    "accounts_project",
    "accounts_invitation",
    "memoryapp_memory",
    "memoryapp_memoryevent",
    "memoryapp_conversation",
    "memoryapp_message",
    "memoryapp_extractionrun",
    "memoryapp_accesslog",
    "memoryapp_workerheartbeat",
    "memoryapp_forgettingreport",
]


def _counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        counts = {}
        for table in TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")
            counts[table] = cursor.fetchone()[0]
    return counts


def _fill_old_layout(apps: Any) -> None:
    """One row (at least) in every table, written through the old layout's models."""
    user = apps.get_model("auth", "User").objects.create(username="old", email="old@example.com")
    apps.get_model("accounts", "MemorySettings").objects.get_or_create(user=user)
    token = apps.get_model("accounts", "ApiToken").objects.create(
        user=user, name="laptop", token_prefix="mem_old", token_hash="0" * 64
    )
    team = apps.get_model("accounts", "Team").objects.create(name="Old team", slug="old-team")
    apps.get_model("accounts", "Membership").objects.create(team=team, user=user, role="owner")
    project = apps.get_model("accounts", "Project").objects.create(
        team=team, name="Old project", slug="old-project"
    )
    apps.get_model("accounts", "Invitation").objects.create(
        team=team, email="new@example.com", role="member", invited_by=user, token="t" * 40
    )
    conversation = apps.get_model("memoryapp", "Conversation").objects.create(
        owner=user, project=project, external_id="chat-1"
    )
    message = apps.get_model("memoryapp", "Message").objects.create(
        conversation=conversation,
        role="user",
        content="I prefer pytest.",
        external_id="m1",
        position=1,
    )
    memory = apps.get_model("memoryapp", "Memory").objects.create(
        owner=user,
        scope="project",
        project=project,
        conversation=conversation,
        kind="preference",
        content="Prefers pytest",
        evidence=[{"message_ids": [message.pk], "quote": "I prefer pytest."}],
    )
    apps.get_model("memoryapp", "MemoryEvent").objects.create(
        memory=memory, action="created", actor=user, after={"content": memory.content}
    )
    apps.get_model("memoryapp", "ExtractionRun").objects.create(
        conversation=conversation,
        trigger="turns",
        status="succeeded",
        window_first=1,
        window_last=1,
    )
    apps.get_model("memoryapp", "AccessLog").objects.create(
        user=user, api_token=token, conversation=conversation, memory_ids=[memory.pk]
    )
    apps.get_model("memoryapp", "WorkerHeartbeat").objects.create(name="old")
    apps.get_model("memoryapp", "ForgettingReport").objects.create(run_on=timezone.now().date())
    with connection.cursor() as cursor:
        # Content types (and the permissions that point at them) as the old layout had them.
        cursor.execute(
            "UPDATE django_content_type SET app_label = 'accounts' WHERE app_label = 'teams'"
        )
        cursor.execute(
            "UPDATE django_content_type SET app_label = 'memoryapp' "
            "WHERE app_label IN ('conversations', 'recall')"
        )
        cursor.execute(
            "INSERT INTO django_q_schedule (name, func, schedule_type, repeats) "
            "VALUES ('retry extraction old', 'memoryapp.jobs.extract_conversation', 'O', -1), "
            "('old heartbeat', 'memoryapp.jobs.heartbeat', 'I', -1)"
        )


@pytest.mark.django_db(transaction=True)
def test_the_old_layout_migrates_to_apps_by_area_keeping_every_row() -> None:
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE_THE_MOVE)
    executor.loader.build_graph()
    _fill_old_layout(executor.loader.project_state(OLD_LEAVES).apps)
    before = _counts()
    assert all(before.values()), before

    executor = MigrationExecutor(connection)
    executor.migrate(latest)

    assert _counts() == before
    from django.contrib.contenttypes.models import ContentType
    from django_q.models import Schedule

    from conversations.models import Conversation
    from memories.models import Memory
    from recall.models import AccessLog
    from teams.models import Project

    memory = Memory.objects.get(content="Prefers pytest")
    assert memory.project == Project.objects.get(slug="old-project")
    assert memory.conversation == Conversation.objects.get(external_id="chat-1")
    message = memory.conversation.messages.get()
    assert message.content == "I prefer pytest."
    # Backfilled from its conversation (conversations 0007).
    assert (message.owner_id, message.temporary) == (memory.owner_id, False)
    assert AccessLog.objects.get().memory_ids == [memory.pk]
    assert ContentType.objects.filter(app_label="teams", model="team").exists()
    assert ContentType.objects.filter(app_label="conversations", model="conversation").exists()
    assert not ContentType.objects.filter(app_label="accounts", model="team").exists()
    assert set(
        Schedule.objects.filter(name__in=["retry extraction old", "old heartbeat"]).values_list(
            "func", flat=True
        )
    ) == {"conversations.jobs.extract_conversation", "memories.jobs.heartbeat"}
