"""Django's PostgreSQL backend that starts (or attaches to) the embedded server when it first
connects, so that importing the settings starts nothing (see config/database.py)."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        if self.settings_dict.get("EMBEDDED"):
            from config.database import ensure_embedded

            running = ensure_embedded(self.settings_dict)
            # The dict is settings.DATABASES' own, so the address shows there too.
            self.settings_dict["HOST"], self.settings_dict["PORT"] = running.host, running.port
        return super().get_connection_params()
