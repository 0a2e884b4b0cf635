from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        register_messages()


def register_messages() -> None:
    """The messages of conversations that are not temporary are embedded
    (``memories.embeddings.EmbeddedTable``): their speaker's name and text."""
    from conversations.models import Message
    from memories.embeddings import EmbeddedTable, register_embedded

    register_embedded(EmbeddedTable("messages", Message, Message.objects.searchable, message_texts))


def message_texts(ids: Sequence[int]) -> list[tuple[int, str]]:
    from conversations.models import Message

    messages = Message.objects.filter(id__in=list(ids)).select_related("conversation")
    return [
        (message.pk, message.embedding_text())
        for message in messages.order_by("id").only(
            "id", "role", "speaker", "content", "conversation__participants"
        )
    ]
