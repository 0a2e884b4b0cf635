from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Case, F, Q, When
from django.db.models.fields.json import KT
from django.db.models.functions import Mod
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from search.buckets import VECTOR_BUCKETS, bucket_hnsw_indexes
from search.textsearch import search_document
from teams.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


class Scope(models.TextChoices):
    USER = "user", _("Personal")
    PROJECT = "project", _("Project")
    CONVERSATION = "conversation", _("Conversation")


HNSW_INDEX_PREFIX = "memory_embedding_hnsw_"


class Kind(models.TextChoices):
    PREFERENCE = "preference", _("Preference")
    FACT = "fact", _("Fact")
    LESSON = "lesson", _("Lesson")
    DECISION = "decision", _("Decision")
    PATTERN = "pattern", _("Pattern")
    GOAL = "goal", _("Goal")
    CONTEXT = "context", _("Context")


DEFAULT_IMPORTANCE = {
    Kind.PREFERENCE: 0.9,
    Kind.FACT: 0.8,
    Kind.LESSON: 0.85,
    Kind.DECISION: 0.85,
    Kind.PATTERN: 0.75,
    Kind.GOAL: 0.7,
    Kind.CONTEXT: 0.4,
}

# The seeds' other names for kinds, as DESIGN.md maps them.
KIND_ALIASES = {
    "knowledge": Kind.FACT,
    "discovery": Kind.FACT,
    "error": Kind.LESSON,
    "feedback": Kind.LESSON,
    "style": Kind.PREFERENCE,
    "event": Kind.CONTEXT,
}


class Origin(models.TextChoices):
    MANUAL = "manual", _("Added by hand")
    EXTRACTED = "extracted", _("Extracted")
    IMPORTED = "imported", _("Imported")


class Status(models.TextChoices):
    PENDING = "pending", _("Pending review")
    ACTIVE = "active", _("Active")
    REJECTED = "rejected", _("Rejected")


# The states a memory can be in, defined once: each as a Q object for querysets and as the
# same condition in SQL for the set-based statements (reconcile, forgetting). The queryset
# methods below, the settings page's state tabs, the API's ``state`` parameter and that SQL
# all take their condition from here; tests check each pair selects the same rows.
#   alive      not in the trash and not forgotten
#   active     alive, and accepted (what recall may use, once valid_at)
#   pending    alive, waiting for review
#   rejected   alive, turned down in review (kept so extraction does not propose it again)
#   forgotten  faded by forgetting, not in the trash (restorable)
#   trash      deleted (restorable)
#   current    not ended and not superseded (still valid, whatever the time)
_ALIVE_SQL = "{t}deleted_at IS NULL AND {t}forgotten_at IS NULL"
_STATE_SQL_TEMPLATES: dict[str, str] = {
    "alive": _ALIVE_SQL,
    "active": f"{_ALIVE_SQL} AND {{t}}status = '{Status.ACTIVE.value}'",
    "pending": f"{_ALIVE_SQL} AND {{t}}status = '{Status.PENDING.value}'",
    "rejected": f"{_ALIVE_SQL} AND {{t}}status = '{Status.REJECTED.value}'",
    "forgotten": "{t}deleted_at IS NULL AND {t}forgotten_at IS NOT NULL",
    "trash": "{t}deleted_at IS NOT NULL",
    "current": "{t}valid_until IS NULL AND {t}superseded_by_id IS NULL",
}
_ALIVE = Q(deleted_at__isnull=True, forgotten_at__isnull=True)
STATE_CONDITIONS: dict[str, Q] = {
    "alive": _ALIVE,
    "active": _ALIVE & Q(status=Status.ACTIVE),
    "pending": _ALIVE & Q(status=Status.PENDING),
    "rejected": _ALIVE & Q(status=Status.REJECTED),
    "forgotten": Q(deleted_at__isnull=True, forgotten_at__isnull=False),
    "trash": Q(deleted_at__isnull=False),
    "current": Q(valid_until__isnull=True, superseded_by__isnull=True),
}


def state_sql(state: str, alias: str = "") -> str:
    """``STATE_CONDITIONS[state]`` as SQL, its columns qualified by ``alias`` if given."""
    return "(" + _STATE_SQL_TEMPLATES[state].format(t=f"{alias}." if alias else "") + ")"


