"""Extraction: conversation windows in, candidate memories out.

An extractor reads a window of messages (and a compaction summary, when one
came with the trigger) and proposes ``Candidate`` memories, each with the
evidence it came from. Which extractor runs is a setting
(MEMORY_EXTRACTOR: ``rules``, the offline default, or ``llm``). What happens
to the candidates afterwards (sensitive-data filter, reconciliation with
existing memories) does not depend on the extractor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memories.models import DEFAULT_IMPORTANCE, Kind


@dataclass(frozen=True)
class WindowMessage:
    """One message of the window, as extractors see it.

    ``speaker`` is the display name of who said it; ``is_account_user`` tells
    the account's user from another human in the conversation (it defaults to
    ``role == "user"``, so after construction it is always a bool);
    ``sent_at`` is when it was said, which relative dates ("yesterday") are
    read against.
    """

    id: int
    position: int
    role: str
    content: str
    speaker: str = ""
    is_account_user: bool | None = None
    sent_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.is_account_user is None:
            object.__setattr__(self, "is_account_user", self.role == "user")


@dataclass
class Candidate:
    """A memory an extractor proposes, with where it came from.

    ``subject`` and ``value`` describe what the statement is about and what it
    says about it ("frontend framework" / "react"), so reconciliation can tell
    a contradiction from an unrelated statement. ``about_project`` marks
    statements about the work rather than the person; they go to the
    conversation's project when it has one. ``event_date`` is the day (or the
    first day of the month or year, when that is all the statement says) an
    event happened or will happen; ``speaker`` names who the statement is
    about when that is not the account's user.
    """

    kind: str
    content: str
    message_ids: list[int]
    quote: str
    tags: list[str] = field(default_factory=list)
    confidence: float = 0.8
    subject: str = ""
    value: str = ""
    about_project: bool = False
    event_date: date | None = None
    speaker: str = ""

    @property
    def importance(self) -> float:
        return DEFAULT_IMPORTANCE[Kind(self.kind)]

    def evidence(self, *, conversation_id: int, run_id: int) -> dict[str, Any]:
        return {
            "conversation": conversation_id,
            "messages": self.message_ids,
            "quote": self.quote,
            "run": run_id,
        }


class ExtractionFailed(Exception):
    """The extractor could not produce candidates; ``raw_output`` is what it received."""

    def __init__(self, message: str, raw_output: str = ""):
        super().__init__(message)
        self.raw_output = raw_output


class Extractor(Protocol):
    name: str

    def extract(self, messages: list[WindowMessage], summary: str = "") -> list[Candidate]: ...


def get_extractor(name: str | None = None) -> Extractor:
    """The extractor the settings choose (MEMORY_EXTRACTOR), or the one named."""
    name = name or settings.MEMORY_EXTRACTOR
    if name == "rules":
        from conversations.extraction.rules import RulesExtractor

        return RulesExtractor()
    if name == "llm":
        from conversations.extraction.llm import LlmExtractor

        return LlmExtractor.from_settings()
    raise ImproperlyConfigured(f"Unknown MEMORY_EXTRACTOR {name!r}; use 'rules' or 'llm'.")
