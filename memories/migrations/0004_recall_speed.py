"""Recall for a user with many memories: index the search vector together with lexemes
naming the memory's owner and project (textsearch.ACCESS_DOCUMENT_SQL), and pinned memories."""

from django.db import migrations, models

from search.textsearch import ACCESS_DOCUMENT_SQL


class Migration(migrations.Migration):
    dependencies = [("memoryapp", "0003_perf_extraction")]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX memory_search_access_idx ON memoryapp_memory "
            f"USING gin ({ACCESS_DOCUMENT_SQL})",
            "DROP INDEX memory_search_access_idx",
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("pinned", True)),
                fields=["owner", "id"],
                name="memory_owner_pinned_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("pinned", True)),
                fields=["project", "id"],
                name="memory_project_pinned_idx",
            ),
        ),
    ]
