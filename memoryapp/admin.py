from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from memoryapp.extraction.runs import enqueue_run
from memoryapp.models import (
    Conversation,
    ExtractionRun,
    ForgettingReport,
    Memory,
    MemoryEvent,
    Message,
    RunStatus,
    Status,
    WorkerHeartbeat,
)
from memoryapp.services import memory_reject, memory_review_accept


class MemoryEventInline(admin.TabularInline):
    model = MemoryEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created_at", "action", "actor", "actor_label", "before", "after")

    def has_add_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        return False


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = [
        "short_content",
        "kind",
        "scope",
        "owner",
        "project",
        "status",
        "pinned",
        "importance",
        "confidence",
        "access_count",
        "created_at",
    ]
    list_filter = [
        "status",
        "kind",
        "scope",
        "origin",
        "pinned",
        ("deleted_at", admin.EmptyFieldListFilter),
        ("forgotten_at", admin.EmptyFieldListFilter),
        ("valid_until", admin.EmptyFieldListFilter),
        "project",
    ]
    search_fields = ["content", "tags", "owner__email"]
    raw_id_fields = ["owner", "project", "conversation", "superseded_by"]
    readonly_fields = [
        "revision",
        "created_at",
        "updated_at",
        "access_count",
        "last_accessed_at",
        "embedding_model",
        "search_document",
    ]
    exclude = ["embedding"]
    date_hierarchy = "created_at"
    list_select_related = ["owner", "project"]
    inlines = [MemoryEventInline]
    actions = ["accept_pending", "reject_pending"]

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return obj.content[:80]

    @admin.action(description="Accept selected pending memories")
    def accept_pending(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        pending = list(queryset.filter(status=Status.PENDING))
        for memory in pending:
            memory_review_accept(memory=memory, actor=request.user)  # type: ignore[arg-type]
        self.message_user(request, f"{len(pending)} accepted.", messages.SUCCESS)

    @admin.action(description="Reject selected pending memories")
    def reject_pending(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        pending = list(queryset.filter(status=Status.PENDING))
        for memory in pending:
            memory_reject(memory=memory, actor=request.user)  # type: ignore[arg-type]
        self.message_user(request, f"{len(pending)} rejected.", messages.SUCCESS)


@admin.register(MemoryEvent)
class MemoryEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "action", "memory", "actor", "actor_label", "batch"]
    list_filter = ["action", "created_at"]
    search_fields = ["memory__content", "actor__email", "actor_label", "batch"]
    raw_id_fields = ["memory", "actor"]
    list_select_related = ["memory", "actor"]


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


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["name", "beat_at"]


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


@admin.register(ForgettingReport)
class ForgettingReportAdmin(admin.ModelAdmin):
    list_display = [
        "run_on",
        "forgotten",
        "importance_lowered",
        "confidence_lowered",
        "duration_ms",
    ]
    readonly_fields = ["run_on", "counts", "duration_ms", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def _total(self, report: ForgettingReport, outcome: str) -> int:
        return int(report.counts.get("total", {}).get(outcome, 0))

    @admin.display(description="forgotten")
    def forgotten(self, report: ForgettingReport) -> int:
        return self._total(report, "forgotten")

    @admin.display(description="importance lowered")
    def importance_lowered(self, report: ForgettingReport) -> int:
        return self._total(report, "importance_lowered")

    @admin.display(description="confidence lowered")
    def confidence_lowered(self, report: ForgettingReport) -> int:
        return self._total(report, "confidence_lowered")
