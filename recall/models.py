"""What recall gave out: one row per injection."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class AccessLog(models.Model):
    """One injection: which token or app asked, when, and which memories it received."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_access_logs"
    )
    api_token = models.ForeignKey(
        "accounts.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    client = models.CharField(max_length=100, blank=True, default="")
    conversation = models.ForeignKey(
        "conversations.Conversation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    memory_ids = ArrayField(models.BigIntegerField(), default=list)
    # The past-conversation turns (message ids) injected beside the memories.
    message_ids = ArrayField(models.BigIntegerField(), default=list)
    # What was asked: the user's message the block answered (secrets redacted, shortened).
    query = models.TextField(blank=True, default="")
    block_hash = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        db_table = "memoryapp_accesslog"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"], name="accesslog_user_created")]

    def __str__(self) -> str:
        return (
            f"{len(self.memory_ids)} memories for {self.user} at {self.created_at:%Y-%m-%d %H:%M}"
        )
