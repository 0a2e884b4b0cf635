from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    # allauth's app (email addresses) is "Accounts" in the admin; this one must not be.
    verbose_name = _("Memory settings and API tokens")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import signals  # noqa: F401
