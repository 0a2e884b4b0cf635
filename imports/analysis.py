"""Reading an uploaded file before anything is written: the preview, and the import's copy.

A conversations export is read once, as a stream: what it holds is counted for the
preview (conversations, messages, dates, languages, what was imported before, what is
private or empty) and each conversation to import is written, normalised, as one line
of JSON to the import's copy (``conversations.jsonl``), which the import then reads from
where it stopped. The upload itself is deleted afterwards. Saved memories are each
checked as adding them would be checked (only a secret? known already?) and their text
written to the copy the same way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils.translation import get_language_info

from conversations.models import Conversation
from imports.errors import EMPTY_EXPORT, ImportRefused
from imports.formats import (
    MAX_MEMORIES,
    MAX_MEMORY_CHARS,
    ExportConversation,
    memory_lines,
    open_conversations,
    read_conversations,
)
from memories.duplicates import find_duplicate
from memories.kinds import guess_kind
from memories.models import Memory, Scope
from memories.sensitive import only_secret

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# What the language of a conversation is read from: its first user messages, this long.
LANGUAGE_SAMPLE_CHARS = 600
# Saved memories listed in the preview (all are counted).
PREVIEW_MEMORIES = 200
# How often reading reports its progress (conversations).
PROGRESS_EVERY = 200
# Written Chinese the identifier takes for a regional variety on short texts.
_CHINESE = {"yue", "wuu", "gan", "hak", "nan"}


@dataclass
class ConversationsPreview:
    conversations: int = 0
    messages: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None
    languages: Counter[str] = field(default_factory=Counter)
    # Conversations that are there already (skipped), private (skipped), without text.
    already_imported: int = 0
    already_imported_messages: int = 0
    private: int = 0
    empty: int = 0
    # Messages left out (system, tool, not text), and attachments noted by name.
    left_out: int = 0
    attachments: int = 0
    latest_titles: list[tuple[str, str]] = field(default_factory=list)

    def add(self, conversation: ExportConversation) -> None:
        times = [m.sent_at for m in conversation.messages if m.sent_at] or [
            t for t in (conversation.created_at,) if t
        ]
        for moment in times[:1] + times[-1:]:
            self.first_at = min(self.first_at or moment, moment)
            self.last_at = max(self.last_at or moment, moment)
        self.conversations += 1
        self.messages += len(conversation.messages)
        self.left_out += conversation.left_out
        self.attachments += conversation.attachments
        self.languages[language_of(conversation)] += 1
        started = conversation.created_at.isoformat() if conversation.created_at else ""
        self.latest_titles = sorted([*self.latest_titles, (started, conversation.title)])[-5:]

    def as_dict(self) -> dict[str, Any]:
        return {
            "conversations": self.conversations,
            "messages": self.messages,
            "new_conversations": self.conversations - self.already_imported,
            "new_messages": self.messages - self.already_imported_messages,
            "first_at": self.first_at.isoformat() if self.first_at else None,
            "last_at": self.last_at.isoformat() if self.last_at else None,
            "languages": self.languages.most_common(),
            "already_imported": self.already_imported,
            "private": self.private,
            "empty": self.empty,
            "left_out": self.left_out,
            "attachments": self.attachments,
            "latest_titles": [title for _started, title in reversed(self.latest_titles)],
        }


def language_of(conversation: ExportConversation) -> str:
    """The language (ISO code) of what the person wrote in ``conversation``; "" if unsure."""
    import py3langid

    sample = " ".join(m.content for m in conversation.messages if m.role == "user")
    sample = sample[:LANGUAGE_SAMPLE_CHARS] or " ".join(m.content for m in conversation.messages)
    if not sample.strip():
        return ""
    code = str(py3langid.classify(sample[:LANGUAGE_SAMPLE_CHARS])[0])
    return "zh" if code in _CHINESE else code


def language_name(code: str) -> str:
    """A language's name in itself, as the language menu names them ("English", "中文");
    its code when Django does not know it."""
    if code == "zh":
        return "中文"  # Either script: a conversation's text does not say which one is used.
    try:
        return str(get_language_info(code)["name_local"])
    except KeyError:
        return code


def analyse_conversations(
    *,
    owner: User,
    source: str,
    upload: Path,
    spool: Path,
    progress: Callable[[int, int], None],
) -> dict[str, Any]:
    """Read the export at ``upload``: the preview, with each conversation to import (not
    private, not empty) written to ``spool``. ``progress(bytes read, bytes in all)`` is
    called as it goes. ImportRefused for a file that cannot be imported."""
    preview = ConversationsPreview()
    messages_of: dict[str, int] = {}
    with (
        open_conversations(upload, limit=settings.IMPORT_MAX_BYTES) as stream,
        spool.open("w", encoding="utf-8") as out,
    ):
        for conversation in read_conversations(stream, source):
            if conversation.private:
                preview.private += 1
            elif not conversation.messages:
                preview.empty += 1
            elif conversation.external_id not in messages_of:
                preview.add(conversation)
                messages_of[conversation.external_id] = len(conversation.messages)
                out.write(json.dumps(conversation.as_json(), ensure_ascii=False) + "\n")
            if (preview.conversations + preview.private + preview.empty) % PROGRESS_EVERY == 0:
                progress(stream.count, stream.total)
        progress(stream.count, stream.total)
    if not preview.conversations:
        raise ImportRefused(EMPTY_EXPORT)
    imported = {imported_id(source, export_id): count for export_id, count in messages_of.items()}
    ids = list(imported)
    for start in range(0, len(ids), 1000):
        for external_id in Conversation.objects.filter(
            owner=owner, external_id__in=ids[start : start + 1000]
        ).values_list("external_id", flat=True):
            preview.already_imported += 1
            preview.already_imported_messages += imported[external_id]
    return preview.as_dict()


def imported_id(source: str, external_id: str) -> str:
    """A conversation's external id once imported: its service's name before the export's
    id, so ids of different services (and of chat apps using the API) never meet."""
    return f"{source}:{external_id}"[:200]


# Saved memories ----------------------------------------------------------------------


# What adding a saved memory would do.
NEW, KNOWN, REPEATED, REFUSED, TOO_LONG = "new", "known", "repeated", "refused", "too_long"


def analyse_memories(*, owner: User, text: str, spool: Path) -> dict[str, Any]:
    """The preview of saved memories: each memory and what adding it would do, with those
    to add written to ``spool``."""
    lines = memory_lines(text)
    if not lines:
        raise ImportRefused(EMPTY_EXPORT)
    pool = Memory.objects.filter(scope=Scope.USER, owner=owner)
    counts: Counter[str] = Counter()
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    with spool.open("w", encoding="utf-8") as out:
        for content in lines[:MAX_MEMORIES]:
            key = " ".join(content.split()).casefold()
            item: dict[str, Any] = {"content": content, "kind": "", "status": NEW}
            if len(content) > MAX_MEMORY_CHARS:
                item["status"] = TOO_LONG
            elif only_secret(content):
                item["status"] = REFUSED
            elif key in seen:
                item["status"] = REPEATED
            elif (known := find_duplicate(pool, content)) is not None:
                item.update(status=KNOWN, known=known.content)
            else:
                item["kind"] = guess_kind(content)
                out.write(json.dumps({"content": content}, ensure_ascii=False) + "\n")
            seen.add(key)
            counts[item["status"]] += 1
            if len(items) < PREVIEW_MEMORIES:
                items.append(item)
    return {
        "memories": min(len(lines), MAX_MEMORIES),
        "left_over": max(len(lines) - MAX_MEMORIES, 0),
        "counts": {status: counts[status] for status in (NEW, KNOWN, REPEATED, REFUSED, TOO_LONG)},
        "items": items,
    }
