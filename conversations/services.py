"""Deleting conversations and their messages: by the user, and by the daily retention job.

Memories made from a conversation stay: their ``conversation`` link is cleared (SET NULL)
and their evidence keeps its quotes, so the pages show the source as deleted
(``conversations.evidence``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from conversations.models import Conversation, Message

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# A temporary conversation's messages are kept this long at most, whatever the retention.
TEMPORARY_MESSAGES_KEPT = timedelta(hours=24)


@transaction.atomic
def conversation_delete(conversation: Conversation) -> None:
    """Delete a conversation with its messages and extraction runs; its memories stay."""
    conversation.delete()


@transaction.atomic
def conversations_delete_all(owner: User) -> int:
    """Delete every conversation of ``owner``; the number deleted."""
    _deleted, by_model = Conversation.objects.filter(owner=owner).delete()
    return by_model.get(Conversation._meta.label, 0)


@transaction.atomic
def purge_old_messages(retention_days: int, *, now: datetime | None = None) -> int:
    """Delete the messages older than ``retention_days`` (0: none), and a temporary
    conversation's older than TEMPORARY_MESSAGES_KEPT; the number deleted.

    A conversation left without messages starts its positions again at 1 when more arrive,
    so extraction reads it from the start again.
    """
    now = now or timezone.now()
    old = Message.objects.filter(
        conversation__temporary=True, created_at__lt=now - TEMPORARY_MESSAGES_KEPT
    )
    if retention_days > 0:
        old = old | Message.objects.filter(created_at__lt=now - timedelta(days=retention_days))
    affected = set(old.values_list("conversation_id", flat=True).distinct())
    if not affected:
        return 0
    deleted, _by_model = Message.objects.filter(pk__in=old.values("pk")).delete()
    Conversation.objects.filter(pk__in=affected).exclude(
        Exists(Message.objects.filter(conversation=OuterRef("pk")))
    ).update(extracted_through=0)
    return deleted
