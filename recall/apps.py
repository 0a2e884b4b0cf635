from __future__ import annotations

from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "recall"
    verbose_name = "Recall"
    default_auto_field = "django.db.models.BigAutoField"
