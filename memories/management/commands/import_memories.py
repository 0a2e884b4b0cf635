"""Import a folder of Markdown memory files: print the preview, then apply it as one batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from memories import services
from memories.management.files_target import add_target_arguments, target_from_options
from memories.memory_files import ImportPlan, read_directory
from teams.permissions import can_write_project


class Command(BaseCommand):
    help = (
        "Import .md files from --dir (our export format or hand-written Markdown). "
        "Prints what will be added, updated and skipped; --dry-run writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_target_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="Only print the preview.")

    def handle(self, *args: Any, **options: Any) -> None:
        target = target_from_options(options)
        directory = Path(options["dir"])
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a folder.")
        files, problems = read_directory(directory)
        plan = target.plan(files, problems)
        self._print_plan(plan)
        if plan.problems:
            raise CommandError("Nothing was imported: fix the problems above and run it again.")
        if options["dry_run"] or not plan.can_apply:
            return
        project = target.project
        if project is not None and not can_write_project(target.user, project):
            raise CommandError(f"{target.user.email} cannot change {project.slug}.")
        batch = services.memories_import(
            plan=plan,
            owner=target.user,
            project=project,
            actor=None,
            actor_label="import_memories command",
        )
        page = reverse("project-files", args=[project.slug]) if project else reverse("memory-files")
        self.stdout.write(f"Imported. To see or undo this import: {page}?imported={batch}")

    def _print_plan(self, plan: ImportPlan) -> None:
        for problem in plan.problems:
            self.stderr.write(f"error: {problem}")
        for note in plan.notes:
            self.stdout.write(f"note: {note}")
        for item in plan.to_add:
            self.stdout.write(f"add     {item.where}  {item.content[:70]}")
        for update in plan.to_update:
            fields = ", ".join(update.changes)
            self.stdout.write(f"update  {update.item.where}  #{update.memory.pk} ({fields})")
        for skip in plan.skipped:
            self.stdout.write(f"skip    {skip.item.where}  {skip.reason}")
        self.stdout.write(
            f"{len(plan.to_add)} to add, {len(plan.to_update)} to update, "
            f"{len(plan.skipped)} skipped."
        )
