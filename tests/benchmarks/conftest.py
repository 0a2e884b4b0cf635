"""The benchmark scripts import each other as top-level modules (they run as scripts from
benchmarks/), so their tests import them that way too."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = str(Path(__file__).resolve().parents[2] / "benchmarks")
if BENCHMARKS not in sys.path:
    sys.path.insert(0, BENCHMARKS)