STATE_SQL: dict[str, str] = {state: state_sql(state) for state in _STATE_SQL_TEMPLATES}
# The states a person picks from (the settings page's tabs, in this order, and the API's
# ``state``), with their labels.
STATE_LABELS = {
    "active": _("Active"),
    "pending": _("Pending review"),
    "forgotten": _("Forgotten"),
    "rejected": _("Rejected"),
    "trash": _("Trash"),
}
LISTED_STATES = tuple(STATE_LABELS)


def parse_event_date(value: Any) -> date | None:
    """A memory's ``metadata["event_date"]`` (an ISO date) as a date; None when absent or
    unreadable."""
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def evidence_message_ids(evidence: Any) -> list[int]:
    """The messages a memory's evidence names, in order, each once: its items say
    ``{"messages": [ids]}`` (``message_ids`` or ``message_id`` in older ones)."""
    found: dict[int, None] = {}
    for item in evidence if isinstance(evidence, list) else []:
        if not isinstance(item, dict):
            continue
        raw = [*(item.get("messages") or []), *(item.get("message_ids") or [])]
        raw.append(item.get("message_id"))
        found.update(dict.fromkeys(int(value) for value in raw if str(value).isdigit()))
    return list(found)


def memory_page_url(pk: int, state: str = "active", list_url: str = "") -> str:
    """The memories page (or ``list_url``, a project's) narrowed to one memory, in the tab of
    ``state`` (the query string ``filters.MemoryFilters`` reads)."""
    params = {"memory": str(pk)} if state == "active" else {"state": state, "memory": str(pk)}
    return f"{list_url or reverse('memory-list')}?{urlencode(params)}"


class MemoryQuerySet(models.QuerySet["Memory"]):
    def in_state(self, state: str) -> MemoryQuerySet:
        """The memories in ``state`` (a key of STATE_CONDITIONS); "all": every one."""
        return self if state == "all" else self.filter(STATE_CONDITIONS[state])

    def alive(self) -> MemoryQuerySet:
        """Not in the trash and not forgotten."""
        return self.in_state("alive")

    def active(self) -> MemoryQuerySet:
        return self.in_state("active")

    def valid_at(self, when: Any = None) -> MemoryQuerySet:
        """True at ``when`` (default now): started, and not yet ended or superseded."""
        when = when or timezone.now()
        return self.filter(valid_from__lte=when).filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=when)
        )

    def in_effect(self, when: Any = None) -> MemoryQuerySet:
        """What recall may inject: active, alive and valid."""
        return self.active().valid_at(when)

    def pending_review(self) -> MemoryQuerySet:
        return self.in_state("pending")

    def rejected(self) -> MemoryQuerySet:
        return self.in_state("rejected")

    def in_trash(self) -> MemoryQuerySet:
        return self.in_state("trash")

    def forgotten(self) -> MemoryQuerySet:
        return self.in_state("forgotten")

    def current(self) -> MemoryQuerySet:
        """Still valid: not ended and not superseded (reconcile compares against these)."""
        return self.in_state("current")

    def personal_of(self, user: AbstractBaseUser) -> MemoryQuerySet:
        return self.filter(scope=Scope.USER, owner=user)

    def of_project(self, project: Project) -> MemoryQuerySet:
        return self.filter(scope=Scope.PROJECT, project=project)


_WHITESPACE = re.compile(r"\s+")


def one_line(content: str) -> str:
    """Memory text on one line, so it can never open a heading or break the block's shape."""
    return _WHITESPACE.sub(" ", content).strip()


