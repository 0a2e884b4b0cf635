from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TeamsConfig(AppConfig):
    name = "teams"
    verbose_name = _("Teams and projects")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import hooks
        from teams.permissions import projects_readable_by

        # A token's project limit offers the projects its user may read.
        hooks.readable_projects = projects_readable_by
