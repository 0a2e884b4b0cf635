"""Recall quality on a labelled bilingual set: Recall@5, Recall@10 and MRR.

    python benchmarks/recall_quality.py [--data benchmarks/data/recall_quality.json]

Loads the set's memories for one user (in a throw-away test database, embedded
with the configured provider), runs each query through ``search_memories`` in
keyword-only, vector-only and hybrid mode, and prints the figures. Recall@k is
the share of expected memories found in the first k; MRR is the mean of
1 / rank of the first expected memory (0 when none is found).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from memories import services  # noqa: E402
from memories.search import MODES, search_memories  # noqa: E402
from search.embeddings import get_provider, store_embeddings  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "recall_quality.json"


def evaluate(data: dict, mode: str, user: Any, ids: dict[str, int]) -> dict[str, float]:
    recall5 = recall10 = reciprocal = 0.0
    for case in data["queries"]:
        expected = {ids[name] for name in case["expected"]}
        found = [
            item.memory.pk
            for item in search_memories(user, case["query"], limit=10, mode=mode).memories
        ]
        recall5 += len(expected & set(found[:5])) / len(expected)
        recall10 += len(expected & set(found[:10])) / len(expected)
        first = next((rank for rank, pk in enumerate(found, start=1) if pk in expected), None)
        reciprocal += 1 / first if first else 0.0
    count = len(data["queries"])
    return {"Recall@5": recall5 / count, "Recall@10": recall10 / count, "MRR": reciprocal / count}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    settings.DATABASES["default"]["TEST"].update(NAME="memoryapp_quality")
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=True, serialize=False)
    provider = get_provider()
    with transaction.atomic():
        user = get_user_model().objects.create(username="quality", email="quality@example.com")
        ids = {
            item["id"]: services.memory_create(
                owner=user, content=item["content"], kind=item["kind"]
            ).pk
            for item in data["memories"]
        }
        store_embeddings(
            [
                (pk, item["content"])
                for item, pk in zip(data["memories"], ids.values(), strict=True)
            ],
            provider,
        )
        print(
            f"{len(data['memories'])} memories, {len(data['queries'])} queries, "
            f"provider {provider.model_name}\n"
        )
        print(f"{'mode':<10}{'Recall@5':>10}{'Recall@10':>11}{'MRR':>8}")
        for mode in ("keyword", "vector", "hybrid"):
            assert mode in MODES
            scores = evaluate(data, mode, user, ids)
            print(
                f"{mode:<10}{scores['Recall@5']:>10.3f}{scores['Recall@10']:>11.3f}{scores['MRR']:>8.3f}"
            )
        transaction.set_rollback(True)


if __name__ == "__main__":
    main()
