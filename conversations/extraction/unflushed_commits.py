"""Extraction runs commit without waiting for their WAL record to reach the disk.

A speed trick that earns its place: a run commits twice (marking itself running, then
its result) and each commit waited for a flush of the write-ahead log, ~0.3 ms of a
~10 ms run. Interleaved A/B in one process (benchmarks/extraction.py's set-up, 750
runs each way): per run median 10.16 → 9.46 ms, mean 10.34 → 9.47 ms.

What it risks, only when the database server itself crashes: the commits of the last
fraction of a second (three times ``wal_writer_delay``) may be lost, and each is lost
whole. A lost mark only leaves an attempt uncounted. A lost result loses the run's
memories, events, counts and ``extracted_through`` together, so its messages are
unread again and the run, left queued or running, is run again (see "Dead workers"
in runs.py). Nothing can refer to what was lost: any later commit that waits for the
flush (every other transaction does) flushes the log up to itself, earlier records
included.
"""

from __future__ import annotations

# A select-list item for a statement of the transaction: ``synchronous_commit`` off until
# the transaction ends, so for its commit only.
COMMIT_WITHOUT_FLUSH = "set_config('synchronous_commit', 'off', true)"
