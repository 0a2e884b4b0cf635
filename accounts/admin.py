from __future__ import annotations

from django.contrib import admin

from accounts.models import ApiToken, Membership, MemorySettings, Project, Team


@admin.register(MemorySettings)
class MemorySettingsAdmin(admin.ModelAdmin):
    list_display = ["user", "memory_enabled", "auto_extract", "review_extracted", "show_citations"]
    list_filter = ["memory_enabled", "auto_extract", "review_extracted", "show_citations"]
    search_fields = ["user__email", "user__username"]
    raw_id_fields = ["user"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "token_prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["name", "user__email", "token_prefix"]
    readonly_fields = ["token_prefix", "token_hash", "created_at", "last_used_at"]
    raw_id_fields = ["user"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


class ProjectInline(admin.TabularInline):
    model = Project
    extra = 0
    fields = ["name", "slug", "archived_at"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, ProjectInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "role", "created_at"]
    list_filter = ["role", "team"]
    search_fields = ["user__email", "team__name"]
    raw_id_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "slug", "archived_at", "created_at"]
    list_filter = ["team", ("archived_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "slug", "team__name"]
    prepopulated_fields = {"slug": ["name"]}
