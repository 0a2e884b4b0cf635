"""{% extraction_notice %}: the "Memory updated" notice, for any page that shows memories."""

from __future__ import annotations

from typing import Any

from django import template

from conversations.notices import extraction_notices, faded_this_week

register = template.Library()


def notice_context(request: Any) -> dict[str, Any]:
    user = request.user
    if not user.is_authenticated:
        return {"notices": [], "faded": 0, "request": request}
    return {
        "notices": extraction_notices(user),
        "faded": faded_this_week(user),
        "request": request,
    }


@register.inclusion_tag("conversations/partials/extraction_notice.html", takes_context=True)
def extraction_notice(context: dict[str, Any]) -> dict[str, Any]:
    return notice_context(context["request"])
