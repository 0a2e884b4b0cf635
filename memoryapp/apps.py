from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MemoryappConfig(AppConfig):
    name = "memoryapp"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        from memoryapp import checks  # noqa: F401  (registers the system checks)
        from memoryapp.embeddings import reset_caches
        from memoryapp.jobs import ensure_schedules

        post_migrate.connect(ensure_schedules, sender=self)
        setting_changed.connect(reset_caches)
