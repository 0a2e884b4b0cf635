from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

from config.database import start_embedded_servers

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()

# The web server's process starts (or attaches to) the embedded PostgreSQL at once rather
# than on its first request.
start_embedded_servers()
