"""manage.py forget_memories [--dry-run]: today's forgetting pass (the daily job does it too)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from memories.forgetting import forget, preview
from memories.models import ForgettingReport


class Command(BaseCommand):
    help = "Forget memories nobody uses and lower the importance and confidence of fading ones."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Count what would change; change nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["dry_run"]:
            counts = preview()
            self.stdout.write("Dry run, nothing changed. Would change:")
        elif ForgettingReport.objects.filter(run_on=timezone.now().date()).exists():
            counts = forget().counts
            self.stdout.write("Today's pass already ran; it changed:")
        else:
            report = forget()
            counts = report.counts
            self.stdout.write(f"Forgetting pass of {report.run_on} ({report.duration_ms} ms):")
        self.stdout.write(json.dumps(counts, indent=2, sort_keys=True))
