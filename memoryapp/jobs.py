"""django-q2 tasks and the schedules the app creates for itself."""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from memoryapp.models import Memory, WorkerHeartbeat

logger = logging.getLogger(__name__)

# Schedules created (or corrected) after every migrate: name -> (function, minutes).
SCHEDULES: dict[str, tuple[str, int]] = {
    "worker heartbeat": ("memoryapp.jobs.heartbeat", 1),
}


def embed_memory(memory_id: int) -> None:
    """Embed one memory after it was created or its content edited.

    Provider failures raise, so django-q2 retries the job; the memory itself is
    already saved and found by keyword search meanwhile. With a dimension
    conflict nothing can be stored until ``embed_memories --rebuild`` runs.
    """
    from memoryapp.embeddings import dimension_conflict, get_provider, store_embeddings

    row = Memory.objects.filter(pk=memory_id).values_list("id", "content").first()
    if row is None:
        return
    if conflict := dimension_conflict():
        logger.warning("Memory %s not embedded: %s", memory_id, conflict)
        return
    store_embeddings([row], get_provider())


def heartbeat() -> None:
    WorkerHeartbeat.objects.update_or_create(name="default", defaults={"beat_at": timezone.now()})


def ensure_schedules(**kwargs: Any) -> None:
    from django_q.models import Schedule

    for name, (func, minutes) in SCHEDULES.items():
        Schedule.objects.update_or_create(
            name=name,
            defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": minutes},
        )
