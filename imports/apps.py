from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_delete
from django.utils.translation import gettext_lazy as _


class ImportsConfig(AppConfig):
    name = "imports"
    verbose_name = _("Imports")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from imports.models import Import

        post_delete.connect(remove_files, sender=Import, dispatch_uid="imports-remove-files")


def remove_files(sender: Any, instance: Any, **kwargs: Any) -> None:
    """An import's files go with it, however it is deleted (discarded, its owner erased)."""
    import shutil

    from django.db import transaction

    from imports.services import import_dir

    directory = import_dir(instance)
    transaction.on_commit(lambda: shutil.rmtree(directory, ignore_errors=True))
