from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = _("Conversations")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        register_messages()
        register_kind_reading()


def register_kind_reading() -> None:
    """A memory added by hand with "Choose for me" gets the kind extraction would read."""
    from memories.kinds import register_kind_guesser

    register_kind_guesser(kind_of_statement)


def kind_of_statement(text: str) -> str | None:
    """The kind the rules extractor reads in ``text`` ("I prefer…": a preference)."""
    from conversations.extraction.rules import candidate_from_sentence

    candidate = candidate_from_sentence(" ".join(text.split()), message_ids=[])
    return candidate.kind if candidate else None


def register_messages() -> None:
    """The messages of conversations that are not temporary are embedded
    (``search.embeddings.EmbeddedTable``): their speaker's name and text."""
    from conversations.models import Message
    from search.embeddings import EmbeddedTable, register_embedded

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
