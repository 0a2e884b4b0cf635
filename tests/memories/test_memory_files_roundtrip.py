"""Any memory text survives export and import: comment markers, front-matter look-alikes,
headings, CJK, emoji, long lines. And a zip is size-checked before anything is inflated."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, datetime
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.text import CONTROL_CHARACTERS
from memories.memory_files import MAX_IMPORT_BYTES, export_tree, parse_files, read_uploads
from memories.models import Kind, Memory

EXPORTED_AT = datetime(2025, 1, 2, tzinfo=UTC)
TRICKY = [
    "<!--",
    "-->",
    "<!-- id:7 -->",
    "---",
    "key: value",
    "tags:a,b",
    "## ",
    "# Facts",
    "- ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "记住这个",
    "🙂👍🏽",
    "x" * 3000,
    "%2C",
    ",",
    "id:12",
]


def expected(content: str) -> str:
    """What a Markdown file keeps of a text: its lines without trailing blanks, the whole
    trimmed (memories are stored trimmed)."""
    lines = [line.rstrip() for line in re.split(r"\r\n|\r|\n", content.strip())]
    return "\n".join(lines).strip()


def round_trip(contents: list[str], tags: list[list[str]] | None = None) -> list[tuple]:
    memories = [
        Memory(
            pk=index + 1,
            content=content,
            kind=Kind.FACT,
            tags=(tags or [[]] * len(contents))[index],
            importance=0.5,
        )
        for index, content in enumerate(contents)
    ]
    tree = export_tree(memories, scope="user", project=None, exported_at=EXPORTED_AT)
    parsed = parse_files(tree)
    assert parsed.problems == []
    return [(item.memory_id, item.content, list(item.tags)) for item in parsed.items]


text = st.lists(
    st.one_of(
        st.sampled_from(TRICKY),
        st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40),
    ),
    min_size=1,
    max_size=8,
).map("".join)
content = text.filter(lambda value: expected(value) != "")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(content, min_size=1, max_size=4))
def test_any_text_round_trips(contents: list[str]) -> None:
    assert round_trip(contents) == [
        (index + 1, expected(value), []) for index, value in enumerate(contents)
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        text.map(lambda value: value.strip().lower().lstrip("#")[:50])
        .filter(lambda tag: tag and not CONTROL_CHARACTERS.search(tag) and tag == tag.strip())
        .filter(lambda tag: "\n" not in tag and "\r" not in tag),
        max_size=4,
        unique=True,
    )
)
def test_any_tags_round_trip(tags: list[str]) -> None:
    assert round_trip(["A fact"], [tags]) == [(1, "A fact", tags)]


@pytest.mark.parametrize("value", [*TRICKY[:9], "ends with <!--", "a --> b <!-- c"])
def test_tricky_texts(value: str) -> None:
    content = f"Note {value} here"
    assert round_trip([content, "Second"]) == [(1, expected(content), []), (2, "Second", [])]


def _zip(entries: dict[str, bytes]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return SimpleUploadedFile("memories.zip", buffer.getvalue())


def test_a_zip_whose_entries_add_up_to_too_much_is_refused_before_inflating() -> None:
    # Ten highly compressible entries, each under the per-file limit, together far over it.
    big = b"- " + b"a" * (MAX_IMPORT_BYTES // 2) + b"\n"
    upload = _zip({f"topics/t{index}.md": big for index in range(10)})
    with mock.patch.object(zipfile.ZipFile, "open", side_effect=AssertionError("inflated")):
        files, problems = read_uploads([upload])
    assert files == {}
    assert [str(problem) for problem in problems] == [
        "memories.zip: too much to import at once (over 2 MB uncompressed)."
    ]


def test_a_small_zip_is_read() -> None:
    files, problems = read_uploads([_zip({"facts.md": b"- Likes tea\n"})])
    assert files == {"facts.md": "- Likes tea\n"} and problems == []
