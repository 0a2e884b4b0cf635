from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from memories.models import WorkerHeartbeat
from search.embeddings import embedding_status


def _database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True}
    except Exception as exc:
        return {"ok": False, "error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}


def _pgvector() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except Exception:
        return {"ok": False, "error": "database unavailable"}
    if row is None:
        return {
            "ok": False,
            "error": "the vector extension is not installed; run manage.py migrate",
        }
    return {"ok": True, "version": row[0]}


# When this process started serving (the app loads at start): until a worker's first heartbeat
# is due, no heartbeat (or a previous run's) means the worker is starting, not down.
STARTED_AT = time.monotonic()


def _starting() -> bool:
    return time.monotonic() - STARTED_AT < settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS


def _worker() -> dict[str, Any]:
    try:
        beat = WorkerHeartbeat.objects.filter(name="default").first()
    except Exception:
        return {"ok": False, "last_heartbeat": None, "error": "database unavailable"}
    if beat is None:
        return {"ok": False, "last_heartbeat": None, "error": "no worker has run yet"}
    age = (timezone.now() - beat.beat_at).total_seconds()
    return {
        "ok": age <= settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS,
        "last_heartbeat": beat.beat_at.isoformat(),
        "age_seconds": round(age, 1),
    }


def _embeddings() -> dict[str, Any]:
    try:
        return embedding_status()
    except DatabaseError:
        return {"ok": False, "error": "database unavailable"}


# What anonymous callers see of each component: its state and stable code, never error
# text (which may name sockets, hosts or versions).
PUBLIC_KEYS = ("ok", "code")


def _is_staff(request: HttpRequest) -> bool:
    """Whether the caller is staff; False when that cannot be read (the database is down)."""
    try:
        return bool(request.user.is_authenticated and request.user.is_staff)
    except Exception:
        return False


# What the checks that need the database say when it is unreachable: they are not tried, so
# that /healthz answers after one wait for a connection, not one per check.
DATABASE_UNAVAILABLE = {"ok": False, "error": "database unavailable"}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Each component's state; its details (versions, errors, which may name sockets or
    hosts) only for staff. "starting" (200) while the worker's first heartbeat is not due yet:
    pages and the API work, jobs wait for it."""
    database = _database()
    if database["ok"]:
        checks = {
            "database": database,
            "pgvector": _pgvector(),
            "worker": _worker(),
            "embeddings": _embeddings(),
        }
    else:
        checks = {
            "database": database,
            "pgvector": DATABASE_UNAVAILABLE,
            "worker": {**DATABASE_UNAVAILABLE, "last_heartbeat": None},
            "embeddings": DATABASE_UNAVAILABLE,
        }
    healthy = all(check["ok"] for check in checks.values())
    others_healthy = all(check["ok"] for name, check in checks.items() if name != "worker")
    starting = not healthy and others_healthy and _starting()
    if starting:
        checks["worker"]["code"] = "starting"
    # Who is asking is read from the database too.
    if not (database["ok"] and _is_staff(request)):
        checks = {
            name: {key: check[key] for key in PUBLIC_KEYS if key in check}
            for name, check in checks.items()
        }
    status = "ok" if healthy else "starting" if starting else "unhealthy"
    return JsonResponse({"status": status, **checks}, status=200 if healthy or starting else 503)
