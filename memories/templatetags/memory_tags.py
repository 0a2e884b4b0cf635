from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Events of a project's memories shown on its page; the activity page has them all.
RECENT_ACTIVITY = 5


@register.inclusion_tag("memories/partials/_project_memory_summary.html")
def project_memory_summary(project: Any) -> dict[str, Any]:
    """The project page's count of shared memories and their latest changes."""
    from memories.memory_history import activity_items, project_events
    from memories.models import Memory

    events = project_events(project)[:RECENT_ACTIVITY]
    return {
        "project": project,
        "memory_count": Memory.objects.of_project(project).active().count(),
        "recent_activity": activity_items(events, reverse("project-memories", args=[project.slug])),
    }


# Inline SVG (no icon font, no CDN); drawn with the text colour.
_KIND_ICON_SHAPES = {
    "preference": '<path d="M12 20s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 10c0 5.6-7 10-7 10z"/>',
    "fact": '<circle cx="12" cy="12" r="9"/><path d="M12 11v6M12 7.5v.5"/>',
    "lesson": '<path d="M9 18h6M10 21h4M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2.1h5c0-.9.4-1.6 1-2.1A6 6 0 0 0 12 3z"/>',
    "decision": '<path d="M5 21V4M5 4h11l-2 4 2 4H5"/>',
    "pattern": '<path d="M4 12a8 8 0 0 1 14-5.3M20 12a8 8 0 0 1-14 5.3M18 3v4h-4M6 21v-4h4"/>',
    "goal": '<circle cx="12" cy="12" r="9"/><circle cx="12" cy="12" r="5"/><circle cx="12" cy="12" r="1"/>',
    "context": '<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>',
}
_KIND_ICONS = {
    kind: mark_safe(
        f'<span class="kind-icon kind-{kind}" aria-hidden="true"><svg viewBox="0 0 24 24" '
        'width="16" height="16" fill="none" stroke="currentColor" stroke-width="2" '
        f'stroke-linecap="round" stroke-linejoin="round" focusable="false">{shape}</svg></span>'
    )
    for kind, shape in _KIND_ICON_SHAPES.items()
}


@register.filter
def kind_icon(kind: str) -> SafeString:
    """The kind's icon in its coloured circle (decorative: the label always goes beside it)."""
    return _KIND_ICONS.get(kind, _KIND_ICONS["context"])
