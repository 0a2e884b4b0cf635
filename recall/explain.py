""" "What would my assistant recall?": the injection preview of a message, dry run (no access
log, no use counted), told for a person: what was chosen and why, and what was left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy as _

from recall.injection import PreviewRequest, injection_preview

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.utils.functional import Promise

# Why the preview left something out (recall.selection's reasons).
DROPPED_REASONS: dict[str, Promise] = {
    "limit": _("More memories than an assistant is given"),
    "scope_budget": _("No room left for memories of its scope"),
    "total_budget": _("No room left in the token budget"),
    "covered_by_memory": _("A chosen memory already says it"),
    "shown_with_another": _("Already shown with another turn"),
}
REFUSALS: dict[str, Promise] = {
    "memory_disabled": _("Memory is off: your assistants are given nothing."),
    "privacy_paused": _("Memory is paused: your assistants are given nothing until you resume it."),
}


@dataclass
class Recalled:
    content: str
    why: Promise | str
    tokens: int
    kind: str = ""
    when: Any = None


@dataclass
class RecallExplained:
    message: str
    refusal: Promise | str = ""
    block: str = ""
    tokens: int = 0
    budget: int = 0
    memories: tuple[Recalled, ...] = ()
    turns: tuple[Recalled, ...] = ()
    dropped: tuple[Recalled, ...] = ()


def why_chosen(entry: dict[str, Any]) -> Promise:
    """A memory's or a past turn's reason to be in the block, from its score's parts."""
    parts = entry.get("score_parts") or {}
    if entry.get("pinned"):
        return _("Pinned: always given")
    by_words = parts.get("keyword_rank") is not None
    by_meaning = parts.get("vector_rank") is not None
    if by_words and by_meaning:
        return _("Shares words and meaning with the message")
    if by_words:
        return _("Shares words with the message")
    if by_meaning:
        return _("Close in meaning to the message")
    return _("Important and recent enough")


def explain_recall(user: User, message: str) -> RecallExplained:
    """What the injection preview of ``message`` gives an assistant, without recording it."""
    preview = injection_preview(user, PreviewRequest(message=message, dry_run=True))
    if preview["reason"]:
        return RecallExplained(message, refusal=REFUSALS.get(preview["reason"], preview["message"]))
    return RecallExplained(
        message,
        block=preview["block"],
        tokens=preview["tokens"]["total"],
        budget=preview["budget"]["total"],
        memories=tuple(
            Recalled(entry["content"], why_chosen(entry), entry["tokens"], kind=entry["kind"])
            for entry in preview["memories"]
        ),
        turns=tuple(
            Recalled(
                episode["text"], why_chosen(episode), episode["tokens"], when=episode["sent_at"]
            )
            for episode in preview["episodes"]
        ),
        dropped=tuple(
            Recalled(
                entry["content"],
                DROPPED_REASONS.get(entry["reason"], entry["reason"]),
                entry["tokens"],
            )
            for entry in preview["dropped"]
        ),
    )
