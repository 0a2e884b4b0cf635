"""Reading what ChatGPT and Claude let people download, and saved memories as text.

**Conversations.** Both exports hold a ``conversations.json``: a list of conversations,
alone or in the export's zip. It can be hundreds of MB, so it is read as a stream
(``ijson``), one conversation at a time: memory holds the largest conversation, never the
file. Each becomes an ``ExportConversation`` of text messages in order:

- ChatGPT keeps a conversation as a tree (``mapping``): every edit or regenerated answer
  is a branch. The branch the person last saw is followed from ``current_node`` up to the
  root. Only what the person and the assistant said to each other is kept: the text parts
  of user and assistant messages; system and tool messages, hidden ones and tool calls
  are left out; images and files are noted by name (``[image: photo.png]``).
- Claude keeps a list (``chat_messages``) of ``human`` and ``assistant`` messages whose
  ``content`` blocks of type ``text`` are the text (``text`` when there are none);
  attachments are noted by name.

Conversations an export marks as temporary, incognito or not to remember are ``private``
(the import skips them).

**Zips** are checked before anything in them is inflated: no entry whose name leads out of
the archive, no password, one ``conversations.json``, its declared size within the limit
and its compression ratio a plausible one (a zip bomb's is thousands to one); and reading
stops at the declared size, whatever the entry would inflate to.

**Saved memories** are text: one memory per line or bullet (``-``, ``*``, ``•``, ``1.``);
an indented line continues the bullet above it; headings and rules are skipped.
"""

from __future__ import annotations

import io
import lzma
import os
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

import ijson
from django.conf import settings

from accounts.text import CONTROL_CHARACTERS
from imports.errors import (
    FILE_TOO_LARGE,
    MALFORMED_FILE,
    UNKNOWN_FORMAT,
    UNSAFE_ZIP,
    WRONG_SERVICE,
    ImportRefused,
)
from imports.models import Source

CONVERSATIONS_FILE = "conversations.json"
# A zip entry inflating to more than this many times its compressed size is refused:
# chat exports compress about ten to one, zip bombs thousands to one.
MAX_COMPRESSION_RATIO = 200
MAX_ZIP_ENTRIES = 200_000
# What one message or title keeps (the JSON API's limits).
MAX_MESSAGE_CHARS = 100_000
MAX_TITLE_CHARS = 300
# Saved memories: the text read, the memories taken from it, the length of one.
MAX_MEMORY_TEXT_BYTES = 2 * 1024 * 1024
MAX_MEMORIES = 5_000
MAX_MEMORY_CHARS = 2_000

