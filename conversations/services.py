"""Adding messages to conversations (the JSON API, the memory proxy), storing whole
conversations (an import), and deleting conversations and their messages: by the user,
and by the daily retention job.

Memories made from a conversation stay: their ``conversation`` link is cleared (SET NULL)
and their evidence keeps its quotes, so the pages show the source as deleted
(``conversations.evidence``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.extraction.runs import maybe_request_turns_extraction
from conversations.models import Conversation, ExtractionRun, Message
from memories.sensitive import redact

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User

# A temporary conversation's messages are kept this long at most, whatever the retention.
TEMPORARY_MESSAGES_KEPT = timedelta(hours=24)


@dataclass(frozen=True)
class NewMessage:
    """A message to add; ``sent_at`` None: now."""

    external_id: str
    role: str
    content: str
    speaker: str = ""
    sent_at: datetime | None = None


@dataclass(frozen=True)
class AddedMessages:
    conversation: Conversation
    # Each external id given, in the order given, with its message's position.
    positions: dict[str, int]
    # The external ids already stored before (not stored again).
    duplicates: frozenset[str]
    stored: int
    # The extraction run the new user turns asked for, if they did.
    run: ExtractionRun | None


def add_messages(
    owner: AbstractBaseUser | AnonymousUser, conversation_id: int, messages: Sequence[NewMessage]
) -> AddedMessages:
    """Add ``messages`` to ``owner``'s conversation, idempotent by external id (the first
    of a repeated one counts), numbered after its last; stored redacted. Memory paused
    (privacy): kept and never extracted; otherwise the new user turns may ask for an
    extraction run (``maybe_request_turns_extraction``). Raises Conversation.DoesNotExist
    when ``owner`` has no such conversation."""
    with transaction.atomic():
        # The row lock keeps positions gapless when two batches arrive at once.
        conversation = (
            Conversation.objects.select_for_update(of=("self",))
            .select_related("project")
            .get(owner_id=owner.pk, pk=conversation_id)
        )
        incoming = _first_of_each(messages)
        existing = dict(
            conversation.messages.filter(external_id__in=list(incoming)).values_list(
                "external_id", "position"
            )
        )
        last = conversation.messages.aggregate(last=Max("position"))["last"] or 0
        now = timezone.now()
        new_messages = []
        for message in incoming.values():
            if message.external_id in existing:
                continue
            last += 1
            new_messages.append(_stored(message, conversation, last, now))
        Message.objects.bulk_create(new_messages)
        run = None
        if new_messages and MemorySettings.for_user(owner).privacy_paused:
            # Memory paused (privacy): what is said meanwhile is kept, never extracted.
            Conversation.objects.filter(pk=conversation.pk).update(extracted_through=last)
        elif new_messages:
            run = maybe_request_turns_extraction(conversation)
    positions = {**existing, **{message.external_id: message.position for message in new_messages}}
    return AddedMessages(
        conversation=conversation,
        positions={external_id: positions[external_id] for external_id in incoming},
        duplicates=frozenset(existing),
        stored=len(new_messages),
        run=run,
    )


def _first_of_each(messages: Sequence[NewMessage]) -> dict[str, NewMessage]:
    """The messages by external id, the first of a repeated one counting."""
    incoming: dict[str, NewMessage] = {}
    for message in messages:
        incoming.setdefault(message.external_id, message)
    return incoming


def _stored(
    message: NewMessage, conversation: Conversation, position: int, now: datetime
) -> Message:
    """The row of a new message (not saved yet)."""
    return Message(
        conversation=conversation,
        role=message.role,
        # A secret said in a chat is kept nowhere.
        content=redact(message.content)[0],
        external_id=message.external_id,
        speaker=message.speaker,
        position=position,
        sent_at=message.sent_at or now,
        created_at=now,
    )


@dataclass(frozen=True)
class NewConversation:
    """A conversation to store whole, with its messages in order (an import's)."""

    external_id: str
    messages: Sequence[NewMessage]
    title: str = ""
    client: str = ""
    # When it began (None: its first message, else now) and ended (None: still open).
    started_at: datetime | None = None
    ended_at: datetime | None = None


@transaction.atomic
def add_conversations(
    owner: User,
    conversations: Sequence[NewConversation],
    *,
    extract: bool,
) -> list[Conversation]:
    """Store new conversations of ``owner`` whole, in a few statements however many there
    are (an import's backlog: a round trip per conversation would take minutes), each
    message as ``add_messages`` stores it (redacted, numbered 1, 2, …; the first of a
    repeated external id counts). No extraction is asked for: with ``extract`` the messages
    wait for extraction runs the caller makes; without, they are kept and never extracted
    (as what is said while memory is paused). None may exist yet (external ids are unique
    per owner)."""
    now = timezone.now()
    incoming = [_first_of_each(conversation.messages) for conversation in conversations]
    created = Conversation.objects.bulk_create(
        Conversation(
            owner_id=owner.pk,
            external_id=conversation.external_id,
            title=conversation.title,
            client=conversation.client,
            created_at=conversation.started_at
            or next((m.sent_at for m in messages.values() if m.sent_at), now),
            ended_at=conversation.ended_at,
            extracted_through=0 if extract else len(messages),
        )
        for conversation, messages in zip(conversations, incoming, strict=True)
    )
    Message.objects.bulk_create(
        [
            _stored(message, conversation, position, now)
            for conversation, messages in zip(created, incoming, strict=True)
            for position, message in enumerate(messages.values(), start=1)
        ],
        batch_size=1000,
    )
    return created


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
