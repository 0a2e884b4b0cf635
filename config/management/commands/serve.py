"""Run the web server and the django-q2 worker together, for development and demos.

The web server is uvicorn serving config.asgi (pages, /api/v1/, /mcp and the /v1/
proxy: one process type), restarting on code changes unless --noreload. Ctrl-C stops
both; the embedded PostgreSQL stops when the last process using it has exited (see
config/database.py).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


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
        # uvicorn re-raises the SIGTERM it caught once it has stopped: as Ctrl-C, it lets
        # the worker be stopped below instead of killing this process outright.
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            uvicorn.run(
                "config.asgi:application",
                host=host,
                port=int(port),
                lifespan="on",
                reload=not options["noreload"],
                reload_dirs=[str(settings.BASE_DIR)],
                log_level="info",
            )
        except KeyboardInterrupt:
            pass
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
