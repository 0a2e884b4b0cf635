from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memories.jobs import heartbeat
from memories.models import WorkerHeartbeat


@pytest.mark.django_db
def test_unhealthy_until_a_worker_has_beaten() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"]["ok"] and body["pgvector"]["ok"]
    assert body["worker"] == {"ok": False, "last_heartbeat": None, "error": "no worker has run yet"}


@pytest.mark.django_db
def test_healthy_with_a_recent_heartbeat_and_not_with_a_stale_one() -> None:
    heartbeat()
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    WorkerHeartbeat.objects.update(beat_at=timezone.now() - timedelta(hours=1))
    assert Client().get("/healthz").status_code == 503


@pytest.mark.django_db
def test_migrate_created_the_heartbeat_schedule() -> None:
    from django_q.models import Schedule

    schedule = Schedule.objects.get(name="worker heartbeat")
    assert schedule.func == "memories.jobs.heartbeat"
