"""Write a user's personal memories, or a project's, as Markdown files into a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from memories.management.files_target import add_target_arguments, target_from_options
from memories.memory_files import write_directory


class Command(BaseCommand):
    help = "Export memories as Markdown files (one per kind, pinned ones in _core/) into --dir."

    def add_arguments(self, parser: CommandParser) -> None:
        add_target_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        target = target_from_options(options)
        directory = Path(options["dir"])
        tree = target.export(timezone.now())
        write_directory(tree, directory)
        count = target.exportable().count()
        self.stdout.write(f"Exported {count} memories into {len(tree)} files in {directory}.")
