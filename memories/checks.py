"""System checks run at start-up (``runserver``, ``check``, ``migrate``)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Warning, register
from django.db import DatabaseError


@register("memoryapp")
def embedding_dimensions_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Warn when the configured embedding model does not fit the stored vectors.

    Only a warning: the app still serves, with keyword-only recall, so that
    turning on a new provider never takes the service down.
    """
    from search.embeddings import FIX_COMMAND, column_dimensions, get_provider

    try:
        stored = column_dimensions()
    except DatabaseError:
        return []
    configured = get_provider().dimensions
    if stored is None or stored == configured:
        return []
    return [
        Warning(
            f"EMBEDDING_DIMENSION_CONFLICT: the embedding model gives {configured} dimensions "
            f"but the database stores {stored}; recall falls back to keyword search.",
            hint=f"Run: {FIX_COMMAND}",
            id="memoryapp.W001",
        )
    ]
