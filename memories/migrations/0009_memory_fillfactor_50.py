"""Memory pages filled to 50%, so that merges and the forgetting pass update rows in place.

An UPDATE that writes no indexed column is heap-only (HOT, no new entry in any
index, the HNSW one included) only when the new row version fits on the row's
page, and versions written by one transaction are not reclaimed before it
ends. At 90% (migration 0006) a page holds three ~2 kB rows with vectors and
room for one more version: a run that merged two memories of one page, or a
forgetting pass changing the many small rows of a page, wrote every other
version elsewhere, with an entry in each index (an HNSW insert costs
milliseconds). At 50% a page holds two rows with vectors and room for both to
change, and the small rows of a page all fit a new version: in
benchmarks/extraction.py 88% of merges were HOT instead of 72%, and the
forgetting passes over 200,000 memories made 217,000 of their 282,000 updates
HOT instead of 46,000. The cost: tables of small rows take more pages. Existing
pages keep their layout until they are rewritten.

A speed trick that earns its place (benchmarks/extraction.py, 1,000,000 memories, quiet
machine, this migration set to 90 for the A/B): the first forgetting pass took 24.8 s at
50 against 33.9 s at 90, a steady-state day 2.0 s against 2.6 s; extraction runs were
the same (642-667 against 659 messages/s).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memoryapp", "0008_vector_buckets")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memoryapp_memory SET (fillfactor = 50)",
            "ALTER TABLE memoryapp_memory SET (fillfactor = 90)",
        ),
    ]
