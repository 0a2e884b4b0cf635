"""A memory's evidence: the quoted spans and the messages they came from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.safestring import SafeString

from conversations.models import Message
from memories.memory_list import mark_matches
from memories.models import evidence_message_ids

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from memories.models import Memory


@dataclass
class SourceMessage:
    role: str
    sent_at: Any
    text: SafeString


@dataclass
class Evidence:
    quote: str
    messages: list[SourceMessage]
    # Its messages were deleted (with their conversation, or after the retention period).
    source_deleted: bool = False


def evidence_of(memory: Memory, viewer: AbstractBaseUser) -> list[Evidence]:
    """The memory's sources: each quoted span, with the messages it came from.

    An item of ``Memory.evidence`` is ``{"messages": [...], "quote": "..."}``.
    Whole messages are shown only from the viewer's own conversations; a
    project member sees the quote of someone else's conversation, not the rest.
    """
    items = [item for item in memory.evidence if isinstance(item, dict)]
    wanted = {pk for item in items for pk in evidence_message_ids([item])}
    existing = Message.objects.filter(pk__in=wanted)
    messages = {
        message.pk: message for message in existing.filter(conversation__owner_id=viewer.pk)
    }
    kept = set(existing.values_list("pk", flat=True))
    result = []
    for item in items:
        quote = str(item.get("quote") or "")
        pattern = re.compile(re.escape(quote), re.IGNORECASE) if quote else None
        sources = [
            SourceMessage(message.role, message.sent_at, mark_matches(message.content, pattern))
            for pk in evidence_message_ids([item])
            if (message := messages.get(pk)) is not None
        ]
        ids = evidence_message_ids([item])
        result.append(Evidence(quote, sources, bool(ids) and not kept.intersection(ids)))
    return result
