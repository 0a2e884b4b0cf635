"""What the history and evidence panels show: an event's changes, a memory's sources."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils import formats
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from memories.models import Kind, MemoryEvent, Scope, Status

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from teams.models import Project

FIELD_LABELS: dict[str, Any] = {
    "content": _("Content"),
    "kind": _("Kind"),
    "scope": _("Scope"),
    "tags": _("Tags"),
    "importance": _("Importance"),
    "confidence": _("Confidence"),
    "pinned": _("Pinned"),
    "status": _("Status"),
    "deleted_at": _("In trash since"),
    "forgotten_at": _("Forgotten since"),
    "valid_until": _("True until"),
    "superseded_by_id": _("Replaced by"),
}


@dataclass
class Change:
    label: Any
    before: str
    after: str


def _display(field: str, value: Any) -> str:
    if value is None or value == [] or value == "":
        return "—"
    if field == "kind":
        return str(Kind(value).label)
    if field == "scope":
        return str(Scope(value).label)
    if field == "status":
        return str(Status(value).label)
    if field in ("importance", "confidence"):
        return f"{round(float(value) * 100)}%"
    if field == "pinned":
        return str(_("yes") if value else _("no"))
    if field == "tags":
        return ", ".join(value)
    if field in ("deleted_at", "forgotten_at", "valid_until"):
        moment = parse_datetime(value)
        return formats.date_format(moment, "DATETIME_FORMAT") if moment else str(value)
    if field == "superseded_by_id":
        return f"#{value}"
    return str(value)


def event_changes(event: MemoryEvent) -> list[Change]:
    """The fields an event changed, before and after, in words; all of them for a creation."""
    before = event.before or {}
    after = event.after or {}
    return [
        Change(
            label,
            _display(field, before.get(field)) if event.before else "",
            _display(field, after.get(field)),
        )
        for field, label in FIELD_LABELS.items()
        if before.get(field) != after.get(field)
        and (event.before or after.get(field) not in (None, [], "", False))
    ]


def project_events(project: Project) -> QuerySet[MemoryEvent]:
    """Every change to a project's memories, newest first, with who made it and on what."""
    return (
        MemoryEvent.objects.filter(memory__scope=Scope.PROJECT, memory__project=project)
        .select_related("actor", "memory")
        .order_by("-created_at", "-id")
    )


@dataclass
class ActivityItem:
    event: MemoryEvent
    changes: list[Change]
    # The list narrowed to this memory, in the tab it is in now.
    memory_url: str

    @property
    def content(self) -> str:
        """The memory's text as this event left it (or found it, for a deletion): a
        "created" entry shows what was created, not what the memory says today."""
        for snapshot in (self.event.after, self.event.before):
            if snapshot and snapshot.get("content"):
                return str(snapshot["content"])
        return self.event.memory.content


def activity_items(events: Iterable[MemoryEvent], list_url: str) -> list[ActivityItem]:
    """The events as the activity feed shows them: each with its changes and a link to its memory."""
    items = []
    for event in events:
        items.append(ActivityItem(event, event_changes(event), event.memory.page_url(list_url)))
    return items
