"""Speed of the batch writes behind "Clear all", its Undo, and a Markdown import.

    python benchmarks/batch_writes.py --scale 10000 --runs 3

Each run: a user with --scale memories clears them all (one batch), undoes the
clear, then imports --scale new memories and undoes the import. Prints the
median and p95 of each step, on a throw-away database.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable

from _setup import benchmark_database, percentiles, setup_django


def timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return (time.perf_counter() - start) * 1000


def run_once(scale: int, run: int) -> dict[str, float]:
    """One user's clear, undo, import and undo; the milliseconds of each."""
    from django.contrib.auth import get_user_model

    from memories import services
    from memories.memory_files import MemoryFilesTarget
    from memories.models import Kind, Memory

    kinds = list(Kind)
    email = f"bench-{uuid.uuid4().hex[:8]}@example.com"
    user = get_user_model().objects.create_user(username=email, email=email)
    Memory.objects.bulk_create(
        Memory(
            owner=user,
            kind=kinds[i % len(kinds)],
            content=f"Memory number {i}: a sentence long enough to look like a note.",
        )
        for i in range(scale)
    )
    target = MemoryFilesTarget(user=user)
    new_file = {"new.md": "".join(f"- New note {run} {i}.\n" for i in range(scale))}
    batches: list[uuid.UUID] = []
    steps: dict[str, Callable[[], object]] = {
        "clear all": lambda: batches.append(
            services.memories_delete(memories=Memory.objects.filter(owner=user), actor=user)
        ),
        "undo the clear": lambda: services.memory_undo_batch(batch=batches.pop(), actor=user),
        "import new": lambda: batches.append(
            services.memories_import(
                plan=target.plan(new_file), owner=user, project=None, actor=user
            )
        ),
        "undo the import": lambda: services.memory_undo_batch(batch=batches.pop(), actor=user),
    }
    return {name: timed(step) for name, step in steps.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=1000, help="memories per batch")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    setup_django()
    with benchmark_database():
        times: dict[str, list[float]] = {}
        for run in range(options.runs):
            for name, milliseconds in run_once(options.scale, run).items():
                times.setdefault(name, []).append(milliseconds)
        for name, values in times.items():
            print(f"{name} of {options.scale}: {percentiles(values)}")


if __name__ == "__main__":
    main()
