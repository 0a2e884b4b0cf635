from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path
from django.utils.translation import gettext_lazy as _

from api import api
from config import health
from config import views as pages
from conversations.views import conversations, evidence, notices, review
from imports import views as imports
from memories.views import activity, memories, memory_files

# The admin's titles name the product, not Django ("Django 管理").
admin.site.site_header = _("memoryapp administration")
admin.site.site_title = _("memoryapp administration")
admin.site.index_title = _("Everything stored")

urlpatterns = [
    path("", pages.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    # My data: everything of mine as one archive, and erasing my account
    path("settings/data", pages.my_data, name="my-data"),
    path("settings/data/export", pages.my_data_export, name="my-data-export"),
    path("settings/data/erase", pages.my_data_erase, name="my-data-erase"),
    # Imports of ChatGPT and Claude exports and saved memories, shown on My data
    path("settings/data/imports", imports.import_page, name="imports"),
    path("settings/data/imports/<int:import_id>", imports.import_detail, name="import-detail"),
    path("settings/data/imports/<int:import_id>/start", imports.import_start, name="import-start"),
    path("settings/data/imports/<int:import_id>/undo", imports.import_undo, name="import-undo"),
    path(
        "settings/data/imports/<int:import_id>/resume", imports.import_resume, name="import-resume"
    ),
    path(
        "settings/data/imports/<int:import_id>/discard",
        imports.import_discard,
        name="import-discard",
    ),
    # Accounts: allauth's sign-up, log-in, password reset; our settings pages.
    path("accounts/", include("allauth.urls")),
    path("", include("accounts.urls")),
    path("", include("recall.urls")),
    path("", include("teams.urls")),
    # Memory files: Markdown export and import, personal and per project
    path("settings/memories/files", memory_files.files_page, name="memory-files"),
    path("settings/memories/files/export", memory_files.files_export, name="memory-files-export"),
    path(
        "settings/memories/files/preview", memory_files.files_preview, name="memory-files-preview"
    ),
    path(
        "settings/memories/files/confirm", memory_files.files_confirm, name="memory-files-confirm"
    ),
    path("settings/memories/files/undo", memory_files.files_undo, name="memory-files-undo"),
    path("projects/<slug:slug>/files", memory_files.files_page, name="project-files"),
    path(
        "projects/<slug:slug>/files/export", memory_files.files_export, name="project-files-export"
    ),
    path(
        "projects/<slug:slug>/files/preview",
        memory_files.files_preview,
        name="project-files-preview",
    ),
    path(
        "projects/<slug:slug>/files/confirm",
        memory_files.files_confirm,
        name="project-files-confirm",
    ),
    path("projects/<slug:slug>/files/undo", memory_files.files_undo, name="project-files-undo"),
    # Review queue for extracted memories
    path("review/", review.review_list, name="review-list"),
    path("review/bulk", review.review_bulk, name="review-bulk"),
    path("review/<int:memory_id>/accept", review.review_accept, name="review-accept"),
    path("review/<int:memory_id>/edit", review.review_edit, name="review-edit"),
    path("review/<int:memory_id>/reject", review.review_reject, name="review-reject"),
    # "Memory updated" notices of extraction
    path(
        "notices/extraction/<uuid:batch>/undo", notices.notice_undo, name="extraction-notice-undo"
    ),
    path("notices/extraction/dismiss", notices.notice_dismiss, name="extraction-notice-dismiss"),
    # Conversations: what chat applications sent in, and deleting it
    path("settings/conversations", conversations.conversation_list, name="conversation-list"),
    path(
        "settings/conversations/delete-all",
        conversations.conversation_delete_all,
        name="conversation-delete-all",
    ),
    path(
        "settings/conversations/<int:conversation_id>",
        conversations.conversation_detail,
        name="conversation-detail",
    ),
    path(
        "settings/conversations/<int:conversation_id>/delete",
        conversations.conversation_delete,
        name="conversation-delete",
    ),
    # Memories: the settings page and its actions
    path("settings/memories", memories.memory_list, name="memory-list"),
    path("settings/memories/add", memories.memory_add, name="memory-add"),
    path("settings/memories/bulk", memories.memory_bulk, name="memory-bulk"),
    path("settings/memories/clear", memories.memory_clear, name="memory-clear"),
    path("settings/memories/undo", memories.memory_undo, name="memory-undo"),
    path("settings/memories/empty-trash", memories.memory_empty_trash, name="memory-empty-trash"),
    path("settings/memories/settings", memories.memory_settings, name="memory-settings"),
    path("settings/memories/<int:memory_id>/edit", memories.memory_edit, name="memory-edit"),
    path("settings/memories/<int:memory_id>/delete", memories.memory_delete, name="memory-delete"),
    path(
        "settings/memories/<int:memory_id>/restore", memories.memory_restore, name="memory-restore"
    ),
    path("settings/memories/<int:memory_id>/purge", memories.memory_purge, name="memory-purge"),
    path("settings/memories/<int:memory_id>/pin", memories.memory_pin, name="memory-pin"),
    path("settings/memories/<int:memory_id>/review", memories.memory_review, name="memory-review"),
    path(
        "settings/memories/<int:memory_id>/history", memories.memory_history, name="memory-history"
    ),
    path(
        "settings/memories/<int:memory_id>/evidence",
        evidence.memory_evidence,
        name="memory-evidence",
    ),
    # A project's shared memories (their actions are the settings page's) and its activity
    path("projects/<slug:slug>/memories", memories.project_memory_list, name="project-memories"),
    path("projects/<slug:slug>/activity", activity.project_activity, name="project-activity"),
    path("i18n/", include("django.conf.urls.i18n")),
    # JSON API
    path("api/v1/", api.urls),
    re_path(r"^api/v1/.*$", pages.api_not_found, name="api-not-found"),
    path("admin/", admin.site.urls),
]

handler500 = "config.views.server_error"
