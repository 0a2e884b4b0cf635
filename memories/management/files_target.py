"""The options the export_memories and import_memories commands share: whose memories, where."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from memories.memory_files import MemoryFilesTarget
from teams.models import Membership, Project, Role
from teams.permissions import can_read_project


def add_target_arguments(parser: CommandParser) -> None:
    parser.add_argument("--user", metavar="EMAIL", help="A user's personal memories.")
    parser.add_argument(
        "--project",
        metavar="SLUG",
        help="A project's memories (with --user: who imports; default the team's first owner).",
    )
    parser.add_argument("--dir", required=True, metavar="PATH", help="The folder of .md files.")


def target_from_options(options: dict[str, Any]) -> MemoryFilesTarget:
    if not options["user"] and not options["project"]:
        raise CommandError("Give --user EMAIL or --project SLUG.")
    user = None
    if options["user"]:
        user = get_user_model().objects.filter(email__iexact=options["user"]).first()
        if user is None:
            raise CommandError(f"No user with the email {options['user']}.")
    if not options["project"]:
        assert user is not None  # one of the two options was given
        return MemoryFilesTarget(user=user)
    project = Project.objects.filter(slug=options["project"]).first()
    if project is None:
        raise CommandError(f"No project {options['project']}.")
    if user is None:
        owner = (
            Membership.objects.filter(team_id=project.team_id, role=Role.OWNER)
            .order_by("created_at", "id")
            .select_related("user")
            .first()
        )
        if owner is None:
            raise CommandError(f"Project {project.slug} has no owner; give --user.")
        user = owner.user
    elif not can_read_project(user, project):
        raise CommandError(f"{user.email} is not a member of {project.slug}.")
    return MemoryFilesTarget(user=user, project=project)
