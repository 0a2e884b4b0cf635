"""Faster extraction and forgetting.

- search_vector becomes a plain column kept by a trigger: a generated column
  is recomputed on every UPDATE of its row, a trigger only runs when the
  document is written. DROP EXPRESSION keeps the values and the GIN index.
- Subject indexes for reconciliation's lookups.
- No separate indexes on Memory.owner/project/conversation and
  MemoryEvent.memory: composite indexes lead with each of them.
"""

import django.contrib.postgres.search
import django.db.models.deletion
import django.db.models.fields.json
from django.conf import settings
from django.db import migrations, models

from search.textsearch import SEARCH_CONFIG

# Written together with search_document (or by hand), the vector is recomputed; never otherwise.
SEARCH_VECTOR_TRIGGER = f"""
ALTER TABLE memoryapp_memory ALTER COLUMN search_vector DROP EXPRESSION;
CREATE FUNCTION memoryapp_memory_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector := to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(NEW.search_document, ''));
    RETURN NEW;
END
$$;
CREATE TRIGGER memory_search_vector
    BEFORE INSERT OR UPDATE OF search_document, search_vector ON memoryapp_memory
    FOR EACH ROW EXECUTE FUNCTION memoryapp_memory_search_vector();
"""

SEARCH_VECTOR_GENERATED = f"""
DROP TRIGGER memory_search_vector ON memoryapp_memory;
DROP FUNCTION memoryapp_memory_search_vector();
ALTER TABLE memoryapp_memory DROP COLUMN search_vector;
ALTER TABLE memoryapp_memory ADD COLUMN search_vector tsvector GENERATED ALWAYS AS
    (to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(search_document, ''))) STORED;
CREATE INDEX memory_search_idx ON memoryapp_memory USING gin (search_vector);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("memoryapp", "0002_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="memory",
            name="conversation",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="memories",
                to="memoryapp.conversation",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="owner",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="memories",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="project",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="memories",
                to="accounts.project",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="memory",
                    name="search_vector",
                    field=django.contrib.postgres.search.SearchVectorField(
                        blank=True, editable=False, null=True
                    ),
                ),
            ],
            database_operations=[migrations.RunSQL(SEARCH_VECTOR_TRIGGER, SEARCH_VECTOR_GENERATED)],
        ),
        migrations.AlterField(
            model_name="memoryevent",
            name="memory",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="events",
                to="memoryapp.memory",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                models.F("owner"),
                models.F("kind"),
                django.db.models.fields.json.KeyTextTransform("subject", "metadata"),
                condition=models.Q(("metadata__has_key", "subject")),
                name="memory_owner_subject_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                models.F("project"),
                models.F("kind"),
                django.db.models.fields.json.KeyTextTransform("subject", "metadata"),
                condition=models.Q(("metadata__has_key", "subject"), ("project__isnull", False)),
                name="memory_project_subject_idx",
            ),
        ),
    ]
