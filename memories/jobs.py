"""django-q2 tasks and the schedules the app creates for itself."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from memories.models import Memory, WorkerHeartbeat

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Every:
    """Run every ``minutes`` minutes."""

    minutes: int


@dataclass(frozen=True)
class Daily:
    """Run once a day at ``hour`` o'clock UTC."""

    hour: int


# Schedules created (or corrected) after every migrate: name -> (function, when).
SCHEDULES: dict[str, tuple[str, Every | Daily]] = {
    "worker heartbeat": ("memories.jobs.heartbeat", Every(minutes=1)),
    # Extraction runs whose worker died are run again (see conversations.extraction.runs).
    "reclaim dead extraction runs": (
        "conversations.jobs.reclaim_extraction_runs",
        Every(minutes=1),
    ),
    # Imports whose worker stopped go on where they stopped (see imports.services).
    "resume stalled imports": ("imports.jobs.resume_stalled_imports", Every(minutes=1)),
    "forget unused memories": (
        "memories.jobs.forget_memories",
        Daily(hour=settings.MEMORY_FORGET_HOUR_UTC),
    ),
    # Deleting for good what was kept long enough: old trash, old messages.
    "purge old trash": ("memories.jobs.purge_trash", Daily(hour=settings.MEMORY_FORGET_HOUR_UTC)),
    "purge old messages": (
        "conversations.jobs.purge_messages",
        Daily(hour=settings.MEMORY_FORGET_HOUR_UTC),
    ),
}


def embed_memories(memory_ids: list[int]) -> None:
    """Embed memories after they were created or their content edited.

    Provider failures raise, so django-q2 retries the job; the memories
    themselves are already saved and found by keyword search meanwhile. With a
    dimension conflict nothing can be stored until ``embed_memories --rebuild`` runs.
    """
    from search.embeddings import dimension_conflict, get_provider, store_embeddings

    rows = list(Memory.objects.filter(pk__in=memory_ids).values_list("id", "content"))
    if not rows:
        return
    if conflict := dimension_conflict():
        logger.warning("Memories %s not embedded: %s", memory_ids, conflict)
        return
    store_embeddings(rows, get_provider())


def ensure_embeddings(verbosity: int = 1, **kwargs: Any) -> None:
    """After migrate: fetch the model2vec model once (``auto``), and when the embedding model
    in use changed (another dimension, or vectors from another model), re-embed at once if
    there are MEMORY_EMBEDDING_AUTO_REBUILD_MAX memories or fewer; more are left to
    ``embed_memories --rebuild``, which is logged (and /healthz reports the conflict).

    Only for the providers that run here (auto, model2vec, onnx, local): an API is not
    called from migrate. Failures are logged, never raised: migrate goes on.
    """
    from django.core.management import call_command

    from search.embeddings import (
        EMBEDDED_TABLES,
        FIX_COMMAND,
        column_dimensions,
        download_if_missing,
        get_provider,
    )

    if settings.MEMORY_EMBEDDING_PROVIDER not in ("auto", "model2vec", "onnx", "local"):
        return
    download_if_missing()
    provider = get_provider()
    stored = column_dimensions()
    if stored is None:
        return
    resize = stored != provider.dimensions
    tables = EMBEDDED_TABLES.values()
    if not resize and not any(
        embedded.missing(provider.model_name).exists() for embedded in tables
    ):
        return
    # Memories and the other embedded rows (messages).
    count = sum(embedded.embeddable().count() for embedded in tables)
    if count > settings.MEMORY_EMBEDDING_AUTO_REBUILD_MAX:
        logger.warning(
            "The embedding model is now %s; %s memories are too many to re-embed during "
            "migrate. Run: %s",
            provider.model_name,
            count,
            FIX_COMMAND if resize else "python manage.py embed_memories",
        )
        return
    try:
        call_command("embed_memories", rebuild=resize, verbosity=0)
    except Exception as exc:
        logger.warning("Memories not re-embedded with %s: %s", provider.model_name, exc)
        return
    if count and verbosity:
        logger.info("Re-embedded %s memories with %s", count, provider.model_name)


def heartbeat() -> None:
    WorkerHeartbeat.objects.update_or_create(name="default", defaults={"beat_at": timezone.now()})


def forget_memories() -> dict[str, Any]:
    """The daily forgetting pass (see memories.forgetting)."""
    from memories.forgetting import forget

    return forget().counts


def purge_trash() -> int:
    """Delete for good the memories in the trash more than MEMORY_TRASH_DAYS days."""
    from memories.purge import purge_old_trash

    return purge_old_trash(settings.MEMORY_TRASH_DAYS)


def next_daily_run(hour: int, now: datetime | None = None) -> datetime:
    now = now or timezone.now()
    today = datetime.combine(now.date(), time(hour), tzinfo=UTC)
    return today if today > now else today + timedelta(days=1)


def ensure_schedules(**kwargs: Any) -> None:
    from django_q.models import Schedule

    for name, (func, when) in SCHEDULES.items():
        if isinstance(when, Every):
            Schedule.objects.update_or_create(
                name=name,
                defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": when.minutes},
            )
        else:
            # The next run is set once; a later migrate keeps the day's rhythm.
            Schedule.objects.update_or_create(
                name=name,
                defaults={"func": func, "schedule_type": Schedule.DAILY},
                create_defaults={
                    "func": func,
                    "schedule_type": Schedule.DAILY,
                    "next_run": next_daily_run(when.hour),
                },
            )
