"""django-q2 tasks of imports."""

from __future__ import annotations


def run_import(import_id: int) -> str:
    """Work on an import for one step (see imports.services); its status."""
    from imports.services import run_import as work

    return work(import_id)


def resume_stalled_imports() -> int:
    """Every minute: go on with the imports whose worker stopped; how many."""
    from imports.services import resume_stalled

    return len(resume_stalled())
