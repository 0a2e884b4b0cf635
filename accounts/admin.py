from __future__ import annotations

from django.contrib import admin

from accounts.models import ApiToken, MemorySettings


@admin.register(MemorySettings)
class MemorySettingsAdmin(admin.ModelAdmin):
    list_display = [
        "user",
        "memory_enabled",
        "auto_extract",
        "review_extracted",
        "show_citations",
        "reference_past_conversations",
        "paused_until",
        "paused_indefinitely",
    ]
    list_filter = ["memory_enabled", "auto_extract", "review_extracted", "show_citations"]
    search_fields = ["user__email", "user__username"]
    raw_id_fields = ["user"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "user",
        "token_prefix",
        "scopes",
        "limit",
        "created_at",
        "last_used_at",
        "expires_at",
        "paused_at",
        "revoked_at",
    ]
    list_filter = [
        ("revoked_at", admin.EmptyFieldListFilter),
        ("paused_at", admin.EmptyFieldListFilter),
        "limit",
        "created_at",
    ]
    search_fields = ["name", "user__email", "token_prefix"]
    readonly_fields = ["token_prefix", "token_hash", "created_at", "last_used_at"]
    raw_id_fields = ["user", "limit_project"]
