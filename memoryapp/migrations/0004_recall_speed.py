"""Keyword recall for a user with many memories: index the search vector together with
lexemes naming the memory's owner and project (textsearch.ACCESS_DOCUMENT_SQL)."""

from django.db import migrations

from memoryapp.textsearch import ACCESS_DOCUMENT_SQL


class Migration(migrations.Migration):
    dependencies = [("memoryapp", "0003_perf_extraction")]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX memory_search_access_idx ON memoryapp_memory "
            f"USING gin ({ACCESS_DOCUMENT_SQL})",
            "DROP INDEX memory_search_access_idx",
        )
    ]
