"""Embed the memories that have no vector from the configured model, or all of them, and
the other embedded rows the same way (the messages of conversations, for episodic recall:
``embeddings.EMBEDDED_TABLES``).

``--rebuild`` re-embeds everything; when the configured dimension differs from
the columns', it first changes every embedded table's column to that dimension and
recreates its HNSW indexes (the old vectors cannot be kept: they come from another model).
``--download`` first fetches the model2vec model (MEMORY_EMBEDDING_PROVIDER auto or
model2vec) into MEMORY_EMBEDDING_CACHE_DIR when it is not there yet.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from pgvector.django import HnswIndex

from search.embeddings import (
    EMBEDDED_TABLES,
    EmbeddedTable,
    EmbeddingError,
    EmbeddingProvider,
    column_dimensions,
    download_if_missing,
    fallback_reason,
    get_provider,
    reset_caches,
)


def resize_embedding_column(dimensions: int) -> None:
    """Drop every vector, change the embedded tables' columns to ``dimensions`` and recreate
    their indexes."""
    with transaction.atomic(), connection.schema_editor() as editor:
        # ALTER TABLE refuses to run while deferred foreign-key checks are pending.
        editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for embedded in EMBEDDED_TABLES.values():
            model, table = embedded.model, connection.ops.quote_name(embedded.table)
            indexes = [index for index in model._meta.indexes if isinstance(index, HnswIndex)]
            for index in indexes:
                editor.remove_index(model, index)
            editor.execute(f"UPDATE {table} SET embedding = NULL, embedding_model = ''")
            editor.execute(
                f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({int(dimensions)})"
            )
            for index in indexes:
                editor.add_index(model, index)
    reset_caches()


class ProgressBar:
    """One line on stderr, redrawn in place: [#####.....] done/total (percent, rate)."""

    def __init__(self, total: int, stream: Any | None, width: int = 30):
        self.total, self.stream, self.width = total, stream, width
        self.started = time.monotonic()

    def show(self, done: int) -> None:
        if self.stream is None:
            return
        fraction = done / self.total if self.total else 1.0
        filled = int(self.width * fraction)
        rate = done / max(time.monotonic() - self.started, 1e-6)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total} "
            f"({fraction:.0%}, {rate:.0f}/s)",
            ending="\n" if done >= self.total else "",
        )
        self.stream.flush()


class Command(BaseCommand):
    help = "Embed memories with the configured provider (--rebuild: all of them, fixing the dimension)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--rebuild",
            action="store_true",
            help="Re-embed every memory; change the vector column if the dimension changed.",
        )
        parser.add_argument(
            "--download",
            action="store_true",
            help="First download the model2vec model into MEMORY_EMBEDDING_CACHE_DIR if missing.",
        )
        parser.add_argument("--batch-size", type=int, default=64)

    def handle(
        self, *args: Any, rebuild: bool, batch_size: int, download: bool = False, **options: Any
    ) -> None:
        if download:
            download_if_missing()
        if reason := fallback_reason():
            self.stderr.write(f"The embedding model is not used, hash embeddings instead: {reason}")
        provider = get_provider()
        stored = column_dimensions()
        if stored is not None and stored != provider.dimensions:
            if not rebuild:
                raise CommandError(
                    f"The database stores {stored}-dimension vectors and {provider.model_name} "
                    f"gives {provider.dimensions}: run embed_memories --rebuild."
                )
            self.stdout.write(
                f"Changing the vector column from {stored} to {provider.dimensions} dimensions…"
            )
            resize_embedding_column(provider.dimensions)
        counts = []
        for embedded in EMBEDDED_TABLES.values():
            done = self.embed(embedded, provider, rebuild, batch_size, options["verbosity"])
            counts.append(f"{done} {embedded.label}")
        self.stdout.write(
            self.style.SUCCESS(f"Embedded {' and '.join(counts)} with {provider.model_name}.")
        )

    def embed(
        self,
        embedded: EmbeddedTable,
        provider: EmbeddingProvider,
        rebuild: bool,
        batch_size: int,
        verbosity: int,
    ) -> int:
        ids = embedded.pending_ids(None if rebuild else provider.model_name)
        progress = ProgressBar(len(ids), self.stderr if verbosity and ids else None)
        done = 0
        for start in range(0, len(ids), max(1, batch_size)):
            chunk = ids[start : start + batch_size]
            try:
                embedded.store(chunk, provider)
            except EmbeddingError as exc:
                raise CommandError(f"Stopped after {done} {embedded.label}: {exc}") from exc
            done += len(chunk)
            progress.show(done)
        return done
