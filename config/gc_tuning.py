"""The garbage collector in long-running processes: the web server (config/asgi.py,
config/wsgi.py) and the worker (config's qcluster, before it forks its workers).

``freeze_startup_objects`` moves everything loaded at start-up (modules, settings, URL
patterns, models, the embedding provider) into the collector's permanent generation. A
full collection otherwise walks all of them again: in benchmarks/recall_speed.py
(1,000,000 messages) that was ~110 ms about every 125 previews. Interleaved A/B over
2,000 previews: p99 85.3 -> 42.7 ms, mean 32.9 -> 32.1 ms (p50 and p95 unchanged).
In the rules extractor's benchmark (benchmarks/extraction.py, 3 rounds of 5,000
messages) full collections took 2,353 ms, frozen 736 and 829 ms. Objects made later are
collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Collect once, then freeze what is left (call when the process has loaded its code)."""
    gc.collect()
    gc.freeze()
