"""What the conversations pages read: the user's conversations with their counts, and a
conversation's messages each with the memories extracted from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db.models import Count, IntegerField, Max, Min, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from conversations.models import Conversation, Message
from memories.models import Memory
from memories.permissions import memories_visible_to

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, User


def _count(queryset: QuerySet[Any]) -> Coalesce:
    counted = queryset.order_by().values("conversation").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def _message_time(aggregate: type[Max] | type[Min]) -> Subquery:
    return Subquery(
        Message.objects.filter(conversation=OuterRef("pk"))
        .order_by()
        .values("conversation")
        .annotate(at=aggregate("sent_at"))
        .values("at")
    )


def with_message_times(conversations: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """``started_at``: its first message's time (the conversation's own creation is when the
    app first sent it, maybe long after), else its creation; ``last_message_at``."""
    return conversations.annotate(
        started_at=Coalesce(_message_time(Min), "created_at"),
        last_message_at=_message_time(Max),
    )


def conversations_of(user: User) -> QuerySet[Conversation]:
    """The user's conversations, latest first, with their message and memory counts (the
    memories made from them, not in the trash) and their first and last messages' times."""
    return with_message_times(
        Conversation.objects.filter(owner=user)
        .select_related("project")
        .annotate(
            message_count=_count(Message.objects.filter(conversation=OuterRef("pk"))),
            memory_count=_count(
                Memory.objects.filter(conversation=OuterRef("pk"), deleted_at__isnull=True)
            ),
        )
    ).order_by("-created_at", "-pk")


@dataclass
class MemoryLink:
    memory: Memory
    url: str


@dataclass
class MessageRow:
    message: Message
    speaker: str
    is_account_user: bool
    memories: list[MemoryLink] = field(default_factory=list)


def conversation_messages(
    conversation: Conversation, messages: list[Message], viewer: AbstractBaseUser
) -> tuple[list[MessageRow], list[MemoryLink]]:
    """The ``messages`` each with the memories whose evidence cites it, and every memory made
    from the conversation (those the viewer may see, in any state but purged)."""
    ids = [message.pk for message in messages]
    cites = Q()
    for pk in ids:
        cites |= Q(evidence__contains=[{"messages": [pk]}])
        cites |= Q(evidence__contains=[{"message_ids": [pk]}])
    memories = list(
        memories_visible_to(viewer)
        .filter(Q(conversation=conversation) | cites)
        .defer("embedding", "search_vector", "search_document")
        .order_by("created_at", "pk")
    )
    links = [MemoryLink(memory, memory.page_url()) for memory in memories]
    by_message: dict[int, list[MemoryLink]] = {}
    for link in links:
        for pk in link.memory.source_message_ids:
            by_message.setdefault(pk, []).append(link)
    rows = []
    for message in messages:
        speaker = conversation.speaker_of(message.role, message.speaker)
        rows.append(
            MessageRow(
                message, speaker.name, speaker.is_account_user, by_message.get(message.pk, [])
            )
        )
    made_here = [link for link in links if link.memory.conversation_id == conversation.pk]
    return rows, made_here
