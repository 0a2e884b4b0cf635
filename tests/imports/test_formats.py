"""Reading the exports: ChatGPT's tree, Claude's list, saved memories, and files that are not
what they should be (damaged, another service's, unsafe zips)."""

from __future__ import annotations

import io
import json
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from imports.errors import (
    MALFORMED_FILE,
    UNKNOWN_FORMAT,
    UNSAFE_ZIP,
    WRONG_SERVICE,
    ImportRefused,
    message,
)
from imports.formats import (
    CountedReader,
    ExportConversation,
    memory_lines,
    open_conversations,
    read_conversations,
    read_memory_text,
)
from tests.imports.helpers import CHATGPT_JSON, CLAUDE_JSON, zipped

LIMIT = 10**9


def read(path: Path, source: str) -> list[ExportConversation]:
    with open_conversations(path, limit=LIMIT) as stream:
        return list(read_conversations(stream, source))


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refusal(path: Path, source: str) -> ImportRefused:
    with pytest.raises(ImportRefused) as caught:
        read(path, source)
    return caught.value


# ChatGPT -----------------------------------------------------------------------------


def by_id(conversations: list[ExportConversation]) -> dict[str, ExportConversation]:
    return {conversation.external_id: conversation for conversation in conversations}


def test_chatgpt_follows_the_current_branch_and_keeps_only_text() -> None:
    react = by_id(read(CHATGPT_JSON, "chatgpt"))["6a1c0f3e-react-0001"]
    # The regenerated answer (r-2) is on a branch nobody sees; the system prompt, the tool
    # call (code to python), the tool's output and the empty message are left out.
    assert [m.external_id for m in react.messages] == ["r-1", "r-3", "r-4"]
    assert [m.role for m in react.messages] == ["user", "assistant", "user"]
    assert react.left_out == 3
    assert react.title == "Frontend framework"
    assert react.created_at == datetime(2024, 6, 12, 10, 0, tzinfo=UTC)
    assert react.messages[1].sent_at == datetime(2024, 6, 12, 10, 1, 20, tzinfo=UTC)


def test_chatgpt_notes_images_and_files_by_name() -> None:
    react = by_id(read(CHATGPT_JSON, "chatgpt"))["6a1c0f3e-react-0001"]
    assert react.messages[2].content == (
        "[image: dashboard-sketch.png]\nHere is the dashboard sketch I drew for the team.\n"
        "[file: requirements.pdf]"
    )
    assert react.attachments == 2


def test_chatgpt_marks_temporary_and_do_not_remember_chats_private() -> None:
    conversations = by_id(read(CHATGPT_JSON, "chatgpt"))
    assert conversations["temporary-0002"].private
    assert conversations["private-0003"].private
    assert not conversations["chinese-0004"].private
    assert conversations["chinese-0004"].messages[0].content == "我喜欢用 PostgreSQL 存储测量数据。"
    assert conversations["empty-0006"].messages == []


def test_chatgpt_without_a_current_node_takes_the_latest_branch(tmp_path: Path) -> None:
    item = json.loads(CHATGPT_JSON.read_text())[0]
    item["current_node"] = None
    path = write(tmp_path, "conversations.json", json.dumps([item]).encode())
    (conversation,) = read(path, "chatgpt")
    assert [m.external_id for m in conversation.messages] == ["r-1", "r-3", "r-4"]


# Claude ------------------------------------------------------------------------------


def test_claude_reads_text_blocks_attachments_and_dates() -> None:
    survey, older, empty = read(CLAUDE_JSON, "claude")
    assert survey.title == "Planning the survey app"
    assert [m.external_id for m in survey.messages] == ["m-0001", "m-0002", "m-0004"]
    assert survey.messages[0].content == (
        "We use Django for the survey backend.\n[file: schema.sql]\n[file: site-photo.jpg]"
    )
    # Only the text blocks: not the thinking, the tool call, nor the "not supported" text.
    assert (
        survey.messages[1].content == "Django's admin will give you a data-entry screen for free."
    )
    assert survey.messages[2].content == "我喜欢用 Vue 做报表。"
    assert survey.messages[2].sent_at == datetime(2024, 3, 5, 9, 40, 12, 345678, tzinfo=UTC)
    # An export from before content blocks: the text field.
    assert older.messages[0].content == "I prefer pytest over unittest for tests."
    assert older.created_at == datetime(2023, 11, 20, 18, 0, tzinfo=UTC)
    assert empty.messages == []


