"""Every speed trick the app keeps, how to turn each off, and an interleaved A/B of each.

    python benchmarks/speed_tricks.py                       # every trick, 3 rounds
    python benchmarks/speed_tricks.py --trick gc-freeze --rounds 5

A trick stays only while it gains at least 3 % on its benchmark's headline figure
(docs/PERFORMANCE.md lists them with today's figures):
- the injection preview: ``benchmarks/recall_speed.py --scale 1``, the client's p95 (what a
  chat application waits for);
- extraction: ``benchmarks/extraction.py``, messages per second.

Each round runs the benchmark once as the app ships and once with each trick turned off,
in an order that rotates from round to round (so a drift of the shared machine falls on
every variant alike); the table gives the median of the rounds. ``--without NAME`` on either
benchmark turns a trick off by the switch below.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _without_side_connections() -> None:
    from django.conf import settings

    settings.MEMORY_SIDE_CONNECTIONS = 0


def _without_statistics_cache() -> None:
    from search import table_statistics

    table_statistics.SECONDS = 0.0


def _without_prepared_statements() -> None:
    from django.conf import settings

    settings.DATABASE_PREPARED_STATEMENTS = False


def _without_unflushed_commits() -> None:
    from conversations.extraction import runs
    from conversations.extraction.unflushed_commits import COMMIT_WITHOUT_FLUSH

    flushed = COMMIT_WITHOUT_FLUSH.replace("'off'", "'on'")
    for name, value in vars(runs).items():
        if isinstance(value, str) and COMMIT_WITHOUT_FLUSH in value:
            setattr(runs, name, value.replace(COMMIT_WITHOUT_FLUSH, flushed))


def _without_context_statement_cache() -> None:
    from recall import context

    context.context_statement = context.context_statement.__wrapped__  # type: ignore[assignment]


def _without_role_labels_cache() -> None:
    from recall import episodes

    episodes._role_labels = episodes._role_labels.__wrapped__  # type: ignore[assignment]


def _without_c_timestamps() -> None:
    from conversations.extraction import reconcile
    from search import vectors

    def django_loader(cursor: object) -> None:
        pass

    vectors.read_timestamps_in_c = django_loader
    reconcile.read_timestamps_in_c = django_loader


def _without_batched_bookkeeping() -> None:
    from recall import bookkeeping

    bookkeeping.FLUSH_SECONDS = 0.0  # Each preview's row and uses written right after it.


def _without_orjson() -> None:
    from ninja.renderers import JSONRenderer

    from api import api

    api.renderer = JSONRenderer()


def _nothing() -> None:
    """gc-freeze: the benchmark itself leaves out its freeze_startup_objects()."""


@dataclass(frozen=True)
class SpeedTrick:
    benchmarks: tuple[str, ...]  # "recall", "extraction"
    turn_off: Callable[[], None]


SPEED_TRICKS = {
    "side-connections": SpeedTrick(("recall",), _without_side_connections),
    "statistics-cache": SpeedTrick(("recall",), _without_statistics_cache),
    "context-statement-cache": SpeedTrick(("recall",), _without_context_statement_cache),
    "role-labels-cache": SpeedTrick(("recall",), _without_role_labels_cache),
    "batched-bookkeeping": SpeedTrick(("recall",), _without_batched_bookkeeping),
    "orjson": SpeedTrick(("recall",), _without_orjson),
    "c-timestamps": SpeedTrick(("recall", "extraction"), _without_c_timestamps),
    "gc-freeze": SpeedTrick(("recall", "extraction"), _nothing),
    "prepared-statements": SpeedTrick(("extraction",), _without_prepared_statements),
    "unflushed-commits": SpeedTrick(("extraction",), _without_unflushed_commits),
}


def turn_off(names: list[str]) -> None:
    for name in names:
        SPEED_TRICKS[name].turn_off()
        print(f"Without {name}")


COMMANDS = {
    "recall": [
        "recall_speed.py",
        "--scale",
        "1",
        "--requests",
        "600",
        "--warmup",
        "150",
        "--clients",
        "0",
    ],
    "extraction": [
        "extraction.py",
        "--scale",
        "0.4",
        "--repeat",
        "3",
        "--skip-forgetting",
    ],
}
# The headline figure in each benchmark's output, and whether more is better.
HEADLINES = {
    "recall": (re.compile(r"client time ms: p50 [\d.]+\s+p95 ([\d.]+)"), False),
    "extraction": (re.compile(r"throughput: median ([\d,]+) messages/s"), True),
}


def measure(benchmark: str, without: str | None) -> float:
    command = [sys.executable, str(HERE / COMMANDS[benchmark][0]), *COMMANDS[benchmark][1:]]
    if without:
        command += ["--without", without]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = HEADLINES[benchmark][0].findall(output)
    if not found:
        raise SystemExit(f"no headline figure in the output of {' '.join(command)}:\n{output}")
    return float(found[-1].replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trick", action="append", choices=sorted(SPEED_TRICKS))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tricks = args.trick or sorted(SPEED_TRICKS)
    for benchmark in ("recall", "extraction"):
        variants: list[str | None] = [
            None,
            *(name for name in tricks if benchmark in SPEED_TRICKS[name].benchmarks),
        ]
        if len(variants) == 1:
            continue
        figures: dict[str | None, list[float]] = {variant: [] for variant in variants}
        for round_number in range(args.rounds):
            shift = round_number % len(variants)
            for variant in variants[shift:] + variants[:shift]:
                figures[variant].append(measure(benchmark, variant))
                print(
                    f"  {benchmark} round {round_number + 1}, without {variant}: "
                    f"{figures[variant][-1]:,.1f}",
                    flush=True,
                )
        more_is_better = HEADLINES[benchmark][1]
        shipped = statistics.median(figures[None])
        unit = "messages/s" if more_is_better else "ms p95"
        print(f"\n{benchmark}: as shipped {shipped:,.1f} {unit} (rounds: {figures[None]})")
        for name in variants[1:]:
            off = statistics.median(figures[name])
            gain = (shipped - off) / off if more_is_better else (off - shipped) / off
            verdict = "keep" if gain >= 0.03 else "remove"
            print(
                f"  {name}: without it {off:,.1f} {unit} (rounds: {figures[name]}); "
                f"the trick gains {gain:+.1%} -> {verdict}"
            )


if __name__ == "__main__":
    main()
