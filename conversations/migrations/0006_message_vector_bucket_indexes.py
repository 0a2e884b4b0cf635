"""The HNSW indexes of messages' vector buckets (see 0005), built with more memory than
PostgreSQL's default 64MB, as memories' migration 0008 does: a bucket's graph that does not
fit is built several times slower.
"""

import pgvector.django.indexes
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0005_message_vector_buckets'),
    ]

    operations = [
        migrations.RunSQL("SET LOCAL maintenance_work_mem = '512MB'", migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 0)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_0', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 1)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_1', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 2)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_2', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 3)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_3', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 4)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_4', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 5)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_5', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 6)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_6', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='message',
            index=pgvector.django.indexes.HnswIndex(condition=models.Q(('vector_bucket', 7)), ef_construction=64, fields=['embedding'], m=16, name='message_embedding_hnsw_7', opclasses=['vector_cosine_ops']),
        ),
    ]
