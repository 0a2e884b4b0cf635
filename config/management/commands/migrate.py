"""Django's migrate, reporting a server without pgvector in one sentence instead of a traceback."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as DjangoMigrate


class Command(DjangoMigrate):
    def handle(self, *args: Any, **options: Any) -> None:
        try:
            super().handle(*args, **options)
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from None
