from __future__ import annotations

from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    verbose_name = "Imports"
    default_auto_field = "django.db.models.BigAutoField"
