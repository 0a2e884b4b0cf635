"""Messages' vectors in one HNSW index per bucket, as memories' are (memories.models.VECTOR_BUCKETS).

A message's bucket is its conversation's owner's: a trigger sets it on insert, from the
conversation, which never changes owner. With one index over every user's turns, a user
with 1% of them needed an ef_search over the limit and was ranked exactly instead, ~3 µs
a turn (300 ms for 100,000 turns); within their bucket they are 8 times the share.

The old index is dropped before the backfill, which would otherwise update it row by row;
the new indexes are built by the next migration, once the backfill is committed: in the
same transaction, an index build also indexes the row versions the backfill replaced.
"""

from django.db import migrations, models

# 8: memories.models.VECTOR_BUCKETS when this was written (a change needs a migration anyway).
BACKFILL = """
UPDATE memoryapp_message AS message SET vector_bucket = conversation.owner_id % 8
FROM memoryapp_conversation AS conversation
WHERE conversation.id = message.conversation_id AND conversation.owner_id % 8 <> 0
"""

VECTOR_BUCKET_TRIGGER = """
CREATE FUNCTION memoryapp_message_vector_bucket() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.vector_bucket := COALESCE(
        (SELECT owner_id % 8 FROM memoryapp_conversation WHERE id = NEW.conversation_id), 0
    );
    RETURN NEW;
END
$$;
CREATE TRIGGER message_vector_bucket
    BEFORE INSERT OR UPDATE OF conversation_id, vector_bucket ON memoryapp_message
    FOR EACH ROW EXECUTE FUNCTION memoryapp_message_vector_bucket();
"""

DROP_VECTOR_BUCKET_TRIGGER = """
DROP TRIGGER message_vector_bucket ON memoryapp_message;
DROP FUNCTION memoryapp_message_vector_bucket();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0004_conversation_owner_latest'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='message',
            name='message_embedding_hnsw',
        ),
        migrations.AddField(
            model_name='message',
            name='vector_bucket',
            field=models.SmallIntegerField(db_default=0, editable=False),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        migrations.RunSQL(VECTOR_BUCKET_TRIGGER, DROP_VECTOR_BUCKET_TRIGGER),
    ]
