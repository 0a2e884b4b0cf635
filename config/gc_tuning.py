"""The garbage collector in the web server (config/asgi.py, config/wsgi.py).

``freeze_startup_objects`` moves everything loaded at start-up (modules, settings, URL
patterns, models, the embedding provider) into the collector's permanent generation. A
full collection otherwise walks all of them again: in benchmarks/recall_speed.py
(1,000,000 messages) that was ~110 ms about every 125 previews. Interleaved A/B over
2,000 previews: p99 85.3 -> 42.7 ms. Today (benchmarks/speed_tricks.py, 3 rounds at --scale
1): preview p95 50.9 ms with it, 68.5 ms without (+26 %). The worker no longer freezes: in
benchmarks/extraction.py it gained nothing (283 messages/s without, 240 with). Objects made
later are collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Collect once, then freeze what is left (call when the process has loaded its code)."""
    gc.collect()
    gc.freeze()
