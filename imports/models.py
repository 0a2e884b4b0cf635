"""An import of someone's history from another assistant: its file, choices and progress."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from conversations.models import Conversation


class Source(models.TextChoices):
    CHATGPT = "chatgpt", "ChatGPT"
    CLAUDE = "claude", "Claude"
    MEMORIES = "memories", _("Saved memories")


class ImportStatus(models.TextChoices):
    ANALYSING = "analysing", _("Reading the file")
    READY = "ready", _("Ready to import")
    INVALID = "invalid", _("Not imported")
    IMPORTING = "importing", _("Importing")
    DONE = "done", pgettext_lazy("import status", "Imported")
    FAILED = "failed", _("Stopped by an error")
    UNDOING = "undoing", _("Undoing")
    UNDONE = "undone", _("Undone")


# Work a worker does (or resumes) for the import; the page polls while it lasts.
ACTIVE_STATUSES = (ImportStatus.ANALYSING, ImportStatus.IMPORTING, ImportStatus.UNDOING)
# Imports that may still write (a user has one at a time).
OPEN_STATUSES = (*ACTIVE_STATUSES, ImportStatus.READY)


class Phase(models.TextChoices):
    """What an importing import is doing, in this order."""

    STORE = "store", _("Storing")
    EXTRACT = "extract", _("Building memories")
    EMBED = "embed", _("Indexing for search")


class ImportQuerySet(models.QuerySet["Import"]):
    def of(self, user: object) -> ImportQuerySet:
        return self.filter(owner_id=getattr(user, "pk", None))

    def open(self) -> ImportQuerySet:
        return self.filter(status__in=OPEN_STATUSES)


class Import(models.Model):
    """One file from ChatGPT or Claude (conversations) or a list of saved memories.

    The file is read first (``analysing``: the preview, nothing written), then imported
    as the user chose (``importing``: conversations stored, then memories built from them
    in time order), in steps on the job worker that each commit their progress with
    what they wrote, so a worker that dies is followed by one that goes on where it
    stopped. ``conversations`` are the ones this import created: Undo deletes them and
    reverses every memory change made from them (and ``batch``: the saved memories added).
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="imports"
    )
    source = models.CharField(max_length=10, choices=Source.choices)
    status = models.CharField(
        max_length=10, choices=ImportStatus.choices, default=ImportStatus.ANALYSING
    )
    phase = models.CharField(max_length=10, choices=Phase.choices, blank=True, default="")
    file_name = models.CharField(max_length=255, blank=True, default="")
    file_size = models.BigIntegerField(default=0)
    # The user's choices (conversation exports).
    keep_conversations = models.BooleanField(default=True)
    build_memories = models.BooleanField(default=True)
    # Import as soon as the file is read, with the choices above (the API's default).
    start_when_ready = models.BooleanField(default=False)
    # What reading the file found (``analysis.Preview.as_dict``).
    preview = models.JSONField(default=dict, blank=True)
    # Why the file was refused or the import stopped: a stable code and its details
    # (``errors.message``), put into words in the reader's language.
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_details = models.JSONField(default=dict, blank=True)

    # Progress. Reading the file: bytes of it read (of ``bytes_total``).
    bytes_total = models.BigIntegerField(default=0)
    bytes_read = models.BigIntegerField(default=0)
    # Importing: bytes of the normalised copy read (``spool_offset`` of ``spool_size``),
    # what was stored or skipped, and what extraction has read.
    spool_size = models.BigIntegerField(default=0)
    spool_offset = models.BigIntegerField(default=0)
    conversations_stored = models.PositiveIntegerField(default=0)
    conversations_skipped = models.PositiveIntegerField(default=0)
    messages_stored = models.PositiveIntegerField(default=0)
    messages_extracted = models.PositiveIntegerField(default=0)
    messages_indexed = models.PositiveIntegerField(default=0)
    # Conversations extraction went through (in time order), and the last message embedded.
    extract_cursor = models.PositiveIntegerField(default=0)
    embed_cursor = models.BigIntegerField(default=0)
    # Memories added, known already (saved memories) or confirmed again (extraction),
    # older ones replaced (extraction), refused as nothing but a secret (saved memories);
    # and how many an Undo put back.
    memories_created = models.PositiveIntegerField(default=0)
    memories_known = models.PositiveIntegerField(default=0)
    memories_superseded = models.PositiveIntegerField(default=0)
    memories_refused = models.PositiveIntegerField(default=0)
    memories_undone = models.PositiveIntegerField(default=0)
    conversations_undone = models.PositiveIntegerField(default=0)
    # Steps that failed in a row (an import stops after IMPORT_MAX_FAILURES).
    failures = models.PositiveSmallIntegerField(default=0)

    batch = models.UUIDField(default=uuid.uuid4, editable=False)
    conversations = models.ManyToManyField(Conversation, related_name="imports", blank=True)

    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    # Written with every step's progress: an active import whose worker stopped writing it
    # is taken up again (``services.resume_stalled``).
    heartbeat_at = models.DateTimeField(default=timezone.now)

    objects = ImportQuerySet.as_manager()

    class Meta:
        verbose_name = _("import")
        verbose_name_plural = _("imports")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="import_owner_latest")]

    def __str__(self) -> str:
        return f"Import #{self.pk} ({self.source}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def imports_conversations(self) -> bool:
        return self.source != Source.MEMORIES

    def progress(self) -> dict[str, tuple[int, int]]:
        """How far each part of the work is, as (done, total): the file read (bytes), the
        messages stored, then extracted (or indexed for search); saved memories added."""
        if self.status == ImportStatus.ANALYSING:
            return {"read": (self.bytes_read, self.bytes_total)}
        if not self.imports_conversations:
            handled = self.memories_created + self.memories_known + self.memories_refused
            return {"added": (handled, self.preview.get("counts", {}).get("new", 0))}
        expected = self.preview.get("new_messages", 0)
        # Once stored, what was stored is what follows (some may have been there already).
        stored = expected if self.phase == Phase.STORE else self.messages_stored
        parts = {
            "read": (self.spool_offset, self.spool_size),
            "stored": (self.messages_stored, expected),
        }
        if self.build_memories:
            parts["extracted"] = (self.messages_extracted, stored)
        elif self.keep_conversations:
            parts["indexed"] = (self.messages_indexed, stored)
        return parts
