"""django-q2 tasks and the schedules the app creates for itself."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from memoryapp.models import WorkerHeartbeat

# Schedules created (or corrected) after every migrate: name -> (function, minutes).
SCHEDULES: dict[str, tuple[str, int]] = {
    "worker heartbeat": ("memoryapp.jobs.heartbeat", 1),
}


def heartbeat() -> None:
    WorkerHeartbeat.objects.update_or_create(name="default", defaults={"beat_at": timezone.now()})


def ensure_schedules(**kwargs: Any) -> None:
    from django_q.models import Schedule

    for name, (func, minutes) in SCHEDULES.items():
        Schedule.objects.update_or_create(
            name=name,
            defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": minutes},
        )
