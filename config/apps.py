from __future__ import annotations

from django.apps import AppConfig


class ConfigConfig(AppConfig):
    name = "config"
    verbose_name = "Configuration"
    default_auto_field = "django.db.models.BigAutoField"
