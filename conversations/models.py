"""What chat applications send in: conversations, their messages, and extraction runs over them."""

from __future__ import annotations

from typing import NamedTuple

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

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
        db_table = "memoryapp_conversation"
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "external_id"], name="unique_conversation_external_id"
            )
        ]
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


class Message(models.Model):
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

    class Meta:
        db_table = "memoryapp_message"
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
        db_table = "memoryapp_extractionrun"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Extraction #{self.pk} of {self.conversation} ({self.status})"
