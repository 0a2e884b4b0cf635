from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from memories.models import ForgettingReport, Memory, MemoryEvent, Status, WorkerHeartbeat
from memories.services import memory_reject, memory_review_accept

SHORT_CONTENT_CHARS = 60


class MemoryEventInline(admin.TabularInline):
    model = MemoryEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created_at", "action", "actor", "actor_label", "before", "after")

    def has_add_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        return False


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    # Few, narrow columns: the list fits a laptop screen without scrolling sideways.
    list_display = [
        "short_content",
        "kind",
        "scope",
        "owner",
        "project",
        "status",
        "pinned",
        "created",
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

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: Memory) -> str:
        return obj.created_at.date().isoformat()

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return Truncator(" ".join(obj.content.split())).chars(SHORT_CONTENT_CHARS)

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


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["name", "beat_at"]


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
