from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from memoryapp.memory_list import highlight as highlight_matches

register = template.Library()


@register.filter
def highlight(text: str, query: str) -> SafeString:
    """The text, escaped, with what the search matched in <mark>."""
    return highlight_matches(str(text), query or "")
