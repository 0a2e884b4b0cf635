"""What recall asks PostgreSQL about its tables (statistics, planner estimates, a sample's
average length), kept for a few minutes per process.

A speed trick that earns its place: every injection preview needs these figures, they
change slowly (autovacuum's ANALYZE), and reading them costs a catalogue query or an
EXPLAIN each. ``benchmarks/recall_speed.py --scale 1 --without statistics-cache`` measures
the preview without it (figures in the commit that made this module).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# How long a figure is kept; 0 turns the caches off (the benchmark's A/B).
SECONDS = 300.0


class StatisticsCache(Generic[K, V]):
    """Figures by key, each computed again once older than SECONDS; emptied when it holds
    ``max_entries`` (keys are queries: a process sees few distinct ones)."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self.max_entries = max_entries
        self.entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K, compute: Callable[[], V]) -> V:
        now = time.monotonic()
        cached = self.entries.get(key)
        if cached is not None and now - cached[0] < SECONDS:
            return cached[1]
        value = compute()
        if len(self.entries) >= self.max_entries:
            self.entries.clear()
        self.entries[key] = (now, value)
        return value

    def clear(self) -> None:
        self.entries.clear()
