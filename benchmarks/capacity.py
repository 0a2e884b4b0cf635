"""Every figure of docs/DEPLOY.md's capacity page, in one command.

    python benchmarks/capacity.py                 # modest: 0.1 of the full sizes
    python benchmarks/capacity.py --scale 1       # the full figures (1,000,000 memories)

1. Previews per second: benchmarks/recall_speed.py (a user with 100,000 of 1,000,000
   memories at scale 1), its concurrent clients in separate processes.
2. Extraction messages per second and the forgetting pass over 1,000,000 memories (at
   scale 1): benchmarks/extraction.py.
3. Database size per 1,000 messages and per 1,000 memories, as the app stores them: a
   user's conversations sent through the API and extracted, and memories added through
   it, each with its vector and search document; table, indexes and TOAST together, the
   empty tables' size taken off.

Each part prints as it goes; the summary at the end repeats the figures. Timing figures
need a quiet machine: every core the benchmark does not get moves them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
# The lines of the other benchmarks' output that carry a capacity figure.
FIGURES = re.compile(
    r"concurrent clients: .*requests/s|throughput: median .*messages/s|first pass|steady-state"
)
SIZE_TABLES = {
    "messages": ["memoryapp_message"],
    "memories": ["memoryapp_memory", "memoryapp_memoryevent"],
}


def run_benchmark(script: str, *args: str) -> list[str]:
    """Run ``script`` with its output shown; the lines that carry a figure."""
    print(f"\n=== {script} {' '.join(args)}", flush=True)
    process = subprocess.Popen(
        [sys.executable, str(BENCHMARKS / script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    figures = []
    for line in process.stdout:
        print(line, end="", flush=True)
        if FIGURES.search(line):
            figures.append(line.strip())
    if process.wait() != 0:
        raise SystemExit(f"{script} failed")
    return figures


def sizes(count: int) -> list[str]:
    """Bytes per 1,000 messages and per 1,000 memories stored through the API."""
    from _setup import benchmark_database, setup_django

    setup_django()
    import json

    from django.db import connection
    from django.test import Client

    from accounts.models import ApiToken
    from recall import bookkeeping
    from tests.conftest import make_user

    def total_bytes(tables: list[str]) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT sum(pg_total_relation_size(t::regclass)) FROM unnest(%s::text[]) t",
                [tables],
            )
            return int(cursor.fetchone()[0])

    def post(client: Client, path: str, body: object) -> dict[str, object]:
        response = client.post(path, json.dumps(body), content_type="application/json")
        assert response.status_code in (200, 201, 202), response.content[:300]
        return dict(response.json())

    print(f"\n=== database size: {count:,} messages and {count:,} memories through the API")
    with benchmark_database("bench_capacity_sizes"):  # jobs run inline (test settings)
        empty = {kind: total_bytes(tables) for kind, tables in SIZE_TABLES.items()}
        user = make_user("sizes@example.com")
        _token, secret = ApiToken.issue(user=user, name="sizes")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        per_conversation = 100
        for number in range(count // per_conversation):
            conversation = post(client, "/api/v1/conversations", {"external_id": f"c{number}"})
            batch = [
                {
                    "external_id": f"m{index}",
                    "role": "user" if index % 2 == 0 else "assistant",
                    "content": (
                        f"I moved to city number {number} last spring and I prefer tea {index}."
                        if index % 2 == 0
                        else f"That sounds like a good change, tell me more about it ({index})."
                    ),
                }
                for index in range(per_conversation)
            ]
            post(
                client, f"/api/v1/conversations/{conversation['id']}/messages", {"messages": batch}
            )
            post(client, f"/api/v1/conversations/{conversation['id']}/end", {})
        for index in range(count):
            post(
                client,
                "/api/v1/memories",
                {"content": f"Memory {index}: prefers a standing desk and walks at lunch {index}"},
            )
        bookkeeping.flush()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        from memories.models import Memory

        memories = Memory.objects.count()
        message_bytes = total_bytes(SIZE_TABLES["messages"]) - empty["messages"]
        memory_bytes = total_bytes(SIZE_TABLES["memories"]) - empty["memories"]
    return [
        f"database size per 1,000 messages: {message_bytes * 1000 / count / 1e6:.2f} MB",
        f"database size per 1,000 memories: {memory_bytes * 1000 / memories / 1e6:.2f} MB "
        f"({memories:,} memories: {count:,} added and the rest extracted)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1, help="1 = the full sizes")
    parser.add_argument("--clients", type=int, default=2, help="concurrent preview clients")
    parser.add_argument("--sizes", type=int, default=2000, help="messages and memories stored")
    args = parser.parse_args()
    scale = str(args.scale)
    figures = run_benchmark(
        "recall_speed.py", "--scale", scale, "--clients", str(args.clients),
        "--requests", "400", "--warmup", "100",
    )  # fmt: skip
    figures += run_benchmark("extraction.py", "--scale", scale, "--repeat", "3")
    figures += sizes(args.sizes)
    print(f"\n=== Capacity figures (scale {scale}; 1 = 1,000,000 memories)")
    for figure in figures:
        print(f"  {figure}")


if __name__ == "__main__":
    main()
