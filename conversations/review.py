"""What a reviewer sees beside a pending memory (who reviews what: ``memories.permissions``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conversations.models import Message
from memories.models import Memory
from memories.when import MemoryDate, memory_when


@dataclass(frozen=True)
class Quote:
    """A source message split around the quoted span, for highlighting."""

    message: Message | None
    before: str
    quote: str
    after: str


@dataclass(frozen=True)
class ReviewItem:
    memory: Memory
    quotes: list[Quote]
    supersedes: Memory | None
    when: MemoryDate | None = None


def _quote(message: Message | None, quote: str) -> Quote:
    if message is None:
        return Quote(None, "", quote, "")
    start = message.content.find(quote) if quote else -1
    if start < 0:
        return Quote(message, message.content, "", "")
    end = start + len(quote)
    return Quote(message, message.content[:start], quote, message.content[end:])


def review_items(memories: list[Memory]) -> list[ReviewItem]:
    """Each memory with its source messages and the memory it would supersede (3 queries)."""
    message_ids = {
        message_id
        for memory in memories
        for evidence in memory.evidence
        for message_id in _ids(evidence)
    }
    messages = Message.objects.in_bulk(message_ids)
    superseded_ids = [
        m.metadata.get("supersedes") for m in memories if m.metadata.get("supersedes")
    ]
    superseded = Memory.objects.in_bulk(superseded_ids)
    items = []
    for memory in memories:
        quotes: list[Quote] = []
        for evidence in memory.evidence:
            text = str(evidence.get("quote") or "")
            sources: list[Message | None] = [messages[i] for i in _ids(evidence) if i in messages]
            quotes.extend(_quote(message, text) for message in sources or [None])
        items.append(
            ReviewItem(
                memory,
                quotes,
                superseded.get(memory.metadata.get("supersedes")),
                memory_when(memory),
            )
        )
    return items


def _ids(evidence: Any) -> list[int]:
    if not isinstance(evidence, dict):
        return []
    return [i for i in evidence.get("messages") or [] if isinstance(i, int)]
