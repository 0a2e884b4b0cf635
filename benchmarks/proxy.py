"""The memory proxy's cost: what memoryapp adds before the upstream gets a chat request, and
the time to the first streamed byte, each against calling the (fake) upstream directly.

    python benchmarks/proxy.py                      # 10,000 memories, 1,000 requests
    python benchmarks/proxy.py --memories 100000    # the issue's size (a long fill, once)
    python benchmarks/proxy.py --memories 100000 --runs 5    # median of 5 runs

The default is 10,000 memories (of 20,000 rows) because the machine it was written on is
shared; --memories 100000 gives the issue's figure. Runs against its own database,
``memoryapp_bench_proxy``, filled as benchmarks/recall_speed.py fills its own (kept and
reused while its size matches), so the two fills do not replace each other. The server is
memoryapp as production runs it: ``uvicorn config.asgi:application`` in a process of its
own (taking connections from a pool, as config/asgi.py sets it up), pointed at that database
by ``DATABASE_URL``; the client and the upstream (a tiny local HTTP server) run in this
process, as a chat app and a model server would run in theirs. Each request is a real chat:
a token is authenticated, the injection preview runs on the last user message and 3 before
it, the block joins the system message, and the exchange is stored afterwards.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import httpx2
from recall_speed import (  # sets Django up: models are imported in main()
    fill,
    percentile,
    queries,
    use_bench_database,
)

if TYPE_CHECKING:
    from tests.live_asgi import FakeUpstream


@contextmanager
def memoryapp_server(upstream_url: str) -> Iterator[str]:
    """The base URL of memoryapp served by uvicorn in a process of its own, on this process's
    database (the bench one) and with ``upstream_url`` as the proxy's upstream."""
    from django.db import connection

    params = connection.get_connection_params()
    database_url = (
        f"postgres://{params['user']}@{quote(str(params['host']), safe='')}:{params['port']}"
        f"/{params['dbname']}"
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "MEMORY_PROXY_UPSTREAM_URL": upstream_url,
        "API_RATE_LIMIT": "",
        "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--log-level", "warning"],
        cwd=Path(__file__).resolve().parent.parent,
        env=environment,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, "uvicorn stopped"
            try:
                httpx2.get(f"{url}/healthz", timeout=1)
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline, "uvicorn did not start"
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def chat(body: dict[str, object], stream: bool = False) -> dict[str, object]:
    recent = body["recent_messages"]
    assert isinstance(recent, list)
    turns = [
        {"role": "user" if i % 2 else "assistant", "content": text} for i, text in enumerate(recent)
    ]
    return {
        "model": "gpt-4o",
        "stream": stream,
        "messages": [
            {"role": "system", "content": "You are helpful."},
            *turns,
            {"role": "user", "content": body["message"]},
        ],
    }


def until_received(
    client: httpx2.Client, url: str, bodies: list[dict[str, object]], upstream: FakeUpstream
) -> list[float]:
    """Per request: ms from sending it to the upstream receiving it."""
    times = []
    for body in bodies:
        started = time.perf_counter()
        response = client.post(url, json=chat(body))
        assert response.status_code == 200, response.text
        times.append((upstream.received_at[-1] - started) * 1000)
    return times


def first_byte(client: httpx2.Client, url: str, bodies: list[dict[str, object]]) -> list[float]:
    """Per streamed request: ms from sending it to its first byte of body."""
    times = []
    for body in bodies:
        started = time.perf_counter()
        with client.stream("POST", url, json=chat(body, stream=True)) as response:
            chunks = response.iter_raw()
            next(chunks)
            times.append((time.perf_counter() - started) * 1000)
            for _chunk in chunks:
                pass
    return times


def line(label: str, values: list[float]) -> str:
    return (
        f"  {label:<34} p50 {percentile(values, 0.5):6.1f}  p95 {percentile(values, 0.95):6.1f}"
        f"  mean {statistics.mean(values):6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=10_000, help="the user's memories")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="measure the added latency this many times (the same requests) and print the "
        "median of the runs' p50 and p95",
    )
    parser.add_argument("--streamed", type=int, default=200, help="streamed requests")
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()
    from django.contrib.auth import get_user_model

    from accounts.models import ApiToken
    from api.proxy import CLIENT as PROXY_CLIENT
    from conversations.models import Conversation
    from tests.live_asgi import FakeUpstream

    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request otherwise
    use_bench_database("memoryapp_bench_proxy")
    bench_id, _small_id = fill(args.memories * 2, args.memories)
    user = get_user_model().objects.get(pk=bench_id)
    # Each run starts from the same past: without the chats earlier runs stored (2,000
    # messages a run), which every preview would search as past turns.
    Conversation.objects.filter(owner=user, client=PROXY_CLIENT).delete()
    secret = ApiToken.issue(user=user, name="bench proxy")[1]
    bodies = queries(args.requests + args.warmup)

    with (
        FakeUpstream() as upstream,
        memoryapp_server(upstream.url) as server,
        httpx2.Client(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as client,
    ):
        proxy = f"{server}/v1/chat/completions"
        direct = f"{upstream.url}/chat/completions"
        until_received(client, proxy, bodies[: args.warmup], upstream)
        until_received(client, direct, bodies[: args.warmup], upstream)
        measured = bodies[args.warmup :]
        run_figures = []
        for run in range(1, args.runs + 1):
            if run > 1:  # Each run from the same past, as the first.
                Conversation.objects.filter(owner=user, client=PROXY_CLIENT).delete()
            via_proxy = until_received(client, proxy, measured, upstream)
            baseline = until_received(client, direct, measured, upstream)
            blocks = sum(
                request["body"]["messages"][0]["content"] != "You are helpful."
                for request in upstream.requests[-2 * len(measured) : -len(measured)]
            )
            added = [p - d for p, d in zip(via_proxy, baseline, strict=True)]
            run_figures.append((percentile(added, 0.5), percentile(added, 0.95)))
            print(
                f"\nMemory proxy, {len(measured):,} requests one after another, a user with "
                f"{args.memories:,} of {args.memories * 2:,} memories "
                f"({blocks:,} requests got a memory block)"
                + (f", run {run} of {args.runs}:" if args.runs > 1 else ":")
            )
            print(line("send → upstream receives, proxy", via_proxy))
            print(line("send → upstream receives, direct", baseline))
            print(line("added by memoryapp (per request)", added))
        streamed = measured[: args.streamed]
        ttfb_proxy = first_byte(client, proxy, streamed)
        ttfb_direct = first_byte(client, direct, streamed)

    if args.runs > 1:
        print(
            f"\nAdded by memoryapp over {args.runs} runs: median p50 "
            f"{statistics.median(p50 for p50, _p95 in run_figures):.1f} ms, median p95 "
            f"{statistics.median(p95 for _p50, p95 in run_figures):.1f} ms (p95 of each run: "
            + ", ".join(f"{p95:.1f}" for _p50, p95 in run_figures)
            + ")"
        )
    print(f"\nTime to first streamed byte, {len(streamed):,} streamed requests:")
    print(line("through the proxy", ttfb_proxy))
    print(line("upstream directly", ttfb_direct))


if __name__ == "__main__":
    main()