class Memory(models.Model):
    """One durable statement about a user or a project."""

    # The owner, project, conversation and superseded_by indexes are the ones in Meta, which
    # lead with these columns: one index less each for every write to maintain. Those of the
    # nullable ones leave NULLs out (every lookup names a value): most memories have no
    # project, many no conversation, few a successor, and an index of NULLs only costs
    # every insert and every update that is not heap-only.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories", db_index=False
    )
    scope = models.CharField(max_length=12, choices=Scope.choices, default=Scope.USER)
    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="memories",
        db_index=False,
    )
    conversation = models.ForeignKey(
        "conversations.Conversation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="memories",
        db_index=False,
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.FACT)
    content = models.TextField()
    tags = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    importance = models.FloatField(default=0.8)
    confidence = models.FloatField(default=0.8)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.MANUAL)
    pinned = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    deleted_at = models.DateTimeField(null=True, blank=True)
    forgotten_at = models.DateTimeField(null=True, blank=True)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_until = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="supersedes",
        db_index=False,
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    # When the forgetting pass last lowered the importance, and the confidence (each at most
    # once per MEMORY_UNUSED_DAYS). Columns no index reads, so that its UPDATEs stay
    # heap-only (HOT): the table's fillfactor (migration 0009) leaves the room for them.
    faded_at = models.DateTimeField(null=True, blank=True, editable=False)
    confidence_lowered_at = models.DateTimeField(null=True, blank=True, editable=False)
    evidence = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    revision = models.PositiveIntegerField(default=1)
    embedding = VectorField(dimensions=settings.MEMORY_EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    vector_bucket = models.GeneratedField(
        expression=Mod(
            Case(When(scope=Scope.PROJECT, then=F("project_id")), default=F("owner_id")),
            VECTOR_BUCKETS,
        ),
        output_field=models.SmallIntegerField(),
        db_persist=True,
    )
    # Words and CJK bigrams of content and tags (see textsearch.py).
    search_document = models.TextField(blank=True, default="", editable=False)
    # to_tsvector(SEARCH_CONFIG, search_document), set by a database trigger whenever a row is
    # inserted or its search_document is written (migration 0003). Not a generated column:
    # PostgreSQL recomputes those on every UPDATE of the row, which made the forgetting pass
    # re-parse a million documents that had not changed.
    search_vector = SearchVectorField(null=True, blank=True, editable=False)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        verbose_name = _("memory")
        verbose_name_plural = _("memories")
        indexes = [
            models.Index(
                fields=["owner", "status", "-created_at"],
                name="memory_owner_live_idx",
                condition=STATE_CONDITIONS["alive"],
            ),
            models.Index(fields=["owner", "scope", "-created_at"], name="memory_owner_scope_idx"),
            # The "faded this week" notice counts these on every page that shows memories.
            models.Index(
                fields=["owner", "forgotten_at"],
                name="memory_owner_forgotten_idx",
                condition=STATE_CONDITIONS["forgotten"],
            ),
            models.Index(
                fields=["project", "status", "-created_at"],
                name="memory_project_idx",
                condition=Q(project__isnull=False),
            ),
            models.Index(
                fields=["conversation"],
                name="memory_conversation_idx",
                condition=Q(conversation__isnull=False),
            ),
            models.Index(
                fields=["superseded_by"],
                name="memory_superseded_by_idx",
                condition=Q(superseded_by__isnull=False),
            ),
            GinIndex(fields=["search_vector"], name="memory_search_idx"),
            # Reconciliation looks up what a pool already says about a subject.
            models.Index(
                F("owner"),
                F("kind"),
                KT("metadata__subject"),
                name="memory_owner_subject_idx",
                condition=Q(metadata__has_key="subject"),
            ),
            models.Index(
                F("project"),
                F("kind"),
                KT("metadata__subject"),
                name="memory_project_subject_idx",
                condition=Q(metadata__has_key="subject", project__isnull=False),
            ),
            GinIndex(fields=["tags"], name="memory_tags_idx"),
            # Pinned memories are always injected: found without reading a big user's rows.
            models.Index(
                fields=["owner", "id"], name="memory_owner_pinned_idx", condition=Q(pinned=True)
            ),
            models.Index(
                fields=["project", "id"], name="memory_project_pinned_idx", condition=Q(pinned=True)
            ),
            *bucket_hnsw_indexes(HNSW_INDEX_PREFIX),
        ]
        constraints = [
            models.CheckConstraint(
                condition=~Q(scope="project") | Q(project__isnull=False),
                name="memory_project_scope_has_project",
            ),
            models.CheckConstraint(
                condition=Q(importance__gte=0, importance__lte=1)
                & Q(confidence__gte=0, confidence__lte=1),
                name="memory_scores_between_0_and_1",
            ),
        ]

    def __str__(self) -> str:
        return self.content[:80]

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.refresh_search_document()
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and ({"content", "tags"} & set(update_fields)):
            kwargs["update_fields"] = {*update_fields, "search_document"}
        super().save(*args, **kwargs)

    def refresh_search_document(self) -> None:
        """What the full-text vector is computed from (by a trigger): content and tags."""
        self.search_document = search_document(" ".join([self.content, *self.tags]))

    @property
    def state(self) -> str:
        """One word for what the settings page shows: trash, forgotten, pending, rejected, active."""
        if self.deleted_at:
            return "trash"
        if self.forgotten_at:
            return "forgotten"
        return str(self.status)

    def page_url(self, list_url: str = "") -> str:
        """The memories page (or ``list_url``) narrowed to this memory, in the tab it is in."""
        return memory_page_url(
            self.pk, self.state if self.state in LISTED_STATES else "active", list_url
        )

    @property
    def source_message_ids(self) -> list[int]:
        """The messages it was extracted from (its evidence)."""
        return evidence_message_ids(self.evidence)

    @property
    def event_date(self) -> date | None:
        """The day what it tells happened, when its metadata says (``event_date``)."""
        return parse_event_date(
            self.metadata.get("event_date") if isinstance(self.metadata, dict) else None
        )

    @property
    def is_superseded(self) -> bool:
        return self.superseded_by_id is not None

    def snapshot(self) -> dict[str, Any]:
        """The editable state, as a MemoryEvent stores it before and after a change."""
        return {
            "content": self.content,
            "kind": self.kind,
            "scope": self.scope,
            "project_id": self.project_id,
            "tags": list(self.tags),
            "importance": self.importance,
            "confidence": self.confidence,
            "pinned": self.pinned,
            "status": self.status,
            "deleted_at": self.deleted_at.isoformat() if self.deleted_at else None,
            "forgotten_at": self.forgotten_at.isoformat() if self.forgotten_at else None,
            "valid_until": self.valid_until.isoformat() if self.valid_until else None,
            "superseded_by_id": self.superseded_by_id,
            "revision": self.revision,
        }


class EventAction(models.TextChoices):
    CREATED = "created", _("Created")
    EDITED = "edited", _("Edited")
    DELETED = "deleted", _("Deleted")
    RESTORED = "restored", _("Restored")
    PINNED = "pinned", _("Pinned")
    UNPINNED = "unpinned", _("Unpinned")
    FORGOTTEN = "forgotten", _("Forgotten")
    SUPERSEDED = "superseded", _("Superseded")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")
    MERGED = "merged", _("Merged")
    DECAYED = "decayed", _("Faded")


class MemoryEvent(models.Model):
    """One change to a memory: who or which job made it, and the state before and after."""

    # Indexed by event_memory_idx, which leads with it.
    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    action = models.CharField(max_length=12, choices=EventAction.choices)
    # Indexed by event_actor_idx, which leaves out the events of jobs (no actor).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    # For changes made by a job or an API client rather than a person on a page.
    actor_label = models.CharField(max_length=100, blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # Changes made together (clear all, an import, a bulk action) share a batch, undone as one.
    batch = models.UUIDField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = _("memory event")
        verbose_name_plural = _("memory events")
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["memory", "-created_at"], name="event_memory_idx"),
            models.Index(
                fields=["actor"], name="event_actor_idx", condition=Q(actor__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} #{self.memory_id}"

    @property
    def actor_name(self) -> str:
        if self.actor_id and self.actor:
            return str(self.actor)
        return self.actor_label or "system"


class WorkerHeartbeat(models.Model):
    """The last time a django-q2 worker ran the heartbeat job; /healthz reads it."""

    name = models.CharField(max_length=100, unique=True, default="default")
    beat_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at:%Y-%m-%d %H:%M:%S}"


class ForgettingReport(models.Model):
    """What one run of the forgetting job did, by outcome and kind."""

    run_on = models.DateField(unique=True)
    counts = models.JSONField(default=dict)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("forgetting report")
        verbose_name_plural = _("forgetting reports")
        ordering = ["-run_on"]

    def __str__(self) -> str:
        return f"Forgetting on {self.run_on}"
