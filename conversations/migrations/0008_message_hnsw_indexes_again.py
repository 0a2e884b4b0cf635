"""The HNSW indexes of messages' vector buckets, built again after 0007's backfill (as 0006
built them after 0005's)."""

import pgvector.django.indexes
from django.db import migrations, models

BUCKETS = range(8)


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0007_message_owner_and_temporary'),
    ]

    operations = [
        migrations.RunSQL("SET LOCAL maintenance_work_mem = '512MB'", migrations.RunSQL.noop),
        *(
            migrations.AddIndex(
                model_name='message',
                index=pgvector.django.indexes.HnswIndex(
                    condition=models.Q(('vector_bucket', bucket)),
                    ef_construction=64,
                    fields=['embedding'],
                    m=16,
                    name=f'message_embedding_hnsw_{bucket}',
                    opclasses=['vector_cosine_ops'],
                ),
            )
            for bucket in BUCKETS
        ),
    ]
