from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from memoryapp.models import Conversation, Memory, MemoryEvent, Message, WorkerHeartbeat


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

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return obj.content[:80]


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
