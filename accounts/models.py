from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
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
    # Number the injected memories for the model to cite (recall.injection); off by default:
    # before it did anything, every account had it on without effect.
    show_citations = models.BooleanField(_("show citations"), default=False)
    # The injection preview adds the past turns that answer the message (recall.episodes).
    reference_past_conversations = models.BooleanField(
        _("reference past conversations"), default=True
    )
    # Privacy pause: nothing is extracted or injected until ``paused_until``, or until the
    # user turns memory back on when ``paused_indefinitely``.
    paused_until = models.DateTimeField(_("memory paused until"), null=True, blank=True)
    paused_indefinitely = models.BooleanField(_("memory paused"), default=False)
    # Topics or words never to remember, one a line (memories.gate.never_remember_rule).
    never_remember = models.TextField(_("don't remember"), blank=True, default="")
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

    @property
    def never_remember_rules(self) -> list[str]:
        """The "Don't remember" list: its lines, trimmed, without empty ones."""
        return [line.strip() for line in self.never_remember.splitlines() if line.strip()]

    @classmethod
    def for_user(cls, user: AbstractBaseUser | AnonymousUser) -> MemorySettings:
        memory_settings, _created = cls.objects.get_or_create(
            user_id=user.pk, defaults=cls.server_defaults()
        )
        return memory_settings

    @property
    def privacy_paused(self) -> bool:
        """Whether the user paused memory (the header's switch) and the pause still runs."""
        return self.paused_indefinitely or (
            self.paused_until is not None and self.paused_until > timezone.now()
        )

    def pause(self, until: datetime | None) -> None:
        """Pause memory until ``until``, or until resumed when ``until`` is None."""
        self.paused_until = until
        self.paused_indefinitely = until is None
        self.save(update_fields=["paused_until", "paused_indefinitely", "updated_at"])

    def resume(self) -> None:
        self.paused_until = None
        self.paused_indefinitely = False
        self.save(update_fields=["paused_until", "paused_indefinitely", "updated_at"])

    @staticmethod
    def server_defaults() -> dict[str, bool]:
        return {
            "memory_enabled": settings.MEMORY_ENABLED_BY_DEFAULT,
            "review_extracted": settings.MEMORY_REVIEW_BY_DEFAULT,
        }


class TokenScope(models.TextChoices):
    """What a token may do. read: preview, search, list; write: add, edit, delete,
    commands; ingest: send conversations."""

    READ = "read", _("Read (recall, search, list)")
    WRITE = "write", _("Write (add, edit, delete, commands)")
    INGEST = "ingest", _("Send conversations")


ALL_SCOPES = [scope.value for scope in TokenScope]


def all_scopes() -> list[str]:
    return list(ALL_SCOPES)


class TokenLimit(models.TextChoices):
    """Which memories a token sees and may write."""

    NONE = "", _("All my memories")
    PERSONAL = "personal", _("Personal memories only")
    PROJECT = "project", _("One project")


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
    scopes = ArrayField(
        models.CharField(max_length=10, choices=TokenScope.choices), default=all_scopes
    )
    limit = models.CharField(
        _("limited to"), max_length=10, choices=TokenLimit.choices, blank=True, default=""
    )
    # A limit to a deleted project leaves the token seeing nothing (SET_NULL, limit kept).
    limit_project = models.ForeignKey(
        "teams.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.token_prefix}…)"

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()

    @classmethod
    def issue(cls, *, user: User, name: str, **options: Any) -> tuple[ApiToken, str]:
        """Create a token and return it with its secret, which is never shown again.

        ``options``: scopes, limit, limit_project, expires_at (default: full scope, forever).
        """
        secret = cls.PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            token_prefix=secret[:10],
            token_hash=cls.hash_secret(secret),
            **options,
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
        if token is not None and token.is_expired:
            return None
        if token is not None and not token.is_paused:
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

    def pause(self) -> None:
        if self.paused_at is None:
            self.paused_at = timezone.now()
            self.save(update_fields=["paused_at"])

    def resume(self) -> None:
        if self.paused_at is not None:
            self.paused_at = None
            self.save(update_fields=["paused_at"])

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def is_paused(self) -> bool:
        return self.paused_at is not None

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def state(self) -> str:
        """revoked, expired, paused or active."""
        if self.revoked_at is not None:
            return "revoked"
        if self.is_expired:
            return "expired"
        return "paused" if self.is_paused else "active"

    @property
    def scope_labels(self) -> list[str]:
        return [str(TokenScope(scope).label) for scope in ALL_SCOPES if scope in self.scopes]

    def allows(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def full_scope(self) -> bool:
        return set(ALL_SCOPES) <= set(self.scopes) and not self.limit
