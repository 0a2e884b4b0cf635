from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TeamsConfig(AppConfig):
    name = "teams"
    verbose_name = _("Teams and projects")
    default_auto_field = "django.db.models.BigAutoField"