# Marks of a conversation that was never to be remembered, in either export.
_PRIVATE_MARKERS = ("is_temporary_chat", "is_temporary", "is_incognito", "is_do_not_remember")
_ROLES = {"user": "user", "human": "user", "assistant": "assistant"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BULLET = re.compile(r"^(?:[-*+•·]|\d{1,3}[.)])\s+")
_RULE = re.compile(r"^(?:[-*_=]\s*){3,}$")


@dataclass(frozen=True)
class ExportMessage:
    external_id: str
    role: str
    content: str
    sent_at: datetime | None


@dataclass
class ExportConversation:
    external_id: str
    title: str
    created_at: datetime | None
    updated_at: datetime | None
    messages: list[ExportMessage] = field(default_factory=list)
    private: bool = False
    # Messages left out (system, tool, hidden, not text) and attachments noted by name.
    left_out: int = 0
    attachments: int = 0

    def as_json(self) -> dict[str, Any]:
        """As JSON (times as ISO text), for the import's copy of the file."""

        def when(value: datetime | None) -> str | None:
            return value.isoformat() if value else None

        # By hand: dataclasses.asdict deep-copies every field, a third of reading a file.
        return {
            "external_id": self.external_id,
            "title": self.title,
            "created_at": when(self.created_at),
            "updated_at": when(self.updated_at),
            "private": self.private,
            "left_out": self.left_out,
            "attachments": self.attachments,
            "messages": [
                {
                    "external_id": message.external_id,
                    "role": message.role,
                    "content": message.content,
                    "sent_at": when(message.sent_at),
                }
                for message in self.messages
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExportConversation:
        def when(value: str | None) -> datetime | None:
            return datetime.fromisoformat(value) if value else None

        return cls(
            **{
                **data,
                "created_at": when(data["created_at"]),
                "updated_at": when(data["updated_at"]),
                "messages": [
                    ExportMessage(**{**message, "sent_at": when(message["sent_at"])})
                    for message in data["messages"]
                ],
            }
        )


# Opening ----------------------------------------------------------------------------


class CountedReader(io.RawIOBase):
    """The bytes of ``raw``, counted as they are read; past ``limit`` the read is refused
    (``code``), so no stream can deliver more than it was allowed."""

    def __init__(self, raw: IO[bytes], *, total: int, limit: int, code: str, reason: str):
        super().__init__()
        self.raw = raw
        self.total = total
        self.limit = limit
        self.count = 0
        self._refusal = (code, reason)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        self.count += len(data)
        if self.count > self.limit:
            code, reason = self._refusal
            raise ImportRefused(code, reason=reason, limit=self.limit)
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def open_conversations(path: Path, *, limit: int) -> Iterator[CountedReader]:
    """The ``conversations.json`` at ``path``, or in the zip at ``path``, as a counted stream
    of at most ``limit`` bytes (ImportRefused for a zip that is not safe to open)."""
    with path.open("rb") as raw:
        if not zipfile.is_zipfile(raw):
            raw.seek(0)
            size = os.fstat(raw.fileno()).st_size
            yield CountedReader(raw, total=size, limit=limit, code=UNSAFE_ZIP, reason="too_large")
            return
        raw.seek(0)
        try:
            with zipfile.ZipFile(raw) as archive:
                info = conversations_entry(archive.infolist(), limit=limit)
                with archive.open(info) as entry:
                    # zipfile stops at the declared size and checks the CRC at the end; the
                    # count refuses anything past the declared size all the same.
                    yield CountedReader(
                        entry,
                        total=info.file_size,
                        limit=info.file_size,
                        code=UNSAFE_ZIP,
                        reason="damaged",
                    )
        except (
            zipfile.BadZipFile,
            zlib.error,
            lzma.LZMAError,
            NotImplementedError,
            EOFError,
        ) as exc:
            raise ImportRefused(UNSAFE_ZIP, reason="damaged") from exc


def conversations_entry(entries: list[zipfile.ZipInfo], *, limit: int) -> zipfile.ZipInfo:
    """The entry to read: the one ``conversations.json`` nearest the top, checked as the
    module's docstring says."""
    if len(entries) > MAX_ZIP_ENTRIES:
        raise ImportRefused(UNSAFE_ZIP, reason="too_many_files")
    for entry in entries:
        name = entry.filename.replace("\\", "/")
        if name.startswith("/") or ".." in PurePosixPath(name).parts or ":" in name:
            raise ImportRefused(UNSAFE_ZIP, reason="path")
    candidates = [
        entry
        for entry in entries
        if not entry.is_dir()
        and PurePosixPath(entry.filename).name == CONVERSATIONS_FILE
        and not any(
            part.startswith(".") or part == "__MACOSX"
            for part in PurePosixPath(entry.filename).parts
        )
    ]
    if not candidates:
        raise ImportRefused(UNSAFE_ZIP, reason="no_conversations")
    depth = min(len(PurePosixPath(entry.filename).parts) for entry in candidates)
    nearest = [entry for entry in candidates if len(PurePosixPath(entry.filename).parts) == depth]
    if len(nearest) > 1:
        raise ImportRefused(UNSAFE_ZIP, reason="several_conversations")
    entry = nearest[0]
    if entry.flag_bits & 0x1:
        raise ImportRefused(UNSAFE_ZIP, reason="encrypted")
    if entry.file_size > limit:
        raise ImportRefused(UNSAFE_ZIP, reason="too_large", limit=limit)
    if entry.file_size > MAX_COMPRESSION_RATIO * max(entry.compress_size, 1):
        raise ImportRefused(UNSAFE_ZIP, reason="ratio")
    return entry


# Conversations ----------------------------------------------------------------------


def service_of(item: Any) -> str | None:
    """Whose export a conversation of a conversations.json comes from, if either's."""
    if isinstance(item, dict):
        if "mapping" in item:
            return Source.CHATGPT
        if "chat_messages" in item:
            return Source.CLAUDE
    return None


def read_conversations(stream: io.RawIOBase, source: str) -> Iterator[ExportConversation]:
    """Each conversation of a conversations.json, in the file's order. ImportRefused when
    the file is not ``source``'s export, or stops being valid."""
    buffered = io.BufferedReader(stream, 1 << 16)
    head = buffered.peek(4096)
    if head.startswith(b"\xef\xbb\xbf"):
        buffered.read(3)
        head = head[3:]
    first = head.lstrip()[:1]
    if first == b"{":
        raise ImportRefused(MALFORMED_FILE, reason="not_a_list")
    if first != b"[":
        raise ImportRefused(UNKNOWN_FORMAT)
    count = 0
    try:
        for item in ijson.items(buffered, "item", use_float=True):
            service = service_of(item)
            if service is None:
                if count == 0:
                    raise ImportRefused(UNKNOWN_FORMAT)
                raise ImportRefused(MALFORMED_FILE, reason="not_a_conversation", number=count + 1)
            if service != source:
                raise ImportRefused(WRONG_SERVICE, found=service)
            yield _READERS[service](item)
            count += 1
    except ijson.JSONError as exc:
        raise ImportRefused(MALFORMED_FILE, reason="json", after=count) from exc
    except UnicodeDecodeError as exc:
        raise ImportRefused(MALFORMED_FILE, reason="not_text") from exc


def _text(value: Any, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Text as it can be stored: control characters (NUL…) removed, at most ``limit`` long."""
    if not isinstance(value, str):
        return ""
    return CONTROL_CHARACTERS.sub("", value)[:limit]


def _from_epoch(value: Any) -> datetime | None:
    if isinstance(value, int | float) and 0 < value < 32_503_680_000:  # before year 3000
        return datetime.fromtimestamp(value, UTC)
    return _from_iso(value)


def _from_iso(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _private(item: dict[str, Any]) -> bool:
    return any(item.get(marker) is True for marker in _PRIVATE_MARKERS)


def _identifier(item: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str | int) and str(value):
            return str(value)[:200]
    return ""


# ChatGPT


def _current_branch(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to ``current`` (the branch last shown); without a
    current node, the latest branch (each node's last child)."""
    node_id = current if isinstance(current, str) and current in mapping else None
    if node_id is None:
        roots = [key for key, node in mapping.items() if not _node(mapping, key).get("parent")]
        node_id = roots[0] if roots else None
        while node_id is not None:
            children = [c for c in _node(mapping, node_id).get("children") or [] if c in mapping]
            if not children:
                break
            node_id = children[-1]
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = _node(mapping, node_id)
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _node(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    node = mapping.get(key)
    return node if isinstance(node, dict) else {}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _hidden(message: dict[str, Any]) -> bool:
    """A message the person never saw as part of the talk: hidden, or a tool call."""
    metadata = _dict(message.get("metadata"))
    return (
        metadata.get("is_visually_hidden_from_conversation") is True
        or message.get("weight") == 0
        or message.get("recipient") not in (None, "all")
    )


def _asset_id(pointer: Any) -> str:
    """``file-service://file-abc`` or ``sediment://file_abc`` → ``file-abc`` / ``file_abc``."""
    return pointer.rsplit("/", 1)[-1] if isinstance(pointer, str) else ""


def _chatgpt_text(message: dict[str, Any]) -> tuple[str | None, int]:
    """A message's text with its images and files noted by name, and how many were noted;
    None when it is not text (code, tool output, browsing…)."""
    content = _dict(message.get("content"))
    if content.get("content_type") not in ("text", "multimodal_text"):
        return None, 0
    files = {
        str(attachment.get("id")): (str(attachment.get("name") or ""), attachment)
        for attachment in _dict(message.get("metadata")).get("attachments") or []
        if isinstance(attachment, dict)
    }
    pieces: list[str] = []
    noted: set[str] = set()
    for part in content.get("parts") or []:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, dict) and part.get("content_type") == "audio_transcription":
            pieces.append(_text(part.get("text")))
        elif isinstance(part, dict) and part.get("content_type") == "image_asset_pointer":
            file_id = _asset_id(part.get("asset_pointer"))
            noted.add(file_id)
            name = files.get(file_id, ("", {}))[0]
            pieces.append(f"[image: {name}]" if name else "[image]")
    for file_id, (name, attachment) in files.items():
        if file_id not in noted and name:
            image = str(attachment.get("mime_type", "")).startswith("image/")
            pieces.append(f"[{'image' if image else 'file'}: {name}]")
            noted.add(file_id)
    return "\n".join(piece for piece in pieces if piece), len(noted)


def read_chatgpt(item: dict[str, Any]) -> ExportConversation:
    mapping = _dict(item.get("mapping"))
    created = _from_epoch(item.get("create_time"))
    conversation = ExportConversation(
        external_id=_identifier(item, "conversation_id", "id"),
        title=_text(item.get("title"), MAX_TITLE_CHARS),
        created_at=created,
        updated_at=_from_epoch(item.get("update_time")),
        private=_private(item),
    )
    when = created
    for node in _current_branch(mapping, item.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        when = _from_epoch(message.get("create_time")) or when
        role = _ROLES.get(str(_dict(message.get("author")).get("role")))
        text, noted = _chatgpt_text(message) if role and not _hidden(message) else (None, 0)
        if text is None:
            conversation.left_out += 1
            continue
        conversation.attachments += noted
        text = _text(text)
        if text.strip() and role:
            message_id = _identifier(message, "id") or _identifier(node, "id")
            conversation.messages.append(ExportMessage(message_id, role, text, when))
    _number_missing_ids(conversation)
    return conversation


# Claude


def read_claude(item: dict[str, Any]) -> ExportConversation:
    created = _from_iso(item.get("created_at"))
    conversation = ExportConversation(
        external_id=_identifier(item, "uuid", "id"),
        title=_text(item.get("name"), MAX_TITLE_CHARS),
        created_at=created,
        updated_at=_from_iso(item.get("updated_at")),
        private=_private(item),
    )
    when = created
    for message in item.get("chat_messages") or []:
        if not isinstance(message, dict):
            continue
        when = _from_iso(message.get("created_at")) or when
        role = _ROLES.get(str(message.get("sender")))
        if role is None:
            conversation.left_out += 1
            continue
        blocks = message.get("content")
        if isinstance(blocks, list) and blocks:
            text = "\n\n".join(
                block["text"]
                for block in blocks
                if isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            )
        else:
            text = _text(message.get("text"))
        names = dict.fromkeys(
            str(attachment["file_name"])
            for attachment in [*(message.get("attachments") or []), *(message.get("files") or [])]
            if isinstance(attachment, dict) and attachment.get("file_name")
        )
        conversation.attachments += len(names)
        text = _text("\n".join([text or "", *(f"[file: {name}]" for name in names)]).strip())
        if text:
            message_id = _identifier(message, "uuid", "id")
            conversation.messages.append(ExportMessage(message_id, role, text, when))
    _number_missing_ids(conversation)
    return conversation


def _number_missing_ids(conversation: ExportConversation) -> None:
    """Messages (or a conversation) the export gave no id: their place stands for one, so
    a second import of the same file recognises them."""
    if not conversation.external_id:
        stamp = conversation.created_at.isoformat() if conversation.created_at else ""
        conversation.external_id = f"untitled:{stamp}:{conversation.title}"[:200]
    conversation.messages = [
        message
        if message.external_id
        else ExportMessage(f"position-{index}", message.role, message.content, message.sent_at)
        for index, message in enumerate(conversation.messages, start=1)
    ]


_READERS: dict[str, Callable[[dict[str, Any]], ExportConversation]] = {
    Source.CHATGPT: read_chatgpt,
    Source.CLAUDE: read_claude,
}


def sniff_service(path: Path, *, limit: int) -> str | None:
    """Whose conversations export the file at ``path`` is, if it is one."""
    try:
        with open_conversations(path, limit=limit) as stream:
            first = next(read_conversations(stream, Source.CHATGPT), None)
    except ImportRefused as refused:
        return refused.details.get("found") if refused.code == WRONG_SERVICE else None
    return Source.CHATGPT if first is not None else None


# Saved memories ---------------------------------------------------------------------


def memory_lines(text: str) -> list[str]:
    """Each memory in ``text`` (see the module's docstring), in order."""
    memories: list[str] = []
    current: list[str] | None = None

    def close() -> None:
        nonlocal current
        if current:
            memories.append(" ".join(current))
        current = None

    for line in _LINE_BREAK.split(CONTROL_CHARACTERS.sub("", text)):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _RULE.match(stripped):
            close()
            continue
        bullet = _BULLET.match(stripped)
        if current is not None and bullet is None and line[:1].isspace():
            current.append(stripped)
            continue
        close()
        current = [stripped[bullet.end() :] if bullet else stripped]
    close()
    return [memory for memory in memories if memory]


def read_memory_text(path: Path) -> str:
    """The saved memories' text at ``path``; ImportRefused for a file that is not text, or
    is a conversations export (WRONG_SERVICE names whose)."""
    with path.open("rb") as raw:
        head = raw.read(MAX_MEMORY_TEXT_BYTES + 1)
    if len(head) > MAX_MEMORY_TEXT_BYTES:
        raise ImportRefused(FILE_TOO_LARGE, limit=MAX_MEMORY_TEXT_BYTES)
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    if head.startswith(b"PK") or start in (b"[", b"{"):
        found = sniff_service(path, limit=settings.IMPORT_MAX_BYTES)
        raise ImportRefused(WRONG_SERVICE, found=found or "")
    try:
        return head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportRefused(UNKNOWN_FORMAT) from exc
