"""Vector buckets: vectors are indexed by HNSW in VECTOR_BUCKETS partial indexes, one per
bucket of pools (a user's or a project's rows go to that id's bucket).

pgvector filters an HNSW scan only after it, so a search must scan enough of an index's
nearest rows that enough are the caller's; within one bucket they are a larger share than in
the whole table (``vectors.vector_search``).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q
from pgvector.django import HnswIndex

VECTOR_BUCKETS = 8
ALL_BUCKETS = tuple(range(VECTOR_BUCKETS))
# The name of every table's bucket index ends so (its bucket is the number), whatever the
# table: ``statistics.table_statistics`` reads each one's size by it.
HNSW_BUCKET_SUFFIX = r"_hnsw_([0-9]+)$"


def vector_bucket(pool_id: int) -> int:
    """The bucket of a pool's vectors: a user's or a project's id."""
    return pool_id % VECTOR_BUCKETS


def pool_buckets(user_id: int, project_ids: Iterable[int] = ()) -> tuple[int, ...]:
    """The buckets of a user's own rows and of their projects' (``project_ids``)."""
    return tuple(sorted({vector_bucket(user_id), *(vector_bucket(pk) for pk in project_ids)}))


def bucket_hnsw_indexes(prefix: str) -> list[HnswIndex]:
    """The HNSW indexes of a table whose rows have their pool's ``vector_bucket``: one per
    bucket, named ``prefix`` and the bucket (``prefix`` ends in "_hnsw_")."""
    return [
        HnswIndex(
            name=f"{prefix}{bucket}",
            fields=["embedding"],
            m=16,
            ef_construction=64,
            opclasses=["vector_cosine_ops"],
            condition=Q(vector_bucket=bucket),
        )
        for bucket in range(VECTOR_BUCKETS)
    ]
