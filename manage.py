#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

from __future__ import annotations

import os
import sys

# Long-lived commands start the embedded PostgreSQL (if used) at once, so that it belongs to
# the process that outlives its forked workers and reloaded children. Others start it when
# they first connect, and those that never do (help, check, makemigrations --dry-run…) not.
START_DATABASE_FOR = {"runserver", "serve", "qcluster"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    if len(sys.argv) > 1 and sys.argv[1] in START_DATABASE_FOR:
        from config.database import start_embedded_servers

        start_embedded_servers()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
