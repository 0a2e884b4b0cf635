from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

from config.database import start_embedded_servers
from config.gc_tuning import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# The web server's process starts (or attaches to) the embedded PostgreSQL at once rather
# than on its first request.
start_embedded_servers()
freeze_startup_objects()
