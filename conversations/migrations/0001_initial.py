"""Conversations, messages and extraction runs move here from memoryapp; their tables stay."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def move_content_types(apps, schema_editor):
    """Admin log entries and permissions keep pointing at the moved models."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    moved = ContentType.objects.filter(app_label="memoryapp", model__in=['conversation', 'message', 'extractionrun'])
    moved.exclude(model__in=ContentType.objects.filter(app_label="conversations").values("model")).update(
        app_label="conversations"
    )


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('memoryapp', '0009_memory_fillfactor_50'),
        ('teams', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Conversation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('external_id', models.CharField(max_length=200)),
                        ('title', models.CharField(blank=True, default='', max_length=300)),
                        ('temporary', models.BooleanField(default=False)),
                        ('client', models.CharField(blank=True, default='', max_length=100)),
                        ('extracted_through', models.PositiveIntegerField(default=0)),
                        ('ended_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='conversations', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='conversations', to='teams.project')),
                    ],
                    options={
                        'db_table': 'memoryapp_conversation',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='ExtractionRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('trigger', models.CharField(choices=[('turns', 'Every few user turns'), ('end', 'Conversation ended'), ('summary', 'Compaction summary'), ('manual', 'Asked for')], max_length=10)),
                        ('extractor', models.CharField(default='rules', max_length=20)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('skipped', 'Skipped')], default='queued', max_length=10)),
                        ('skip_reason', models.CharField(blank=True, default='', max_length=200)),
                        ('window_first', models.PositiveIntegerField(blank=True, null=True)),
                        ('window_last', models.PositiveIntegerField(blank=True, null=True)),
                        ('summary', models.TextField(blank=True, default='')),
                        ('candidates', models.PositiveIntegerField(default=0)),
                        ('created', models.PositiveIntegerField(default=0)),
                        ('merged', models.PositiveIntegerField(default=0)),
                        ('superseded', models.PositiveIntegerField(default=0)),
                        ('skipped', models.PositiveIntegerField(default=0)),
                        ('dropped_sensitive', models.PositiveIntegerField(default=0)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('duration_ms', models.PositiveIntegerField(blank=True, null=True)),
                        ('error', models.TextField(blank=True, default='')),
                        ('raw_output', models.TextField(blank=True, default='')),
                        ('task_id', models.CharField(blank=True, default='', max_length=64)),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='extraction_runs', to='conversations.conversation')),
                    ],
                    options={
                        'db_table': 'memoryapp_extractionrun',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='Message',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('user', 'User'), ('assistant', 'Assistant'), ('system', 'System'), ('tool', 'Tool')], max_length=10)),
                        ('content', models.TextField()),
                        ('external_id', models.CharField(max_length=200)),
                        ('position', models.PositiveIntegerField()),
                        ('sent_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='conversations.conversation')),
                    ],
                    options={
                        'db_table': 'memoryapp_message',
                        'ordering': ['conversation', 'position'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='conversation',
                    constraint=models.UniqueConstraint(fields=('owner', 'external_id'), name='unique_conversation_external_id'),
                ),
                migrations.AddConstraint(
                    model_name='message',
                    constraint=models.UniqueConstraint(fields=('conversation', 'external_id'), name='unique_message_external_id'),
                ),
                migrations.AddConstraint(
                    model_name='message',
                    constraint=models.UniqueConstraint(fields=('conversation', 'position'), name='unique_message_position'),
                ),
            ],
        ),
        migrations.RunPython(move_content_types, migrations.RunPython.noop),
    ]
