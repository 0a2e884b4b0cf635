"""django-q2 tasks of conversations."""

from __future__ import annotations


def extract_conversation(run_id: int) -> str:
    """One extraction run (see conversations.extraction.runs); returns its final status.

    A failed run returns "failed" rather than raising: its retry is already scheduled with
    the app's backoff, and a task that raised would also be delivered again by django-q2.
    """
    from conversations.extraction.runs import execute_run

    return str(execute_run(run_id).status)
