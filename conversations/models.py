"""What chat applications send in: conversations, their messages, and extraction runs over them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from search.buckets import bucket_hnsw_indexes
from search.textsearch import search_document
from teams.models import Project


class Conversation(models.Model):
    """What a chat application sent in."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="conversations"
    )
    external_id = models.CharField(max_length=200)
    title = models.CharField(max_length=300, blank=True, default="")
    # Privacy mode: nothing is extracted from it and nothing is injected into it.
    temporary = models.BooleanField(default=False)
    client = models.CharField(max_length=100, blank=True, default="")
    # Who takes part: [{"name": "Mia", "role": "user", "is_account_user": true}, …]. A
    # message names its speaker, or its role stands for the first participant with that role.
    participants = models.JSONField(default=list, blank=True)
    # Messages up to this position have been read by extraction.
    extracted_through = models.PositiveIntegerField(default=0)
    ended_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        db_table = "memoryapp_conversation"
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "external_id"], name="unique_conversation_external_id"
            )
        ]
        # A user's latest conversations (their list, and the names a preview may be asked
        # about) without sorting all of them: 5,000 took ~1 ms of each preview.
        indexes = [models.Index(fields=["owner", "-created_at"], name="conversation_owner_latest")]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title or self.external_id

    def speaker_of(self, role: str, speaker: str = "") -> Speaker:
        """Who said a message: the participant it names, else the first with its role, else
        the account's user for ``user`` messages and "Assistant" for the others."""
        for participant in self.participants:
            if speaker and participant.get("name") == speaker:
                return Speaker(speaker, bool(participant.get("is_account_user")))
        if speaker:
            return Speaker(speaker, False)
        for participant in self.participants:
            if participant.get("role") == role:
                return Speaker(participant["name"], bool(participant.get("is_account_user")))
        if role == MessageRole.USER:
            return Speaker(self.owner.get_full_name() or self.owner.get_username(), True)
        return Speaker(
            str(_("Assistant")) if role == MessageRole.ASSISTANT else role.title(), False
        )


class Speaker(NamedTuple):
    name: str
    is_account_user: bool


class MessageRole(models.TextChoices):
    USER = "user", _("User")
    ASSISTANT = "assistant", _("Assistant")
    SYSTEM = "system", _("System")
    TOOL = "tool", _("Tool")


class MessageQuerySet(models.QuerySet["Message"]):
    def bulk_create(  # type: ignore[override]
        self, objs: Iterable[Message], *args: Any, **kwargs: Any
    ) -> list[Message]:
        """As QuerySet.bulk_create, with each message's search document (``save`` does it
        for one)."""
        messages = list(objs)
        for message in messages:
            message.refresh_search_document()
        created: list[Message] = super().bulk_create(messages, *args, **kwargs)  # type: ignore[arg-type, assignment]
        return created

    def searchable(self) -> MessageQuerySet:
        """What episodic recall may search: never a temporary conversation's."""
        return self.filter(temporary=False)


MESSAGE_HNSW_INDEX_PREFIX = "message_embedding_hnsw_"