def test_a_conversation_round_trips_through_the_import_copy() -> None:
    for conversation in read(CLAUDE_JSON, "claude") + read(CHATGPT_JSON, "chatgpt"):
        copy = json.loads(json.dumps(conversation.as_json()))
        assert ExportConversation.from_json(copy) == conversation


def test_control_characters_are_removed(tmp_path: Path) -> None:
    item = {
        "uuid": "c1",
        "name": "Nul\u0000 title",
        "created_at": "2024-01-01T00:00:00Z",
        "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "I prefer\u0000 tea\u0008 over coffee."}
        ],
    }
    path = write(tmp_path, "conversations.json", json.dumps([item]).encode())
    (conversation,) = read(path, "claude")
    assert conversation.title == "Nul title"
    assert conversation.messages[0].content == "I prefer tea over coffee."


# Files that are not what they should be ------------------------------------------------


def test_another_services_export_is_refused_naming_it() -> None:
    refused = refusal(CLAUDE_JSON, "chatgpt")
    assert (refused.code, refused.details) == (WRONG_SERVICE, {"found": "claude"})
    text = message("chatgpt", refused.code, refused.details)
    assert "a Claude export" in text and "ChatGPT's data export" in text
    assert refusal(CHATGPT_JSON, "claude").details == {"found": "chatgpt"}


def test_a_conversations_export_given_as_saved_memories_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused) as caught:
        read_memory_text(CHATGPT_JSON)
    assert (caught.value.code, caught.value.details) == (WRONG_SERVICE, {"found": "chatgpt"})
    path = write(tmp_path, "export.zip", zipped({"conversations.json": CLAUDE_JSON.read_bytes()}))
    with pytest.raises(ImportRefused) as caught:
        read_memory_text(path)
    assert caught.value.details == {"found": "claude"}


def test_a_truncated_file_is_malformed_after_the_last_whole_conversation(tmp_path: Path) -> None:
    data = CHATGPT_JSON.read_bytes()
    cut = data[: data.index(b'"title": "Do not remember this"')]
    refused = refusal(write(tmp_path, "conversations.json", cut), "chatgpt")
    assert (refused.code, refused.details) == (MALFORMED_FILE, {"reason": "json", "after": 2})
    assert "after 2 conversations" in message("chatgpt", refused.code, refused.details)


@pytest.mark.parametrize(
    ("data", "code", "reason"),
    [
        (b"<html><body>chat.html</body></html>", UNKNOWN_FORMAT, None),
        (b'{"id": "user-1", "email": "a@example.com"}', MALFORMED_FILE, "not_a_list"),
        (b'[{"id": 1, "messages": []}]', UNKNOWN_FORMAT, None),
        (b"", UNKNOWN_FORMAT, None),
        (b'[{"mapping": {}, "title": "ok"}, 42]', MALFORMED_FILE, "not_a_conversation"),
        (b'["\xff\xfe broken"]', MALFORMED_FILE, "json"),
    ],
)
def test_files_that_are_not_exports(
    tmp_path: Path, data: bytes, code: str, reason: str | None
) -> None:
    refused = refusal(write(tmp_path, "conversations.json", data), "chatgpt")
    assert refused.code == code
    assert refused.details.get("reason") == reason
    # Every refusal says what was expected.
    assert "Settings → Data controls → Export data" in message("chatgpt", code, refused.details)


def test_an_empty_list_has_no_conversations(tmp_path: Path) -> None:
    assert read(write(tmp_path, "conversations.json", b" \n[ ]"), "claude") == []


# Zips ----------------------------------------------------------------------------------


def zip_path(tmp_path: Path, entries: dict[str, bytes], **options: Any) -> Path:
    return write(tmp_path, "export.zip", zipped(entries, **options))


def test_the_conversations_json_nearest_the_top_of_a_zip_is_read(tmp_path: Path) -> None:
    path = zip_path(
        tmp_path,
        {
            "export/conversations.json": CLAUDE_JSON.read_bytes(),
            "export/old/conversations.json": b"[]",
            "__MACOSX/export/._conversations.json": b"junk",
            "users.json": b"[]",
        },
    )
    assert len(read(path, "claude")) == 3


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        ({"chat.html": b"<html>"}, "no_conversations"),
        ({"a/conversations.json": b"[]", "b/conversations.json": b"[]"}, "several_conversations"),
        ({"conversations.json": b"[]", "../../etc/cron.d/evil": b"x"}, "path"),
        ({"conversations.json": b"[]", "/etc/passwd": b"x"}, "path"),
        ({"conversations.json": b"[]", "C:\\Windows\\evil.dll": b"x"}, "path"),
    ],
)
def test_unsafe_or_wrong_zips_are_refused_before_inflating(
    tmp_path: Path, entries: dict[str, bytes], reason: str
) -> None:
    refused = refusal(zip_path(tmp_path, entries), "chatgpt")
    assert (refused.code, refused.details["reason"]) == (UNSAFE_ZIP, reason)


