"""Each message keeps its conversation's owner and privacy mode (``temporary``), as it keeps
its owner's vector bucket (0005): episodic recall finds a user's searchable turns without
joining their conversations.

One trigger sets all three from the conversation when a message is written, and another
sets them again on its messages when a conversation changes owner or privacy mode.

As in 0005, the HNSW indexes are dropped before the backfill, which would otherwise update
them row by row, and the next migration builds them again once the backfill is committed.
"""

from importlib import import_module

from django.conf import settings
from django.db import migrations, models

# 8: memories.models.VECTOR_BUCKETS when this was written (as in 0005).
BUCKETS = range(8)

BACKFILL = """
UPDATE memoryapp_message AS message
SET owner_id = conversation.owner_id, temporary = conversation.temporary
FROM memoryapp_conversation AS conversation
WHERE conversation.id = message.conversation_id
"""

TRIGGERS = """
DROP TRIGGER message_vector_bucket ON memoryapp_message;
DROP FUNCTION memoryapp_message_vector_bucket();

CREATE FUNCTION memoryapp_message_from_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT owner_id, owner_id % 8, temporary
    INTO NEW.owner_id, NEW.vector_bucket, NEW.temporary
    FROM memoryapp_conversation WHERE id = NEW.conversation_id;
    NEW.vector_bucket := COALESCE(NEW.vector_bucket, 0);
    NEW.temporary := COALESCE(NEW.temporary, false);
    RETURN NEW;
END
$$;
CREATE TRIGGER message_from_conversation
    BEFORE INSERT OR UPDATE OF conversation_id, vector_bucket, owner_id, temporary
    ON memoryapp_message
    FOR EACH ROW EXECUTE FUNCTION memoryapp_message_from_conversation();

CREATE FUNCTION memoryapp_conversation_to_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The messages' trigger reads the conversation as it now is.
    UPDATE memoryapp_message SET owner_id = NEW.owner_id WHERE conversation_id = NEW.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER conversation_to_messages
    AFTER UPDATE OF owner_id, temporary ON memoryapp_conversation
    FOR EACH ROW
    WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id OR OLD.temporary IS DISTINCT FROM NEW.temporary)
    EXECUTE FUNCTION memoryapp_conversation_to_messages();
"""

# Reversed: 0005's trigger again, as that migration made it.
DROP_TRIGGERS = (
    """
DROP TRIGGER conversation_to_messages ON memoryapp_conversation;
DROP FUNCTION memoryapp_conversation_to_messages();
DROP TRIGGER message_from_conversation ON memoryapp_message;
DROP FUNCTION memoryapp_message_from_conversation();
"""
    + import_module("conversations.migrations.0005_message_vector_buckets").VECTOR_BUCKET_TRIGGER
)


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0006_message_vector_bucket_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        *(
            migrations.RemoveIndex(model_name="message", name=f"message_embedding_hnsw_{bucket}")
            for bucket in BUCKETS
        ),
        migrations.AddField(
            model_name="message",
            name="owner",
            field=models.ForeignKey(
                db_index=False,
                editable=False,
                null=True,
                on_delete=models.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="message",
            name="temporary",
            field=models.BooleanField(db_default=False, editable=False),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        migrations.RunSQL(TRIGGERS, DROP_TRIGGERS),
    ]
