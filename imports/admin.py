from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from imports.models import Import


@admin.register(Import)
class ImportAdmin(admin.ModelAdmin):
    """Imports as they went, to read: people make and undo them on /settings/data."""

    list_display = [
        "__str__",
        "owner",
        "file_name",
        "phase",
        "conversations_stored",
        "messages_stored",
        "messages_extracted",
        "memories_created",
        "error_code",
        "created_at",
        "finished_at",
    ]
    list_filter = ["source", "status", "created_at"]
    search_fields = ["owner__email", "file_name"]
    raw_id_fields = ["owner"]
    exclude = ["conversations"]
    readonly_fields = [
        field.name for field in Import._meta.concrete_fields if field.name not in ("id",)
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