def test_a_zip_bomb_is_refused_by_its_ratio(tmp_path: Path) -> None:
    # 50 MB of one character deflates to ~50 KB: a thousand to one.
    bomb = b"[" + b" " * 50_000_000 + b"]"
    refused = refusal(zip_path(tmp_path, {"conversations.json": bomb}), "chatgpt")
    assert (refused.code, refused.details["reason"]) == (UNSAFE_ZIP, "ratio")


def test_an_entry_larger_than_the_limit_is_refused_from_its_declared_size(
    tmp_path: Path,
) -> None:
    path = zip_path(tmp_path, {"conversations.json": CHATGPT_JSON.read_bytes()})
    with pytest.raises(ImportRefused) as caught, open_conversations(path, limit=1000):
        pass
    assert (caught.value.code, caught.value.details["reason"]) == (UNSAFE_ZIP, "too_large")


def test_an_encrypted_zip_is_refused(tmp_path: Path) -> None:
    data = bytearray(zipped({"conversations.json": b"[]"}))
    # What a password-protected entry declares: bit 0 of its flags, in the entry's local
    # header (offset 6) and in the central directory (offset 8).
    data[data.index(b"PK\x03\x04") + 6] |= 0x1
    data[data.index(b"PK\x01\x02") + 8] |= 0x1
    refused = refusal(write(tmp_path, "export.zip", bytes(data)), "chatgpt")
    assert refused.details["reason"] == "encrypted"


def test_a_damaged_zip_entry_is_refused(tmp_path: Path) -> None:
    data = bytearray(zipped({"conversations.json": CHATGPT_JSON.read_bytes()}))
    start = data.index(b"conversations.json") + len("conversations.json")
    data[start + 10 : start + 200] = bytes(190)  # Inside the compressed data.
    refused = refusal(write(tmp_path, "export.zip", bytes(data)), "chatgpt")
    assert (refused.code, refused.details["reason"]) == (UNSAFE_ZIP, "damaged")


def test_a_stream_never_delivers_more_than_its_limit() -> None:
    reader = CountedReader(io.BytesIO(b"x" * 100), total=100, limit=64, code=UNSAFE_ZIP, reason="r")
    buffered = io.BufferedReader(reader, 16)
    assert len(buffered.read(64)) == 64
    with pytest.raises(ImportRefused):
        buffered.read(16)


# Streaming -------------------------------------------------------------------------------


def test_a_large_export_is_read_with_bounded_memory(tmp_path: Path) -> None:
    """~30 MB of conversations read one at a time: memory holds one, never the file."""
    template = json.loads(CHATGPT_JSON.read_text())[4]
    path = tmp_path / "conversations.json"
    with path.open("w") as out:
        out.write("[")
        for number in range(3000):
            item = {**template, "conversation_id": f"c{number}", "title": "x" * 10_000}
            out.write(("," if number else "") + json.dumps(item))
        out.write("]")
    assert path.stat().st_size > 30_000_000
    tracemalloc.start()
    try:
        with open_conversations(path, limit=LIMIT) as stream:
            count = sum(1 for _conversation in read_conversations(stream, "chatgpt"))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 3000
    assert peak < 5_000_000, f"reading kept {peak:,} bytes"


# Saved memories ----------------------------------------------------------------------


def test_saved_memories_one_per_line_or_bullet() -> None:
    text = (
        "## Work context\n\n"
        "- Works on a survey app for a rail team.\n"
        "- Uses CGCS2000 coordinates,\n"
        "  converted from WGS84 when importing.\n"
        "* Has a dog named Pixel\n"
        "• Prefers tea\n"
        "1. Goes hiking most weekends\n"
        "2) Learns Rust\n"
        "---\n"
        "Lives in Lisbon\r\n"
        "喜欢用 Vue 做报表\n"
    )
    assert memory_lines(text) == [
        "Works on a survey app for a rail team.",
        "Uses CGCS2000 coordinates, converted from WGS84 when importing.",
        "Has a dog named Pixel",
        "Prefers tea",
        "Goes hiking most weekends",
        "Learns Rust",
        "Lives in Lisbon",
        "喜欢用 Vue 做报表",
    ]


def test_saved_memories_that_are_not_text_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused) as caught:
        read_memory_text(write(tmp_path, "memories.txt", b"\xff\xfe\x00binary"))
    assert caught.value.code == UNKNOWN_FORMAT
