"""One HNSW index per bucket of pools instead of one over every vector (see models.VECTOR_BUCKETS).

The old index is dropped before the column is added: adding a stored column
rewrites the table and rebuilds its indexes, and rebuilding a large HNSW index
only to drop it would take minutes. The new indexes are built with more
memory than PostgreSQL's default 64MB: a bucket's graph that does not fit
is built several times slower.
"""

import django.db.models.functions.math
import pgvector.django.indexes
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0001_initial'),
        ('memoryapp', '0007_recall_search_indexes'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='memory',
            name='memory_embedding_hnsw',
        ),
        migrations.AddField(
            model_name='memory',
            name='vector_bucket',
            field=models.GeneratedField(db_persist=True, expression=django.db.models.functions.math.Mod(models.Case(models.When(scope='project', then=models.F('project_id')), default=models.F('owner_id')), 8), output_field=models.SmallIntegerField()),
        ),
        migrations.RunSQL("SET LOCAL maintenance_work_mem = '512MB'", migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 0)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_0', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 1)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_1', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 2)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_2', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 3)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_3', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 4)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_4', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 5)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_5', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 6)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_6', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 7)), ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw_7', opclasses=['vector_cosine_ops']),
        ),
    ]
