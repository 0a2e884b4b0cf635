"""The demo account `make run` creates: a user with sample memories in English and Chinese."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.models import Conversation, Message
from memories.models import Kind, Memory, Origin, Scope, Status
from memories.services import memory_create
from teams.models import Membership, Project, Role, Team

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-memory-2026"

PERSONAL = [
    (Kind.PREFERENCE, "Prefers concise answers with code examples first.", ["style"], True),
    (Kind.PREFERENCE, "我喜欢用 Vue 3 和 TypeScript 写前端。", ["frontend", "vue"], False),
    (
        Kind.FACT,
        "Works in Beijing time (UTC+8) and usually codes late in the evening.",
        ["schedule"],
        False,
    ),
    (Kind.FACT, "用户是铁路测量工程师，熟悉 GNSS 和全站仪。", ["profile"], False),
    (
        Kind.LESSON,
        "pip install failed behind the office proxy; need HTTPS_PROXY set first.",
        ["python"],
        False,
    ),
    (Kind.GOAL, "计划今年年底前考取 PMP 证书。", ["career"], False),
    (Kind.PATTERN, "Writes tests before refactoring legacy modules.", ["testing"], False),
    (Kind.CONTEXT, "Currently migrating a Flask service to Django.", ["django"], False),
]
PROJECT = [
    (Kind.DECISION, "We chose PostgreSQL over MySQL for the survey database.", ["database"], True),
    (Kind.FACT, "项目使用 CGCS2000 坐标系，不再使用 WGS84。", ["gis"], False),
    (Kind.PATTERN, "Every API change needs an OpenAPI diff in the pull request.", ["api"], False),
    (Kind.LESSON, "导入大文件时需要先分块，否则会超时。", ["import"], False),
]


@transaction.atomic
def create_demo_user() -> tuple[Any, bool]:
    """Create the demo user and its memories once; return (user, created)."""
    user_model = get_user_model()
    existing = user_model.objects.filter(email=DEMO_EMAIL).first()
    if existing is not None:
        return existing, False
    user = user_model.objects.create_superuser(
        username="demo", email=DEMO_EMAIL, password=DEMO_PASSWORD
    )
    MemorySettings.objects.filter(user=user).update(memory_enabled=True)
    team = Team.objects.create(name="Demo Team")
    Membership.objects.create(team=team, user=user, role=Role.OWNER)
    project = Project.objects.create(team=team, name="Rail Survey")

    now = timezone.now()
    for age, (kind, content, tags, pinned) in enumerate(PERSONAL):
        memory = memory_create(
            owner=user, content=content, kind=kind, tags=tags, pinned=pinned, actor=user
        )
        Memory.objects.filter(pk=memory.pk).update(
            created_at=now - timedelta(days=age * 3), access_count=age * 2
        )
    for kind, content, tags, pinned in PROJECT:
        memory_create(
            owner=user,
            content=content,
            kind=kind,
            tags=tags,
            pinned=pinned,
            scope=Scope.PROJECT,
            project=project,
            actor=user,
        )

    conversation = Conversation.objects.create(
        owner=user, project=project, external_id="demo-1", title="Choosing a coordinate system"
    )
    said = "Please remember: the project uses CGCS2000 now, not WGS84 any more."
    for position, (role, text) in enumerate(
        [("user", said), ("assistant", "Noted: CGCS2000 from now on for the survey project.")],
        start=1,
    ):
        Message.objects.create(
            conversation=conversation,
            role=role,
            content=text,
            external_id=f"m{position}",
            position=position,
        )
    first_message = conversation.messages.get(position=1)
    memory_create(
        owner=user,
        content="The survey project uses CGCS2000 coordinates.",
        kind=Kind.FACT,
        scope=Scope.PROJECT,
        project=project,
        conversation=conversation,
        origin=Origin.EXTRACTED,
        status=Status.PENDING,
        confidence=0.7,
        evidence=[
            {
                "conversation_id": conversation.pk,
                "message_ids": [first_message.pk],
                "quote": "the project uses CGCS2000 now",
            }
        ],
        actor_label="extraction",
    )
    return user, True
