"""No pending list on the full-text GIN indexes recall searches on every preview.

With GIN's "fast update", new entries wait in a pending list, unsorted, until a
vacuum or until it reaches 4 MB, and every search reads all of it: tens of
milliseconds per keyword search once a few thousand rows were written. Entries
now go straight into the index, which makes each write a little slower.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memoryapp", "0006_forgetting_speed")]

    operations = [
        migrations.RunSQL(
            "ALTER INDEX memory_search_idx SET (fastupdate = off);"
            "ALTER INDEX memory_search_access_idx SET (fastupdate = off)",
            "ALTER INDEX memory_search_idx RESET (fastupdate);"
            "ALTER INDEX memory_search_access_idx RESET (fastupdate)",
        )
    ]
