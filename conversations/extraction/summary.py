"""Compaction summaries: the Markdown a coding agent writes when it compacts a session.

Sections ``## Goal``, ``## Instructions``, ``## Discoveries``,
``## Accomplished`` (and ``## Relevant files``, which is not memory) hold
bullets or short paragraphs; each item becomes one statement of the kind its
section implies. Chinese headings are understood too.
"""

from __future__ import annotations

import re

from memories.models import Kind

SECTION_KINDS: dict[str, str | None] = {
    "goal": Kind.DECISION,
    "goals": Kind.DECISION,
    "目标": Kind.DECISION,
    "instructions": Kind.PATTERN,
    "instruction": Kind.PATTERN,
    "指示": Kind.PATTERN,
    "说明": Kind.PATTERN,
    "要求": Kind.PATTERN,
    "discoveries": Kind.FACT,
    "discovery": Kind.FACT,
    "发现": Kind.FACT,
    "accomplished": Kind.CONTEXT,
    "已完成": Kind.CONTEXT,
    "完成": Kind.CONTEXT,
    "relevant files": None,
    "相关文件": None,
}

_HEADING = re.compile(r"^#{1,3}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
MAX_ITEM_CHARS = 300


def summary_items(markdown: str) -> list[tuple[str, str]]:
    """(kind, text) for each item of the summary's known sections, in order."""
    items: list[tuple[str, str]] = []
    kind: str | None = None
    paragraph: list[str] = []

    def flush() -> None:
        if kind and paragraph:
            text = " ".join(paragraph).strip()
            if text:
                items.append((kind, text[:MAX_ITEM_CHARS]))
        paragraph.clear()

    for raw_line in markdown.splitlines():
        line = raw_line.strip()
        heading = _HEADING.match(line)
        if heading:
            flush()
            kind = SECTION_KINDS.get(heading.group(1).strip().rstrip(":：").lower())
            continue
        if not line:
            flush()
            continue
        if _BULLET.match(line):
            flush()
            line = _BULLET.sub("", line)
        paragraph.append(line)
    flush()
    return items
