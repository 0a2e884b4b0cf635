"""What accounts needs from apps above it, without importing them (accounts is the lowest
app): the teams app registers here, when Django starts, which projects a user may read,
for a token's project limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

# teams.permissions.projects_readable_by, set by teams.apps.TeamsConfig.ready().
readable_projects: Callable[[Any], QuerySet[Any]] | None = None


def projects_of(user: Any) -> QuerySet[Any] | None:
    """The projects ``user`` may read (None until the teams app registered)."""
    return readable_projects(user) if readable_projects is not None else None
