from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RecallConfig(AppConfig):
    name = "recall"
    verbose_name = _("Recall")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memories.signals import memories_purged
        from recall.receivers import forget_purged_memories

        memories_purged.connect(forget_purged_memories, dispatch_uid="recall-forget-purged")
