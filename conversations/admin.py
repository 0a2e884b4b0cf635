from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from conversations.extraction.runs import enqueue_run
from conversations.models import Conversation, ExtractionRun, Message, RunStatus


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ["position", "role", "content", "external_id", "sent_at"]


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "owner",
        "project",
        "temporary",
        "extracted_through",
        "ended_at",
        "created_at",
    ]
    list_filter = ["temporary", ("ended_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["title", "external_id", "owner__email"]
    raw_id_fields = ["owner", "project"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["conversation", "position", "role", "short_content", "sent_at"]
    list_filter = ["role"]
    search_fields = ["content", "external_id", "conversation__title"]
    raw_id_fields = ["conversation"]

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:80]


@admin.register(ExtractionRun)
class ExtractionRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "conversation",
        "trigger",
        "extractor",
        "status",
        "skip_reason",
        "candidates",
        "created",
        "merged",
        "superseded",
        "dropped_sensitive",
        "attempts",
        "duration_ms",
        "created_at",
    ]
    list_filter = ["status", "trigger", "extractor", "created_at"]
    search_fields = ["conversation__title", "conversation__external_id", "error", "skip_reason"]
    raw_id_fields = ["conversation"]
    list_select_related = ["conversation"]
    readonly_fields = [field.name for field in ExtractionRun._meta.fields]
    actions = ["retry_failed"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Retry selected failed runs now")
    def retry_failed(self, request: HttpRequest, queryset: QuerySet[ExtractionRun]) -> None:
        failed = list(queryset.filter(status=RunStatus.FAILED).values_list("pk", flat=True))
        for run_id in failed:
            enqueue_run(run_id)
        self.message_user(request, f"{len(failed)} runs queued again.", messages.SUCCESS)
