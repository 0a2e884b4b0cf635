"""Speed of Markdown memory files: export, preview (parse + plan) and applying an import.

Runs against the development database with a throwaway user, removed at the end:

    python benchmarks/memory_files.py --scale 1000

Prints the median and p95 of each step over --runs runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from memories import services  # noqa: E402
from memories.memory_files import MemoryFilesTarget  # noqa: E402
from memories.models import Kind, Memory  # noqa: E402

KINDS = list(Kind)


def timed(step: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return times


def report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"{name:<28} median {statistics.median(times):8.1f} ms   p95 {p95:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=1000, help="memories of the user")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()

    email = f"bench-{uuid.uuid4().hex[:8]}@example.com"
    user = get_user_model().objects.create_user(username=email, email=email)
    try:
        with transaction.atomic():
            Memory.objects.bulk_create(
                Memory(
                    owner=user,
                    kind=KINDS[i % len(KINDS)],
                    content=f"Memory number {i}: a sentence long enough to look like a real note.",
                    tags=[f"tag{i % 17}"],
                    pinned=i % 50 == 0,
                )
                for i in range(options.scale)
            )
        target = MemoryFilesTarget(user=user)
        tree = target.export(timezone.now())
        edited = {path: text.replace("a sentence", "one sentence") for path, text in tree.items()}
        new = {"new.md": "".join(f"- New note {i}.\n" for i in range(options.scale))}

        report(
            f"export {options.scale}", timed(lambda: target.export(timezone.now()), options.runs)
        )
        report(f"preview unchanged {options.scale}", timed(lambda: target.plan(tree), options.runs))
        report(f"preview edited {options.scale}", timed(lambda: target.plan(edited), options.runs))

        batches = []

        def apply() -> None:
            plan = target.plan(new)
            batches.append(
                services.memories_import(plan=plan, owner=user, project=None, actor=user)
            )

        def undo() -> None:
            services.memory_undo_batch(batch=batches.pop(), actor=user)

        for _ in range(max(1, options.runs // 2)):
            report(f"import {options.scale} new", timed(apply, 1))
            report("undo that import", timed(undo, 1))
    finally:
        user.delete()


if __name__ == "__main__":
    main()
