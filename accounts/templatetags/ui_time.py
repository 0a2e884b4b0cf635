"""{{ moment|ago }}: "just now" for the last minute, else "3 minutes ago" (never "0 minutes")."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def ago(moment: datetime | None) -> str:
    if moment is None:
        return ""
    if (timezone.now() - moment).total_seconds() < 60:
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(moment, depth=1)}