class Message(models.Model):
    """One turn of a conversation. The turns of conversations that are not temporary are
    searchable like memories (episodic recall, ``recall.episodes``): a search document and
    vector kept as Memory's are (the trigger of migration 0003), and an embedding made by the
    extraction run that reads them (``conversations.jobs.embed_messages``)."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=10, choices=MessageRole.choices)
    content = models.TextField()
    external_id = models.CharField(max_length=200)
    # A participant's name when the role alone does not say who spoke (two people chatting).
    speaker = models.CharField(max_length=100, blank=True, default="")
    # 1, 2, 3… in the order received; extraction windows are ranges of positions.
    position = models.PositiveIntegerField()
    sent_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    # The speaker's name and the text, as textsearch.search_document makes them; empty for a
    # temporary conversation's messages, which are never searched.
    search_document = models.TextField(blank=True, default="", editable=False)
    # to_tsvector(SEARCH_CONFIG, search_document), set by a trigger (migration 0003).
    search_vector = SearchVectorField(null=True, blank=True, editable=False)
    # The vector of ``embedding_text``, by the model named (as Memory's).
    embedding = VectorField(dimensions=settings.MEMORY_EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    # The vector bucket of its conversation's owner (``memories.models.vector_bucket``), set
    # by a trigger on insert (migration 0005): a user's turns are searched through their
    # bucket's HNSW index, where they are a larger share than in the whole table.
    vector_bucket = models.SmallIntegerField(db_default=0, editable=False)
    # Its conversation's owner and privacy mode, kept by the same trigger (and updated with
    # the conversation, migration 0007): episodic recall filters a user's turns by them
    # without joining their conversations, which for 5,000 conversations cost a search
    # 1.2 ms of its 8 (benchmarks/recall_speed.py --messages 1000000).
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,  # Deleted with its conversation.
        null=True,
        editable=False,
        db_index=False,
        related_name="+",
    )
    temporary = models.BooleanField(db_default=False, editable=False)

    objects = MessageQuerySet.as_manager()

    class Meta:
        verbose_name = _("message")
        verbose_name_plural = _("messages")
        db_table = "memoryapp_message"
        indexes = [
            GinIndex(fields=["search_vector"], name="message_search_idx"),
            *bucket_hnsw_indexes(MESSAGE_HNSW_INDEX_PREFIX),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "external_id"], name="unique_message_external_id"
            ),
            models.UniqueConstraint(
                fields=["conversation", "position"], name="unique_message_position"
            ),
        ]
        ordering = ["conversation", "position"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.refresh_search_document()
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and ({"content", "speaker"} & set(update_fields)):
            kwargs["update_fields"] = {*update_fields, "search_document"}
        super().save(*args, **kwargs)

    @property
    def speaker_name(self) -> str:
        """The name the message names, else its role's participant's; "" when none says."""
        if self.speaker:
            return self.speaker
        for participant in self.conversation.participants:
            if isinstance(participant, dict) and participant.get("role") == self.role:
                return str(participant.get("name") or "")
        return ""

    def embedding_text(self) -> str:
        """What is embedded and indexed: "Name: text" when the speaker is known."""
        name = self.speaker_name
        return f"{name}: {self.content}" if name else self.content

    def refresh_search_document(self) -> None:
        self.search_document = (
            "" if self.conversation.temporary else search_document(self.embedding_text())
        )


class ExtractionTrigger(models.TextChoices):
    TURNS = "turns", _("Every few user turns")
    END = "end", _("Conversation ended")
    SUMMARY = "summary", _("Compaction summary")
    MANUAL = "manual", _("Asked for")


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    SKIPPED = "skipped", _("Skipped")


class ExtractionRun(models.Model):
    """One extraction job over a window of a conversation's messages."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="extraction_runs"
    )
    trigger = models.CharField(max_length=10, choices=ExtractionTrigger.choices)
    extractor = models.CharField(max_length=20, default="rules")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    skip_reason = models.CharField(max_length=200, blank=True, default="")
    # The window: message positions first..last (inclusive), fixed when the run starts.
    window_first = models.PositiveIntegerField(null=True, blank=True)
    window_last = models.PositiveIntegerField(null=True, blank=True)
    # A compaction summary sent with the trigger, when there is one.
    summary = models.TextField(blank=True, default="")
    candidates = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    merged = models.PositiveIntegerField(default=0)
    superseded = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    dropped_sensitive = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # What an LLM answered when it could not be parsed, kept for diagnosis and retry.
    raw_output = models.TextField(blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("extraction run")
        verbose_name_plural = _("extraction runs")
        db_table = "memoryapp_extractionrun"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Extraction #{self.pk} of {self.conversation} ({self.status})"
