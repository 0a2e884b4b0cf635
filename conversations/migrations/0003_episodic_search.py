"""Episodic recall: messages become searchable beside memories.

- search_document / search_vector as Memory's (a trigger sets the vector whenever the
  document is written), with a GIN index; existing messages of conversations that are not
  temporary get their document here.
- embedding / embedding_model as Memory's, with an HNSW index. The column takes the
  dimension the memory column has now (``embed_memories --rebuild`` may have changed it
  from the setting's), so one query vector fits both; the vectors themselves are made by
  ``embed_memories`` (run after migrate when the table is small, ``memories.jobs``).
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import pgvector.django.indexes
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models

from search.textsearch import SEARCH_CONFIG, search_document

SEARCH_VECTOR_TRIGGER = f"""
CREATE FUNCTION memoryapp_message_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector := to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(NEW.search_document, ''));
    RETURN NEW;
END
$$;
CREATE TRIGGER message_search_vector
    BEFORE INSERT OR UPDATE OF search_document, search_vector ON memoryapp_message
    FOR EACH ROW EXECUTE FUNCTION memoryapp_message_search_vector();
"""

DROP_SEARCH_VECTOR_TRIGGER = """
DROP TRIGGER message_search_vector ON memoryapp_message;
DROP FUNCTION memoryapp_message_search_vector();
"""

# The memory column's dimension, when it differs from the setting's.
MATCH_MEMORY_DIMENSION = """
DO $$
DECLARE stored int;
BEGIN
    SELECT atttypmod INTO stored FROM pg_attribute
    WHERE attrelid = to_regclass('memoryapp_memory') AND attname = 'embedding';
    IF stored IS NOT NULL AND stored > 0 THEN
        EXECUTE format('ALTER TABLE memoryapp_message ALTER COLUMN embedding TYPE vector(%s)', stored);
    END IF;
END
$$;
"""

BATCH = 2000


def fill_search_documents(apps, schema_editor):
    Message = apps.get_model("conversations", "Message")
    messages = (
        Message.objects.filter(conversation__temporary=False)
        .select_related("conversation")
        .order_by("id")
    )
    last = 0
    while True:
        batch = list(messages.filter(id__gt=last)[:BATCH])
        if not batch:
            return
        for message in batch:
            name = message.speaker or next(
                (
                    str(p.get("name") or "")
                    for p in message.conversation.participants or []
                    if isinstance(p, dict) and p.get("role") == message.role
                ),
                "",
            )
            text = f"{name}: {message.content}" if name else message.content
            message.search_document = search_document(text)
        Message.objects.bulk_update(batch, ["search_document"])
        last = batch[-1].id


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0002_participants"),
        ("memoryapp", "0010_conversations_and_access_log_moved"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="embedding",
            field=pgvector.django.vector.VectorField(
                blank=True, dimensions=settings.MEMORY_EMBEDDING_DIMENSIONS, null=True
            ),
        ),
        migrations.RunSQL(MATCH_MEMORY_DIMENSION, migrations.RunSQL.noop),
        migrations.AddField(
            model_name="message",
            name="embedding_model",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.AddField(
            model_name="message",
            name="search_document",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.AddField(
            model_name="message",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(
                blank=True, editable=False, null=True
            ),
        ),
        migrations.RunSQL(SEARCH_VECTOR_TRIGGER, DROP_SEARCH_VECTOR_TRIGGER),
        migrations.RunPython(fill_search_documents, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="message",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="message_search_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="message",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="message_embedding_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
    ]
