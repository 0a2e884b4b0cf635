"""Run the web server and the django-q2 worker together, for development and demos.

Ctrl-C stops both; the embedded PostgreSQL stops when the last process using it
has exited (see config/database.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the web server and the job worker together (Ctrl-C stops both)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--noreload", action="store_true", help="Do not restart on code changes."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # runserver's autoreloader runs this command again in a child process
        # (RUN_MAIN=true); only the first one starts the worker.
        is_reloader_child = os.environ.get("RUN_MAIN") == "true"
        worker = None
        if not is_reloader_child:
            worker = subprocess.Popen(
                [sys.executable, str(settings.BASE_DIR / "manage.py"), "qcluster"]
            )
            host_port = options["addrport"]
            self.stdout.write(
                self.style.SUCCESS(
                    f"memoryapp is running at http://{host_port}/  (Ctrl-C stops it)"
                )
            )
        try:
            call_command("runserver", options["addrport"], use_reloader=not options["noreload"])
        except KeyboardInterrupt:
            pass
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()
