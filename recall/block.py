"""The prompt block: the memories of each scope, then the past turns, in Markdown, XML or JSON.

The block is deterministic: inside a section memories are ordered pinned first, then by
kind, then by id (not by score, which drifts as memories get used), so the same data gives
the same bytes and the same SHA-256 hash, and an LLM's prompt cache keeps hitting. Past
turns are grouped by conversation and day, in the order they were said, each turn once
(the neighbours two episodes show may be the same turn).

With the user's "Show memory references in replies" (``cite``), the memories are numbered
[1], [2]… in block order after one line asking the model to cite them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

from memories.models import Kind, Scope, memory_page_url, one_line
from memories.tokens import estimate_tokens

if TYPE_CHECKING:
    from recall.episodes import Episode, Turn
    from recall.memories import RecalledMemory

SCOPES: tuple[str, ...] = (Scope.USER.value, Scope.PROJECT.value, Scope.CONVERSATION.value)
FORMATS = ("markdown", "xml", "json")
MARKDOWN_TITLES = {
    "user": "About the user",
    "project": "Project knowledge",
    "conversation": "This conversation",
}
XML_TAGS = {
    "user": "user_memory",
    "project": "project-memory",
    "conversation": "conversation-memory",
}
EPISODES_TITLE = "From past conversations"
EPISODES_TAG = "past_conversations"
CITE_LINE = "When your answer relies on a memory, cite its number, e.g. [1]."
KIND_ORDER = {kind: index for index, kind in enumerate(Kind.values)}


def block_order(memory: RecalledMemory) -> tuple[int, int, int]:
    return (0 if memory.pinned else 1, KIND_ORDER.get(memory.kind, len(KIND_ORDER)), memory.pk)


def _day(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


@dataclass(frozen=True)
class Session:
    """The turns shown of one conversation on one day, in the order they were said."""

    day: str
    turns: list[Turn]


def sessions(episodes: Sequence[Episode]) -> list[Session]:
    """The episodes' turns by conversation and day, each turn once, in the order said."""
    shown: dict[int, Turn] = {}
    for episode in episodes:
        for turn in episode.turns:
            shown.setdefault(turn.message_id, turn)
    grouped: dict[tuple[int, str], list[Turn]] = {}
    for turn in sorted(shown.values(), key=lambda t: (t.sent_at, t.conversation_id, t.position)):
        grouped.setdefault((turn.conversation_id, _day(turn.sent_at)), []).append(turn)
    return [Session(day, turns) for (_conversation, day), turns in grouped.items()]


def render(
    sections: dict[str, list[RecalledMemory]],
    fmt: str,
    episodes: Sequence[Episode] = (),
    *,
    cite: bool = False,
) -> str:
    """The prompt block for the memories of each scope (in ``block_order``), then the past
    turns of ``episodes`` ("" when there is nothing)."""
    filled = [
        (scope, sorted(sections[scope], key=block_order)) for scope in SCOPES if sections.get(scope)
    ]
    past = sessions(episodes)
    if not filled and not past:
        return ""
    numbers = iter(range(1, 1 + sum(len(memories) for _scope, memories in filled)))

    def n() -> str:
        return f"[{next(numbers)}] " if cite else ""

    if fmt == "json":
        document: dict[str, Any] = {"cite": CITE_LINE} if cite and filled else {}
        for scope, memories in filled:
            document[scope] = [
                {"n": next(numbers), "kind": m.kind, "content": one_line(m.content)}
                if cite
                else {"kind": m.kind, "content": one_line(m.content)}
                for m in memories
            ]
        if past:
            document[EPISODES_TAG] = [
                {
                    "date": session.day,
                    "turns": [{"speaker": t.speaker, "text": t.text} for t in session.turns],
                }
                for session in past
            ]
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    if fmt == "xml":
        blocks = [f"<cite>{CITE_LINE}</cite>"] if cite and filled else []
        for scope, memories in filled:
            lines = "\n".join(f"- {n()}[{m.kind}] {escape(one_line(m.content))}" for m in memories)
            blocks.append(f"<{XML_TAGS[scope]}>\n{lines}\n</{XML_TAGS[scope]}>")
        if past:
            blocks.append(
                f"<{EPISODES_TAG}>\n"
                + "\n".join(_session_xml(s) for s in past)
                + f"\n</{EPISODES_TAG}>"
            )
        return "\n".join(blocks) + "\n"
    parts = []
    if filled:
        parts.append("## Memory")
        if cite:
            parts.append(CITE_LINE)
    for scope, memories in filled:
        parts.append(f"\n### {MARKDOWN_TITLES[scope]}")
        parts.extend(f"- {n()}{one_line(m.content)}" for m in memories)
    if past:
        parts.append(f"\n## {EPISODES_TITLE}" if filled else f"## {EPISODES_TITLE}")
        for session in past:
            parts.append(f"\n### {session.day}")
            parts.extend(turn_line(turn) for turn in session.turns)
    return "\n".join(parts) + "\n"


def turn_line(turn: Turn) -> str:
    return f"- {turn.speaker}: {turn.text}"


def _session_xml(session: Session) -> str:
    lines = "\n".join(f"{escape(turn.speaker)}: {escape(turn.text)}" for turn in session.turns)
    return f"<session date={quoteattr(session.day)}>\n{lines}\n</session>"


def memory_tokens(memory: RecalledMemory) -> int:
    return estimate_tokens(f"- {one_line(memory.content)}\n")


def episode_tokens(episode: Episode) -> int:
    return sum(estimate_tokens(turn_line(turn) + "\n") for turn in episode.turns)


def references(selected: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each number of a cited block stands for: the memory's id, kind and page."""
    return [
        {"n": n, "id": entry["id"], "kind": entry["kind"], "url": memory_page_url(entry["id"])}
        for n, entry in enumerate(selected, start=1)
    ]
