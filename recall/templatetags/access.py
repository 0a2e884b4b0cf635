"""``{% memory_usage memory %}``: "Used by <app>, N times, last <when>" for a memory's
history panel (the signed-in user's own apps only)."""

from __future__ import annotations

from typing import Any

from django import template

from recall.access import memory_usage as usage_of

register = template.Library()


@register.inclusion_tag("recall/partials/_memory_usage.html", takes_context=True)
def memory_usage(context: template.Context, memory: Any) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or memory is None:
        return {"usage": [], "memory": memory}
    return {"usage": usage_of(user, memory.pk), "memory": memory}
