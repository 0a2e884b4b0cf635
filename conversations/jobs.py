"""django-q2 tasks of conversations."""

from __future__ import annotations


def extract_conversation(run_id: int) -> str:
    """One extraction run (see conversations.extraction.runs); returns its final status."""
    from conversations.extraction.runs import execute_run

    return str(execute_run(run_id).status)
