"""What goes into the block: memories and past turns on one scale, best first, until the
budget is full.

Pinned memories come first. Then memories and turns by score: a memory is taken while its
scope's budget (``scope_budgets``), the request's ``limit`` of memories and the total budget
allow; a turn while the limit of turns (the same number) and the total budget allow. An item
that does not fit is passed over for the smaller ones after it.

A memory and a turn it was extracted from are never both injected: the memory is kept (it
is the cleaned, dated form), the turn is dropped, and so are the neighbours an episode would
show that a memory came from or another episode shows already. Everything left out is in
``dropped``, with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memories.tokens import estimate_tokens
from recall.block import SCOPES, episode_tokens, memory_tokens, render
from recall.episodes import Episode, with_context

if TYPE_CHECKING:
    from recall.memories import RecalledMemory
    from search.ranking import ScoredMemory

    Scored = ScoredMemory[RecalledMemory]


@dataclass
class Selection:
    memories: dict[str, list[tuple[Scored, int]]] = field(
        default_factory=lambda: {scope: [] for scope in SCOPES}
    )
    episodes: list[Episode] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    # The messages the chosen memories came from, and those the chosen episodes show.
    covered: set[int] = field(default_factory=set)
    shown: set[int] = field(default_factory=set)

    def block(self, fmt: str, *, cite: bool = False) -> str:
        return render(
            {scope: [item.memory for item, _t in items] for scope, items in self.memories.items()},
            fmt,
            self.episodes,
            cite=cite,
        )

    @property
    def memory_count(self) -> int:
        return sum(len(items) for items in self.memories.values())


def memory_entry(item: Scored, tokens: int) -> dict[str, Any]:
    memory = item.memory
    return {
        "source": "memory",
        "id": memory.pk,
        "kind": memory.kind,
        "scope": memory.scope,
        "project_id": memory.project_id,
        "pinned": memory.pinned,
        "content": memory.content,
        "score": item.score,
        "score_parts": item.parts,
        "tokens": tokens,
    }


def episode_dropped(episode: Episode, reason: str) -> dict[str, Any]:
    return {
        "source": "episode",
        "id": episode.turn.message_id,
        "message_ids": episode.message_ids,
        "content": episode.turn.text,
        "score": episode.score,
        "score_parts": episode.parts,
        "tokens": episode.tokens or episode_tokens(episode),
        "reason": reason,
    }


def select(
    memories: Sequence[Scored],
    episodes: Sequence[Episode],
    *,
    limit: int,
    budget: int,
    scope_budgets: dict[str, int],
    fmt: str,
    cite: bool,
) -> Selection:
    """The memories and turns to inject (see the module docstring). ``memories`` and
    ``episodes``: each best first."""
    selection = Selection()
    used = dict.fromkeys(SCOPES, 0)
    total = 0
    pinned = [item for item in memories if item.memory.pinned]
    ranked: list[Scored | Episode] = sorted(
        [*(item for item in memories if not item.memory.pinned), *episodes],
        key=lambda item: (-item.score, isinstance(item, Episode), _item_id(item)),
    )
    for item in [*pinned, *ranked]:
        if isinstance(item, Episode):
            total += _take_episode(selection, item, limit=limit, room=budget - total)
            continue
        tokens = memory_tokens(item.memory)
        scope = item.memory.scope
        reason = (
            "limit"
            if selection.memory_count >= limit
            else "scope_budget"
            if used[scope] + tokens > scope_budgets[scope]
            else "total_budget"
            if total + tokens > budget
            else ""
        )
        if reason:
            selection.dropped.append({**memory_entry(item, tokens), "reason": reason})
            continue
        selection.memories[scope].append((item, tokens))
        used[scope] += tokens
        sources = set(item.memory.source_message_ids)
        selection.covered |= sources
        total += tokens - _drop_covered_episodes(selection, sources)
    _fit_block(selection, budget, fmt, cite)
    return selection


def _item_id(item: Scored | Episode) -> int:
    return item.turn.message_id if isinstance(item, Episode) else item.memory.pk


def _take_episode(selection: Selection, episode: Episode, *, limit: int, room: int) -> int:
    """Take ``episode`` if it may be taken and fits in ``room`` tokens; the tokens taken."""
    if episode.turn.message_id in selection.covered:
        selection.dropped.append(episode_dropped(episode, "covered_by_memory"))
        return 0
    if episode.turn.message_id in selection.shown:
        selection.dropped.append(episode_dropped(episode, "shown_with_another"))
        return 0
    if len(selection.episodes) >= limit:
        selection.dropped.append(episode_dropped(episode, "limit"))
        return 0
    with_context(episode, selection.covered | selection.shown)
    episode.tokens = episode_tokens(episode)
    if episode.tokens > room:
        selection.dropped.append(episode_dropped(episode, "total_budget"))
        return 0
    selection.episodes.append(episode)
    selection.shown.update(episode.message_ids)
    return episode.tokens


def _drop_covered_episodes(selection: Selection, sources: set[int]) -> int:
    """Drop the chosen episodes whose turn a newly chosen memory came from, and hide the
    neighbours it came from; the tokens freed."""
    freed = 0
    kept = []
    for episode in selection.episodes:
        if episode.turn.message_id in sources:
            selection.dropped.append(episode_dropped(episode, "covered_by_memory"))
            freed += episode.tokens
            continue
        if episode.reply_to is not None and episode.reply_to.message_id in sources:
            episode.reply_to = None
        if episode.answered_by is not None and episode.answered_by.message_id in sources:
            episode.answered_by = None
        tokens = episode_tokens(episode)
        freed += episode.tokens - tokens
        episode.tokens = tokens
        kept.append(episode)
    selection.episodes = kept
    selection.shown = {message_id for episode in kept for message_id in episode.message_ids}
    return freed


def _fit_block(selection: Selection, budget: int, fmt: str, cite: bool) -> None:
    """Headers and formats add to the items' own tokens: while the block is over the budget,
    the lowest scored item (never a pinned memory) is dropped."""
    while estimate_tokens(selection.block(fmt, cite=cite)) > budget:
        candidates: list[tuple[float, Scored | Episode]] = [
            (episode.score, episode) for episode in selection.episodes
        ] + [
            (item.score, item)
            for items in selection.memories.values()
            for item, _tokens in items
            if not item.memory.pinned
        ]
        if not candidates:
            return
        _score, lowest = min(candidates, key=lambda pair: (pair[0], -_item_id(pair[1])))
        if isinstance(lowest, Episode):
            selection.episodes.remove(lowest)
            selection.dropped.append(episode_dropped(lowest, "total_budget"))
            selection.shown.difference_update(lowest.message_ids)
            continue
        items = selection.memories[lowest.memory.scope]
        index = next(i for i, (item, _t) in enumerate(items) if item is lowest)
        _item, tokens = items.pop(index)
        selection.dropped.append({**memory_entry(lowest, tokens), "reason": "total_budget"})
