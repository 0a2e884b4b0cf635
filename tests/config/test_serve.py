"""`manage.py serve` (make run): Ctrl-C stops the embedded PostgreSQL too (issue 44 item 4)."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command

from config import embedded_postgres


class FinishedProcess:
    """The web server or the worker, already stopped (as after Ctrl-C)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def terminate(self) -> None:
        pass


@pytest.mark.skipif(
    not settings.DATABASES["default"].get("EMBEDDED"), reason="the embedded server only"
)
def test_serve_drops_the_dead_reload_child_so_its_exit_stops_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pgdata = Path(settings.DATABASES["default"]["EMBEDDED"]["PGDATA"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    before = embedded_postgres.registered_processes(pgdata)
    embedded_postgres.set_registered_processes(pgdata, [*before, dead.pid])
    monkeypatch.setattr("config.management.commands.serve.subprocess.Popen", FinishedProcess)
    handler = signal.getsignal(signal.SIGTERM)
    try:
        call_command("serve", "127.0.0.1:8999", "--noreload")
    finally:
        signal.signal(signal.SIGTERM, handler)
        left = embedded_postgres.registered_processes(pgdata)
        embedded_postgres.set_registered_processes(pgdata, [p for p in left if p != dead.pid])
    assert dead.pid not in left
