"""The injection preview under load: many clients at once against one web process.

    python benchmarks/preview_load.py                          # 50 clients for 60 s
    python benchmarks/preview_load.py --clients 20 --seconds 15

memoryapp runs as production runs it (``uvicorn config.asgi:application`` in a process of its
own, connections from a pool of DB_POOL_SIZE; benchmarks/proxy.py's ``memoryapp_server``) on
its own database, ``memoryapp_bench_load``, filled as benchmarks/recall_speed.py fills its
own. Each client sends previews one after another, as fast as they are answered, for the
whole time. The server must answer each one quickly: a preview (200), or when every pooled
connection is taken, 503 with Retry-After within a second (config/database.py's
DB_POOL_TIMEOUT), never a long wait. Printed: the answers by status, the latency (median,
p95, p99, max) of all and of each status, and how many answers took over a second.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections import Counter, defaultdict

import httpx2
from proxy import memoryapp_server
from recall_speed import (  # sets Django up: models are imported in main()
    fill,
    percentile,
    queries,
    use_bench_database,
)


def client_loop(
    url: str,
    secret: str,
    bodies: list[dict[str, object]],
    until: float,
    results: list[tuple[int, float]],
) -> None:
    """Send previews until ``until``; append (status, ms) for each (status 0: no answer;
    negative: a 429 or 503 without Retry-After)."""
    with httpx2.Client(headers={"Authorization": f"Bearer {secret}"}, timeout=30) as client:
        index = 0
        while time.monotonic() < until:
            body = bodies[index % len(bodies)]
            index += 1
            started = time.perf_counter()
            try:
                response = client.post(url, json=body)
                status = response.status_code
                if status in (429, 503) and not response.headers.get("Retry-After"):
                    status = -status  # refused without saying when to come back: an error
            except httpx2.TransportError:
                status = 0
            results.append((status, (time.perf_counter() - started) * 1000))


def latency(values: list[float]) -> str:
    return (
        f"median {percentile(values, 0.5):7.1f}  p95 {percentile(values, 0.95):7.1f}  "
        f"p99 {percentile(values, 0.99):7.1f}  max {max(values):7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--memories", type=int, default=10_000, help="the user's memories")
    args = parser.parse_args()
    from django.contrib.auth import get_user_model

    from accounts.models import ApiToken

    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request otherwise
    use_bench_database("memoryapp_bench_load")
    bench_id, _small_id = fill(args.memories * 2, args.memories)
    secret = ApiToken.issue(user=get_user_model().objects.get(pk=bench_id), name="bench load")[1]
    bodies = queries(500)

    results: list[tuple[int, float]] = []
    with memoryapp_server("") as server:
        url = f"{server}/api/v1/injection-preview"
        for body in bodies[:20]:  # warm up: the pool's connections, the model, the caches
            httpx2.post(url, json=body, headers={"Authorization": f"Bearer {secret}"}, timeout=30)
        until = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=client_loop, args=(url, secret, bodies, until, results))
            for _client in range(args.clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    by_status: dict[int, list[float]] = defaultdict(list)
    for status, ms in results:
        by_status[status].append(ms)
    counts = Counter(status for status, _ms in results)
    print(
        f"\nInjection preview, {args.clients} clients for {args.seconds:g} s, one web process, "
        f"a user with {args.memories:,} of {args.memories * 2:,} memories: "
        f"{len(results):,} requests ({len(results) / args.seconds:.1f}/s)"
    )
    print("  by status: " + ", ".join(f"{status}: {counts[status]:,}" for status in sorted(counts)))
    print(f"  all      {latency([ms for _status, ms in results])}")
    for status in sorted(by_status):
        print(f"  {status:<8} {latency(by_status[status])}")
    slow = sum(ms > 1000 for _status, ms in results)
    errors = sum(status not in (200, 429, 503) for status in counts.elements())
    print(f"  over 1 s: {slow:,}; errors other than 429/503: {errors:,}")


if __name__ == "__main__":
    main()
