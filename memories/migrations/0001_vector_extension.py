from __future__ import annotations

from django.db import migrations

from memories.migration_operations import CreateVectorExtension


class Migration(migrations.Migration):
    initial = True
    dependencies: list[tuple[str, str]] = []
    operations = [CreateVectorExtension()]
