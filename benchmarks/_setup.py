"""Shared set-up for the benchmark scripts: Django, and a throw-away database beside the real one."""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# The shared development data, beside the repository (../shared/data).
SHARED_DATA = BASE_DIR.parent / "shared" / "data"


def setup_django() -> None:
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    import django

    django.setup()


@contextmanager
def benchmark_database(name: str = "bench_memoryapp") -> Iterator[None]:
    """A freshly migrated database named ``name``, dropped afterwards."""
    from django.db import connection

    connection.settings_dict.setdefault("TEST", {})["NAME"] = name
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def percentiles(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms"
