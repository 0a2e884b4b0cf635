"""Teams, their members and roles, their projects, and invitations to join them."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

# An invitation link works for this long.
INVITATION_VALID_DAYS = 14


def _invitation_token() -> str:
    return secrets.token_urlsafe(32)


class NamedWithSlug(models.Model):
    """A name, and a unique slug made from it on first save (used in URLs)."""

    name = models.CharField(_("name"), max_length=100)
    slug = models.SlugField(max_length=120, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.slug:
            self.slug = unique_slug(type(self), self.name)
        super().save(*args, **kwargs)


class Team(NamedWithSlug):
    class Meta(NamedWithSlug.Meta):
        verbose_name = _("team")
        verbose_name_plural = _("teams")
        db_table = "accounts_team"


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    ADMIN = "admin", _("Admin")
    MEMBER = "member", _("Member")
    VIEWER = "viewer", _("Viewer")


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        db_table = "accounts_membership"
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="unique_team_membership")
        ]
        ordering = ["team", "user"]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class ProjectQuerySet(models.QuerySet["Project"]):
    """Who may see or change which projects: ``teams.permissions``."""


class Project(NamedWithSlug):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="projects")
    archived_at = models.DateTimeField(null=True, blank=True)

    objects = ProjectQuerySet.as_manager()

    class Meta(NamedWithSlug.Meta):
        verbose_name = _("project")
        verbose_name_plural = _("projects")
        db_table = "accounts_project"

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None

    def rename(self, name: str) -> None:
        self.name = name.strip()
        self.save(update_fields=["name"])

    def set_archived(self, archived: bool) -> None:
        """An archived project keeps its memories, read-only, out of the team's active list."""
        if archived == self.is_archived:
            return
        self.archived_at = timezone.now() if archived else None
        self.save(update_fields=["archived_at"])


def unique_slug(model: type[models.Model], name: str) -> str:
    base = slugify(name, allow_unicode=False)[:100] or "item"
    slug, n = base, 2
    while model._default_manager.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


class Invitation(models.Model):
    """An invitation to join a team, accepted through a link by signing in or up."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    token = models.CharField(max_length=64, unique=True, default=_invitation_token)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "accounts_invitation"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} to {self.team}"

    @property
    def expires_at(self) -> datetime:
        return self.created_at + timedelta(days=INVITATION_VALID_DAYS)

    @property
    def is_expired(self) -> bool:
        return timezone.now() >= self.expires_at
