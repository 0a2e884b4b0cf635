"""config.gc_tuning: start-up objects leave the collector's sight in long-running processes."""

from __future__ import annotations

import gc

from config.gc_tuning import freeze_startup_objects


def test_freezing_moves_the_live_objects_to_the_permanent_generation():
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > 0
        # A full collection no longer walks them: what it sees is far fewer objects.
        assert len(gc.get_objects(generation=2)) < gc.get_freeze_count()
    finally:
        gc.unfreeze()
