from __future__ import annotations

from django.contrib import admin

from teams.models import Membership, Project, Team


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
