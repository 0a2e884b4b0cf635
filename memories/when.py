"""When a memory is about, as its list row and the review queue show it.

A memory extracted from a conversation is valid from when its message was
sent and may name the day of an event (``metadata["event_date"]``); both can
be long before the memory was stored. The pages show that day, short ("7 May
2023", "2023年5月7日"), only where it says something the creation date does
not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.template.defaultfilters import date as date_filter
from django.utils import timezone
from django.utils.translation import gettext, pgettext

from memories.models import Memory


@dataclass(frozen=True)
class MemoryDate:
    iso: str  # YYYY-MM-DD, for scripts and tests.
    label: str  # "7 May 2023"
    title: str  # What the day is: when it happened, or since when it holds.


def _event_date(memory: Memory) -> date | None:
    raw = (memory.metadata or {}).get("event_date")
    try:
        return date.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        return None


def memory_when(memory: Memory) -> MemoryDate | None:
    """The event's day, else the day the memory holds from, when not the day it was stored."""
    created = timezone.localdate(memory.created_at)
    day, title = _event_date(memory), gettext("When it happened")
    if day is None and memory.valid_from is not None:
        day, title = timezone.localdate(memory.valid_from), gettext("True since")
    if day is None or day == created:
        return None
    # Translators: a short date in a memory's details, as a date filter format.
    short = pgettext("short date", "j F Y")
    return MemoryDate(day.isoformat(), date_filter(day, short), title)
