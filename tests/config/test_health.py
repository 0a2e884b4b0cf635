from __future__ import annotations

import time
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from memories.jobs import heartbeat
from memories.models import WorkerHeartbeat
from tests.conftest import client_for, make_user
from tests.recall_helpers import ApiClient


@pytest.fixture(autouse=True)
def started_long_ago(monkeypatch: pytest.MonkeyPatch) -> None:
    """The web process started long before: a missing heartbeat is no longer "starting"."""
    monkeypatch.setattr("config.health.STARTED_AT", time.monotonic() - 3600)


@pytest.mark.django_db
def test_starting_until_the_first_heartbeat_is_due(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("config.health.STARTED_AT", time.monotonic() - 5)
    # A previous run's heartbeat, or none: the worker of this run has not beaten yet.
    WorkerHeartbeat.objects.create(name="default", beat_at=timezone.now() - timedelta(hours=1))
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "starting"
    assert response.json()["worker"] == {"ok": False, "code": "starting"}


@pytest.mark.django_db
def test_unhealthy_until_a_worker_has_beaten() -> None:
    response = client_for(make_user("ops@example.com", is_staff=True)).get("/healthz")
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


PG_ERROR = 'connection to server on socket "/srv/app/var/pg/.s.PGSQL.5432" failed: No such file'


def _database_down() -> Any:
    from django.db import OperationalError, connection

    return mock.patch.object(connection, "cursor", side_effect=OperationalError(PG_ERROR))


@pytest.mark.django_db
def test_anonymous_callers_see_states_without_details() -> None:
    with _database_down():
        response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert "/srv/app" not in response.content.decode()
    assert body["status"] == "unhealthy"
    assert body["database"] == {"ok": False}
    assert set(body) == {"status", "database", "pgvector", "worker", "embeddings"}
    assert all(set(check) <= {"ok", "code"} for name, check in body.items() if name != "status")


@pytest.mark.django_db
def test_staff_see_the_details() -> None:
    staff = make_user("ops@example.com", is_staff=True)
    response = client_for(staff).get("/healthz")
    assert response.json()["worker"]["error"] == "no worker has run yet"
    assert "version" in response.json()["pgvector"]


@pytest.mark.django_db
def test_the_api_answers_503_with_retry_after_when_the_database_is_down(alice: Any) -> None:
    api = ApiClient(alice)
    with _database_down():
        response = api.get("/memories")
    assert response.status_code == 503
    assert response["Retry-After"]
    error = response.json()["error"]
    assert error["code"] == "SERVICE_UNAVAILABLE"
    assert "/srv/app" not in response.content.decode()


@pytest.mark.django_db
def test_healthz_tries_the_database_once_when_it_is_down() -> None:
    """Issue 42, item 4: each check waited for a connection (the pool's timeout) in turn."""
    staff = client_for(make_user("ops@example.com", is_staff=True))
    with _database_down() as cursor:
        response = Client().get("/healthz")
        assert cursor.call_count == 1
        assert staff.get("/healthz").json() == response.json()
    assert response.status_code == 503
    assert {name: check["ok"] for name, check in response.json().items() if name != "status"} == {
        "database": False,
        "pgvector": False,
        "worker": False,
        "embeddings": False,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/settings/memories", "/"])
def test_pages_answer_503_with_retry_after_when_the_database_is_down(
    alice: Any, path: str, settings: Any
) -> None:
    settings.DEBUG = False
    browser = client_for(alice)
    browser.raise_request_exception = False
    with _database_down():
        response = browser.get(path)
    assert response.status_code == 503
    assert response["Retry-After"]
    assert "Unavailable for a moment" in response.content.decode()
    assert "/srv/app" not in response.content.decode()


def test_a_request_waits_under_a_second_for_a_pooled_connection() -> None:
    """Issue 42, item 5: requests waited 10 s for a connection under load; now the wait is
    short (DB_POOL_TIMEOUT) and the answer a 503 the client may retry after a second."""
    from config.database import POOL_VARIABLE, connection_reuse

    assert connection_reuse({POOL_VARIABLE: "on"})["OPTIONS"]["pool"]["timeout"] <= 0.5
    custom = connection_reuse({POOL_VARIABLE: "on", "DB_POOL_TIMEOUT": "2"})
    assert custom["OPTIONS"]["pool"]["timeout"] == 2


class _FullPool:
    def get_stats(self) -> dict[str, int]:
        return {"pool_max": 20, "pool_size": 20, "pool_available": 0}


@pytest.mark.django_db
def test_a_full_pool_answers_503_busy_with_a_short_retry_after(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError, connection, connections
    from psycopg_pool import PoolTimeout

    api = ApiClient(alice)
    busy = OperationalError("couldn't get a connection after 0.50 sec")
    busy.__cause__ = PoolTimeout("couldn't get a connection after 0.50 sec")
    wrapper = type(connections["default"])
    monkeypatch.setattr(wrapper, "pool", property(lambda self: _FullPool()))
    with mock.patch.object(connection, "cursor", side_effect=busy):
        response = api.get("/memories")
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert "busy" in response.json()["error"]["message"]
