"""My data: everything of a person as one JSON archive, and erasing their account.

What is "mine": my account, settings, API tokens (never their secrets) and team
memberships; every memory I created, personal or in a project, with its history; my
conversations with their messages; the log of what recall gave my assistants. A
project's memories created by other members are theirs and the team's, so they are
neither in my archive nor erased with me. Who made a change in my memories' history is
"you", a job's name, or "another member": other people's names are not mine to export.

Erasing: the teams I alone own go to their longest-standing admin, else member, else
viewer (``teams.services.succession_plan``), or are deleted when nobody else is in them;
the memories I created in a project stay with the project, owned by its team's owner,
without their evidence (my words); everything else of mine is deleted for good.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from allauth.account.models import EmailAddress
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiToken, MemorySettings
from conversations.models import Conversation, Message
from memories import services as memory_services
from memories.models import Memory, MemoryEvent
from memories.purge import memories_purge
from recall.models import AccessLog
from teams import services as team_services
from teams.models import Membership

if TYPE_CHECKING:
    from django.contrib.auth.models import User

ARCHIVE_FORMAT = "memoryapp-archive"
ARCHIVE_VERSION = 1


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _actor(event: MemoryEvent, user: User) -> str:
    if event.actor_id == user.pk:
        return "you"
    if event.actor_id is not None:
        return "another member"
    return event.actor_label or "system"


def _memories(user: User) -> list[dict[str, Any]]:
    memories = (
        Memory.objects.filter(owner=user)
        .select_related("project")
        .defer("embedding", "search_vector", "search_document")
        .order_by("pk")
    )
    history: dict[int, list[dict[str, Any]]] = {}
    for event in MemoryEvent.objects.filter(memory__owner=user).order_by("created_at", "pk"):
        history.setdefault(event.memory_id, []).append(
            {
                "action": event.action,
                "at": _when(event.created_at),
                "by": _actor(event, user),
                "before": event.before,
                "after": event.after,
            }
        )
    return [
        {
            "id": memory.pk,
            "content": memory.content,
            "kind": memory.kind,
            "scope": memory.scope,
            "project": memory.project.name if memory.project else None,
            "tags": list(memory.tags),
            "importance": memory.importance,
            "confidence": memory.confidence,
            "origin": memory.origin,
            "pinned": memory.pinned,
            "status": memory.status,
            "state": memory.state,
            "conversation_id": memory.conversation_id,
            "evidence": memory.evidence,
            "metadata": memory.metadata,
            "valid_from": _when(memory.valid_from),
            "valid_until": _when(memory.valid_until),
            "superseded_by_id": memory.superseded_by_id,
            "deleted_at": _when(memory.deleted_at),
            "forgotten_at": _when(memory.forgotten_at),
            "created_at": _when(memory.created_at),
            "updated_at": _when(memory.updated_at),
            "last_used_at": _when(memory.last_accessed_at),
            "times_used": memory.access_count,
            "history": history.get(memory.pk, []),
        }
        for memory in memories
    ]


def _conversations(user: User) -> list[dict[str, Any]]:
    messages: dict[int, list[dict[str, Any]]] = {}
    for message in Message.objects.filter(conversation__owner=user).order_by(
        "conversation", "position"
    ):
        messages.setdefault(message.conversation_id, []).append(
            {
                "id": message.pk,
                "position": message.position,
                "role": message.role,
                "speaker": message.speaker,
                "content": message.content,
                "sent_at": _when(message.sent_at),
            }
        )
    return [
        {
            "id": conversation.pk,
            "external_id": conversation.external_id,
            "title": conversation.title,
            "app": conversation.client,
            "temporary": conversation.temporary,
            "project": conversation.project.name if conversation.project else None,
            "participants": conversation.participants,
            "created_at": _when(conversation.created_at),
            "ended_at": _when(conversation.ended_at),
            "messages": messages.get(conversation.pk, []),
        }
        for conversation in Conversation.objects.filter(owner=user)
        .select_related("project")
        .order_by("pk")
    ]


def archive_of(user: User) -> dict[str, Any]:
    """Everything of ``user`` (see the module's docstring), as JSON-ready data."""
    memory_settings = MemorySettings.for_user(user)
    return {
        "format": ARCHIVE_FORMAT,
        "version": ARCHIVE_VERSION,
        "exported_at": _when(timezone.now()),
        "account": {
            "username": user.get_username(),
            "email": user.email,
            "first_name": user.first_name,
            "last_name": user.last_name,
            "date_joined": _when(user.date_joined),
            "last_login": _when(user.last_login),
            "email_addresses": [
                {"email": address.email, "verified": address.verified, "primary": address.primary}
                for address in EmailAddress.objects.filter(user=user).order_by("pk")
            ],
        },
        "settings": {
            "memory_enabled": memory_settings.memory_enabled,
            "auto_extract": memory_settings.auto_extract,
            "review_extracted": memory_settings.review_extracted,
            "show_citations": memory_settings.show_citations,
        },
        "api_tokens": [
            {
                "name": token.name,
                "prefix": token.token_prefix,
                "created_at": _when(token.created_at),
                "last_used_at": _when(token.last_used_at),
                "revoked_at": _when(token.revoked_at),
            }
            for token in ApiToken.objects.filter(user=user).order_by("pk")
        ],
        "teams": [
            {
                "team": membership.team.name,
                "role": membership.role,
                "since": _when(membership.created_at),
            }
            for membership in Membership.objects.filter(user=user).select_related("team")
        ],
        "memories": _memories(user),
        "conversations": _conversations(user),
        "access_log": [
            {
                "at": _when(entry.created_at),
                "app": entry.client,
                "conversation_id": entry.conversation_id,
                "memory_ids": list(entry.memory_ids),
            }
            for entry in AccessLog.objects.filter(user=user).order_by("created_at", "pk")
        ],
    }


@transaction.atomic
def erase_account(user: User) -> None:
    """Erase ``user`` and everything of theirs (see the module's docstring)."""
    team_services.leave_all_teams(user)
    memory_services.project_memories_hand_over(owner=user)
    memories_purge(memories=Memory.objects.filter(owner=user).only("pk"))
    user.delete()
