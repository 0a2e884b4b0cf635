"""Signals other apps listen to, so this app need not import them (the layers go one way)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the purge's transaction with ``memory_ids``: the memories deleted for good.
# Apps keeping memory ids of their own (recall's access log) forget them then.
memories_purged = Signal()
