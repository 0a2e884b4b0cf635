from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User


class MemorySettings(models.Model):
    """A user's own switches for memory, created with the user."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_settings"
    )
    memory_enabled = models.BooleanField(_("memory on"), default=False)
    auto_extract = models.BooleanField(_("automatic extraction"), default=True)
    review_extracted = models.BooleanField(
        _("review extracted memories before saving"), default=False
    )
    show_citations = models.BooleanField(_("show citations"), default=True)
    # The injection preview adds the past turns that answer the message (recall.episodes).
    reference_past_conversations = models.BooleanField(
        _("reference past conversations"), default=True
    )
    # Changes made by extraction after this moment are announced as "Memory updated".
    notices_seen_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # The language of the pages, saved from the language menu; empty follows the browser.
    language = models.CharField(
        _("language"), max_length=10, blank=True, default="", choices=settings.LANGUAGES
    )

    class Meta:
        verbose_name = _("memory settings")
        verbose_name_plural = _("memory settings")

    def __str__(self) -> str:
        return f"Memory settings of {self.user}"

    @classmethod
    def for_user(cls, user: AbstractBaseUser | AnonymousUser) -> MemorySettings:
        memory_settings, _created = cls.objects.get_or_create(
            user_id=user.pk, defaults=cls.server_defaults()
        )
        return memory_settings

    @staticmethod
    def server_defaults() -> dict[str, bool]:
        return {
            "memory_enabled": settings.MEMORY_ENABLED_BY_DEFAULT,
            "review_extracted": settings.MEMORY_REVIEW_BY_DEFAULT,
        }


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A personal API token. Only a SHA-256 hash of the secret is stored."""

    PREFIX = "mem_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(_("name"), max_length=100)
    token_prefix = models.CharField(
        max_length=16, help_text="The first characters, to recognise it."
    )
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.token_prefix}…)"

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()

    @classmethod
    def issue(cls, *, user: User, name: str) -> tuple[ApiToken, str]:
        """Create a token and return it with its secret, which is never shown again."""
        secret = cls.PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user, name=name, token_prefix=secret[:10], token_hash=cls.hash_secret(secret)
        )
        return token, secret

    @classmethod
    def authenticate(cls, secret: str) -> ApiToken | None:
        token = (
            cls.objects.active()
            .select_related("user")
            .filter(token_hash=cls.hash_secret(secret), user__is_active=True)
            .first()
        )
        if token is not None:
            # One write a minute at most: recall must stay fast.
            now = timezone.now()
            if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
                token.last_used_at = now
                token.save(update_fields=["last_used_at"])
        return token

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
