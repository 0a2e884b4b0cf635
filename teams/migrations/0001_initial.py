"""Teams, memberships, projects and invitations move here from accounts; their tables stay."""

import django.db.models.deletion
import django.utils.timezone
import teams.models
from django.conf import settings
from django.db import migrations, models


def move_content_types(apps, schema_editor):
    """Admin log entries and permissions keep pointing at the moved models."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    moved = ContentType.objects.filter(app_label="accounts", model__in=['team', 'membership', 'project', 'invitation'])
    moved.exclude(model__in=ContentType.objects.filter(app_label="teams").values("model")).update(
        app_label="teams"
    )


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('accounts', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Team',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, verbose_name='name')),
                        ('slug', models.SlugField(max_length=120, unique=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={
                        'db_table': 'accounts_team',
                        'ordering': ['name'],
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='Project',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, verbose_name='name')),
                        ('slug', models.SlugField(max_length=120, unique=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('archived_at', models.DateTimeField(blank=True, null=True)),
                        ('team', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='projects', to='teams.team')),
                    ],
                    options={
                        'db_table': 'accounts_project',
                        'ordering': ['name'],
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='Invitation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('email', models.EmailField(max_length=254)),
                        ('role', models.CharField(choices=[('owner', 'Owner'), ('admin', 'Admin'), ('member', 'Member'), ('viewer', 'Viewer')], default='member', max_length=10)),
                        ('token', models.CharField(default=teams.models._invitation_token, max_length=64, unique=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('accepted_at', models.DateTimeField(blank=True, null=True)),
                        ('accepted_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('invited_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('team', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='invitations', to='teams.team')),
                    ],
                    options={
                        'db_table': 'accounts_invitation',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='Membership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('owner', 'Owner'), ('admin', 'Admin'), ('member', 'Member'), ('viewer', 'Viewer')], default='member', max_length=10)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL)),
                        ('team', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='teams.team')),
                    ],
                    options={
                        'db_table': 'accounts_membership',
                        'ordering': ['team', 'user'],
                        'constraints': [models.UniqueConstraint(fields=('team', 'user'), name='unique_team_membership')],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_types, migrations.RunPython.noop),
    ]
