"""ASGI entry point: `uvicorn config.asgi:application` (what `make run` and production use).

Pages and /api/v1/ are Django's; /mcp (the MCP server) and /v1/ (the OpenAI-compatible
memory proxy) are served beside it (config/routing.py).
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

from config.database import POOL_VARIABLE, start_embedded_servers
from config.gc_tuning import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Each request runs in a thread of its own here: connections come from a pool.
os.environ.setdefault(POOL_VARIABLE, "true")
django_application = get_asgi_application()

from config.routing import build_application  # noqa: E402 (needs the apps loaded)

application = build_application(django_application)

# The web server's process starts (or attaches to) the embedded PostgreSQL at once rather
# than on its first request.
start_embedded_servers()
freeze_startup_objects()
