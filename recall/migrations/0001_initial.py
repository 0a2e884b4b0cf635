"""The access log moves here from memoryapp; its table stays."""

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def move_content_types(apps, schema_editor):
    """Admin log entries and permissions keep pointing at the moved models."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    moved = ContentType.objects.filter(app_label="memoryapp", model__in=['accesslog'])
    moved.exclude(model__in=ContentType.objects.filter(app_label="recall").values("model")).update(
        app_label="recall"
    )


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('accounts', '0002_teams_moved_to_teams_app'),
        ('conversations', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='AccessLog',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('client', models.CharField(blank=True, default='', max_length=100)),
                        ('memory_ids', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), default=list, size=None)),
                        ('block_hash', models.CharField(blank=True, default='', max_length=64)),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('api_token', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='accounts.apitoken')),
                        ('conversation', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='conversations.conversation')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_access_logs', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'memoryapp_accesslog',
                        'ordering': ['-created_at'],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_types, migrations.RunPython.noop),
    ]
