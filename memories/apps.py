from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class MemoriesConfig(AppConfig):
    name = "memories"
    # The label of the days when one app held everything: the memory tables, their
    # migration history and content types are recorded under it, so it stays.
    label = "memoryapp"
    verbose_name = _("Memories")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        from memories import checks  # noqa: F401  (registers the system checks)
        from memories.jobs import ensure_embeddings, ensure_schedules
        from search.embeddings import reset_caches

        register_memories()
        post_migrate.connect(ensure_schedules, sender=self)
        post_migrate.connect(ensure_embeddings, sender=self)
        setting_changed.connect(reset_caches)


def register_memories() -> None:
    """Memories are embedded (``embeddings.EmbeddedTable``): their content."""
    from memories.models import Memory
    from search.embeddings import EmbeddedTable, register_embedded

    def texts(ids: Sequence[int]) -> list[tuple[int, str]]:
        rows = Memory.objects.filter(id__in=list(ids)).order_by("id")
        return list(rows.values_list("id", "content"))

    register_embedded(
        EmbeddedTable("memories", Memory, Memory.objects.all, texts, unchanged_column="content")
    )
