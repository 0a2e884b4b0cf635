"""django-q2 tasks of conversations."""

from __future__ import annotations


def extract_conversation(run_id: int) -> str:
    """One extraction run (see conversations.extraction.runs); returns its final status.

    A failed run returns "failed" rather than raising: its retry is already scheduled with
    the app's backoff, and a task that raised would also be delivered again by django-q2.
    """
    from conversations.extraction.runs import execute_run

    return str(execute_run(run_id).status)


def purge_messages() -> int:
    """The daily retention pass: messages older than MEMORY_MESSAGE_RETENTION_DAYS go (0 keeps
    them), and a temporary conversation's after 24 hours."""
    from django.conf import settings

    from conversations.services import purge_old_messages

    return purge_old_messages(settings.MEMORY_MESSAGE_RETENTION_DAYS)
