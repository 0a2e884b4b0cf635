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
    from memories.kinds import register_kind_guesser, register_statement_reader

    register_kind_guesser(kind_of_statement)
    register_statement_reader(subject_of_statement)


def kind_of_statement(text: str) -> str | None:
    """The kind extraction reads in ``text``: its rules' ("I prefer…": a preference), then the
    definitions' (``extraction.kinds``)."""
    from conversations.extraction.kinds import kind_by_definition
    from conversations.extraction.rules import candidate_from_sentence

    text = " ".join(text.split())
    candidate = candidate_from_sentence(text, message_ids=[])
    return kind_by_definition(text, candidate.kind if candidate else "fact")


def subject_of_statement(text: str) -> tuple[str, str]:
    """(subject, value) extraction reads in ``text``, so a memory added by hand replaces what
    it replaces ("我住在上海" → ("user:location", "上海"))."""
    from conversations.extraction.rules import statement_subject

    return statement_subject(" ".join(text.split()))


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
