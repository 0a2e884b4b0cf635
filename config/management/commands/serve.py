"""Run the web server and the django-q2 worker together, for development and demos.

The web server is uvicorn serving config.asgi (pages, /api/v1/, /mcp and the /v1/
proxy: one process type), restarting on code changes unless --noreload. Ctrl-C stops
both, then the embedded PostgreSQL, which stops when the last process using it exits
(config/embedded_postgres.py): the dead ones are dropped from its list first.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config.database import forget_dead_users_of_embedded_servers


class Command(BaseCommand):
    help = "Run the web server and the job worker together (Ctrl-C stops both)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--noreload", action="store_true", help="Do not restart on code changes."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        host, _, port = options["addrport"].rpartition(":")
        host = host or "127.0.0.1"
        worker = subprocess.Popen(
            [sys.executable, str(settings.BASE_DIR / "manage.py"), "qcluster"]
        )
        self.stdout.write(
            self.style.SUCCESS(f"memoryapp is running at http://{host}:{port}/  (Ctrl-C stops it)")
        )
        # The web server runs in a process of its own, as in production: config.asgi sets up
        # its connection pool before the settings load (this process loaded them already).
        command = [sys.executable, "-m", "uvicorn", "config.asgi:application"]
        command += ["--host", host, "--port", port, "--lifespan", "on"]
        if not options["noreload"]:
            command += ["--reload", "--reload-dir", str(settings.BASE_DIR)]
        web = subprocess.Popen(command, cwd=settings.BASE_DIR)
        # SIGTERM stops both, as Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            web.wait()
        except KeyboardInterrupt:
            pass
        finally:
            for process in (web, worker):
                process.terminate()
            for process in (web, worker):
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
            # uvicorn's reloaded child dies on Ctrl-C without detaching from the embedded
            # PostgreSQL; still listed, it would keep the server running after this exit.
            forget_dead_users_of_embedded_servers()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
