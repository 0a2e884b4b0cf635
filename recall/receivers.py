"""What recall does when memories are deleted for good: its access log forgets them."""

from __future__ import annotations

from typing import Any

from django.db.models import Func, Value
from django.db.models.expressions import F

from recall.models import AccessLog


class _ArrayRemove(Func):
    function = "array_remove"


def forget_purged_memories(memory_ids: list[int], **kwargs: Any) -> None:
    """Take the purged ids out of every injection's ``memory_ids``."""
    for memory_id in memory_ids:
        AccessLog.objects.filter(memory_ids__contains=[memory_id]).update(
            memory_ids=_ArrayRemove(F("memory_ids"), Value(memory_id))
        )
