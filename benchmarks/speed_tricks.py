"""Every speed trick the app keeps, how to turn each off, and an interleaved A/B of each.

    python benchmarks/speed_tricks.py                       # every trick, 3 rounds
    python benchmarks/speed_tricks.py --trick gc-freeze --rounds 5

A trick stays only while it gains at least 3 % on its benchmark's headline figure
(docs/PERFORMANCE.md lists them with today's figures). Every trick kept today is the
injection preview's, measured by ``benchmarks/recall_speed.py --scale 1`` (one client): the
p95 of the time a caller waits. Extraction's (prepared statements, commits without a WAL
flush, the C timestamp loader, gc.freeze in the worker) gained nothing in
``benchmarks/extraction.py`` and went.

Each round runs the benchmark once as the app ships and once with each trick turned off,
in an order that rotates from round to round (so a drift of the shared machine falls on
every variant alike); the table gives the median of the rounds. ``--without NAME`` on
recall_speed.py turns a trick off by the switch below.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _without_side_connections() -> None:
    from django.conf import settings

    settings.MEMORY_SIDE_CONNECTIONS = 0


def _without_statistics_cache() -> None:
    from search import table_statistics

    table_statistics.SECONDS = 0.0


def _without_context_statement_cache() -> None:
    from recall import context

    context.context_statement = context.context_statement.__wrapped__  # type: ignore[assignment]


def _without_c_timestamps() -> None:
    from search import vectors

    def django_loader(cursor: object) -> None:
        pass

    vectors.read_timestamps_in_c = django_loader


def _without_batched_bookkeeping() -> None:
    from recall import bookkeeping

    bookkeeping.FLUSH_SECONDS = 0.0  # Each preview's row and uses written right after it.


def _without_orjson() -> None:
    from ninja.renderers import JSONRenderer

    from api import api

    api.renderer = JSONRenderer()


def _nothing() -> None:
    """gc-freeze: the benchmark itself leaves out its freeze_startup_objects()."""


SPEED_TRICKS: dict[str, Callable[[], None]] = {
    "side-connections": _without_side_connections,
    "statistics-cache": _without_statistics_cache,
    "context-statement-cache": _without_context_statement_cache,
    "batched-bookkeeping": _without_batched_bookkeeping,
    "orjson": _without_orjson,
    "c-timestamps": _without_c_timestamps,
    "gc-freeze": _nothing,
}


def turn_off(names: list[str]) -> None:
    for name in names:
        SPEED_TRICKS[name]()
        print(f"Without {name}")


COMMAND = [
    "recall_speed.py",
    *("--scale", "1", "--requests", "400", "--warmup", "100", "--clients", "0"),
]
HEADLINE = re.compile(r"client time ms: p50 [\d.]+\s+p95 ([\d.]+)")


def measure(without: str | None) -> float:
    command = [sys.executable, str(HERE / COMMAND[0]), *COMMAND[1:]]
    if without:
        command += ["--without", without]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = HEADLINE.findall(output)
    if not found:
        raise SystemExit(f"no headline figure in the output of {' '.join(command)}:\n{output}")
    return float(found[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trick", action="append", choices=sorted(SPEED_TRICKS))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    variants: list[str | None] = [None, *(args.trick or sorted(SPEED_TRICKS))]
    figures: dict[str | None, list[float]] = {variant: [] for variant in variants}
    for round_number in range(args.rounds):
        shift = round_number % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            figures[variant].append(measure(variant))
            print(f"  round {round_number + 1}, without {variant}: {figures[variant][-1]:.1f}")
    shipped = statistics.median(figures[None])
    print(f"\nAs shipped: {shipped:.1f} ms p95 (rounds: {figures[None]})")
    for name in variants[1:]:
        off = statistics.median(figures[name])
        gain = (off - shipped) / off
        verdict = "keep" if gain >= 0.03 else "remove"
        print(
            f"  {name}: without it {off:.1f} ms p95 (rounds: {figures[name]}); "
            f"the trick gains {gain:+.1%} -> {verdict}"
        )


if __name__ == "__main__":
    main()
