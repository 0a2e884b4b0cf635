"""{% extraction_notice %}: the "Memory updated" notice, for any page that shows memories."""

from __future__ import annotations

from typing import Any

from django import template

from conversations.notices import extraction_notices, faded_this_week

register = template.Library()


def notice_context(request: Any) -> dict[str, Any]:
    user = request.user
    notices = extraction_notices(user) if user.is_authenticated else []
    return {
        "notices": notices,
        "latest_notice": notices[0] if notices else None,
        "earlier_notices": notices[1:],
        "faded": faded_this_week(user) if user.is_authenticated else 0,
        "request": request,
    }


@register.inclusion_tag("conversations/partials/extraction_notice.html", takes_context=True)
def extraction_notice(context: dict[str, Any]) -> dict[str, Any]:
    return notice_context(context["request"])
