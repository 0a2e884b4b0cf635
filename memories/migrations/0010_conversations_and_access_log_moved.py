"""Conversations, messages and extraction runs moved to conversations, the access log to recall."""

import django.db.models.deletion
from django.db import migrations, models


RENAME_SCHEDULED_TASKS = """
DO $$ BEGIN
  IF to_regclass('django_q_schedule') IS NOT NULL THEN
    UPDATE django_q_schedule
       SET func = CASE func
                    WHEN 'memoryapp.jobs.extract_conversation'
                    THEN 'conversations.jobs.extract_conversation'
                    ELSE regexp_replace(func, '^memoryapp[.]', 'memories.')
                  END
     WHERE func LIKE 'memoryapp.%';
  END IF;
END $$;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0001_initial'),
        ('memoryapp', '0009_memory_fillfactor_50'),
        ('teams', '0001_initial'),
    ]

    operations = [
        # Schedules name their task by import path: the heartbeat and forgetting jobs now live in
        # memories.jobs, extraction (and its retries) in conversations.jobs.
        migrations.RunSQL(
            RENAME_SCHEDULED_TASKS, migrations.RunSQL.noop
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='conversation',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='conversation',
                    name='project',
                ),
                migrations.RemoveField(
                    model_name='message',
                    name='conversation',
                ),
                migrations.RemoveField(
                    model_name='extractionrun',
                    name='conversation',
                ),
                migrations.AlterField(
                    model_name='memory',
                    name='conversation',
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='memories', to='conversations.conversation'),
                ),
                migrations.AlterField(
                    model_name='memory',
                    name='project',
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='memories', to='teams.project'),
                ),
                migrations.DeleteModel(
                    name='AccessLog',
                ),
                migrations.DeleteModel(
                    name='Message',
                ),
                migrations.DeleteModel(
                    name='ExtractionRun',
                ),
                migrations.DeleteModel(
                    name='Conversation',
                ),
            ],
        ),
    ]
