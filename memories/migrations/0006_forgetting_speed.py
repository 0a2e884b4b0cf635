"""Faster forgetting and merging: updates that stay on their heap page.

- The forgetting pass's markers (when a memory last faded, last lost confidence)
  move from ``metadata`` to their own columns: ``metadata`` is read by the
  subject indexes, so writing it made every fade a non-HOT update (a new entry in
  each of the table's indexes, the HNSW one included).
- Pages are filled to 90%: the room left lets such updates (a fade, a merge of
  evidence) write the new row version on the same page, which HOT requires.
  Existing pages keep their layout until they are rewritten.
- The indexes of nullable foreign keys (a memory's project, conversation and
  successor; an event's actor) leave NULLs out: every lookup names a value, and
  indexing the NULLs of most rows cost every insert and non-HOT update.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVE_MARKERS = """
UPDATE memoryapp_memory
SET faded_at = (metadata->>'faded_at')::timestamptz,
    confidence_lowered_at = (metadata->>'confidence_lowered_at')::timestamptz,
    metadata = metadata - 'faded_at' - 'confidence_lowered_at'
WHERE metadata ?| ARRAY['faded_at', 'confidence_lowered_at']
"""

MOVE_MARKERS_BACK = """
UPDATE memoryapp_memory
SET metadata = metadata
    || CASE WHEN faded_at IS NULL THEN '{}'::jsonb
            ELSE jsonb_build_object('faded_at', faded_at) END
    || CASE WHEN confidence_lowered_at IS NULL THEN '{}'::jsonb
            ELSE jsonb_build_object('confidence_lowered_at', confidence_lowered_at) END
WHERE faded_at IS NOT NULL OR confidence_lowered_at IS NOT NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("memoryapp", "0005_page_speed"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="faded_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="confidence_lowered_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.RunSQL(MOVE_MARKERS, MOVE_MARKERS_BACK),
        migrations.RunSQL(
            "ALTER TABLE memoryapp_memory SET (fillfactor = 90)",
            "ALTER TABLE memoryapp_memory RESET (fillfactor)",
        ),
        migrations.RemoveIndex(model_name="memory", name="memory_project_idx"),
        migrations.RemoveIndex(model_name="memory", name="memory_conversation_idx"),
        migrations.AlterField(
            model_name="memory",
            name="superseded_by",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="supersedes",
                to="memoryapp.memory",
            ),
        ),
        migrations.AlterField(
            model_name="memoryevent",
            name="actor",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("project__isnull", False)),
                fields=["project", "status", "-created_at"],
                name="memory_project_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("conversation__isnull", False)),
                fields=["conversation"],
                name="memory_conversation_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("superseded_by__isnull", False)),
                fields=["superseded_by"],
                name="memory_superseded_by_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="memoryevent",
            index=models.Index(
                condition=models.Q(("actor__isnull", False)),
                fields=["actor"],
                name="event_actor_idx",
            ),
        ),
    ]
