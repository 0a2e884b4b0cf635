"""django-q2 tasks of conversations."""

from __future__ import annotations


def extract_conversation(run_id: int) -> str:
    """One extraction run (see conversations.extraction.runs); returns its final status.

    A failed run returns "failed" rather than raising: its retry is already scheduled with
    the app's backoff, and a task that raised would also be delivered again by django-q2.
    """
    from conversations.extraction.runs import execute_run

    return str(execute_run(run_id).status)


def reclaim_extraction_runs() -> int:
    """Every minute: run again the extraction runs whose worker died; how many."""
    from conversations.extraction.runs import reclaim_dead_runs

    return len(reclaim_dead_runs())


def purge_messages() -> int:
    """The daily retention pass: messages older than MEMORY_MESSAGE_RETENTION_DAYS go (0 keeps
    them), and a temporary conversation's after 24 hours."""
    from django.conf import settings

    from conversations.services import purge_old_messages

    return purge_old_messages(settings.MEMORY_MESSAGE_RETENTION_DAYS)


def embed_messages(message_ids: list[int]) -> int:
    """Embed newly stored messages for episodic recall, in batches (MEMORY_EMBEDDING_BATCH_SIZE).

    As ``memories.jobs.embed_memories``: a provider's failure raises, so django-q2 retries;
    the messages are found by keyword meanwhile. A temporary conversation's are skipped.
    """
    import logging

    from django.conf import settings

    from conversations.apps import message_texts
    from conversations.models import Message
    from search.embeddings import dimension_conflict, get_provider, store_embeddings

    if conflict := dimension_conflict():
        logging.getLogger(__name__).warning("Messages not embedded: %s", conflict)
        return 0
    provider = get_provider()
    ids = list(
        Message.objects.searchable()
        .filter(pk__in=message_ids)
        .exclude(embedding_model=provider.model_name)
        .order_by("id")
        .values_list("id", flat=True)
    )
    batch = max(1, settings.MEMORY_EMBEDDING_BATCH_SIZE)
    stored = 0
    for start in range(0, len(ids), batch):
        rows = message_texts(ids[start : start + batch])
        stored += store_embeddings(
            rows, provider, table=Message._meta.db_table, unchanged_column=None
        )
    return stored
