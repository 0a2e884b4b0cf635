"""The header's privacy switch: ``{% privacy_state user as privacy %}``."""

from __future__ import annotations

from typing import Any

from django import template

from accounts.models import MemorySettings

register = template.Library()


@register.simple_tag
def privacy_state(user: Any) -> MemorySettings | None:
    """The signed-in user's memory settings (paused or not), None for anyone else."""
    if not getattr(user, "is_authenticated", False):
        return None
    return MemorySettings.for_user(user)
