from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from memories import forgetting
from memories.forgetting import forget
from memories.models import EventAction, ForgettingReport, Memory, MemoryEvent
from memories.services import memory_create, memory_restore

pytestmark = pytest.mark.django_db


def _memory(owner: Any, days_ago: float, **fields: Any) -> Memory:
    memory = memory_create(owner=owner, content=fields.pop("content", "A fact"), **fields)
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return memory


def _after(memory: Memory) -> Memory:
    memory.refresh_from_db()
    return memory


def test_forgotten_below_the_threshold_and_not_just_above(alice: Any) -> None:
    # relevance = 0.8 * exp(-0.01 * days) crosses 0.1 at 207.9 days.
    kept = _memory(alice, 207, kind="fact")
    gone = _memory(alice, 209, kind="fact")
    report = forget()
    assert _after(kept).forgotten_at is None
    assert _after(gone).forgotten_at is not None
    assert report.counts["forgotten"] == {"fact": 1}
    event = gone.events.first()
    assert (event.action, event.actor_label) == (EventAction.FORGOTTEN, "forgetting")
    assert event.before["forgotten_at"] is None and event.after["forgotten_at"]
    assert event.after["revision"] == event.before["revision"] + 1


def test_uses_keep_a_memory(alice: Any) -> None:
    used = _memory(alice, 0, kind="fact")
    Memory.objects.filter(pk=used.pk).update(
        access_count=10, last_accessed_at=timezone.now() - timedelta(days=209)
    )
    forget()
    assert _after(used).forgotten_at is None
    assert _after(used).importance == 0.8


def test_importance_lowered_below_point_three_once_per_period(alice: Any) -> None:
    # 0.8 * exp(-0.01 * days) crosses 0.3 at 98.1 days.
    above = _memory(alice, 97, kind="fact")
    below = _memory(alice, 99, kind="fact")
    report = forget()
    assert _after(above).importance == 0.8
    assert _after(below).importance == pytest.approx(0.72)
    assert report.counts["importance_lowered"] == {"fact": 1}
    assert below.events.first().action == EventAction.DECAYED
    forget(now=timezone.now() + timedelta(days=1))
    assert _after(below).importance == pytest.approx(0.72)
    forget(now=timezone.now() + timedelta(days=31))
    assert _after(below).importance == pytest.approx(0.648)


def test_context_fades_after_seven_days(alice: Any) -> None:
    fresh = _memory(alice, 6.9, kind="context")
    stale = _memory(alice, 7.1, kind="context")
    forget()
    assert _after(fresh).forgotten_at is None
    assert _after(stale).forgotten_at is not None


def test_unused_thirty_days_lose_confidence_down_to_the_floor(alice: Any) -> None:
    recent = _memory(alice, 29, kind="preference", confidence=0.8)
    unused = _memory(alice, 31, kind="preference", confidence=0.8)
    low = _memory(alice, 31, kind="preference", confidence=0.105)
    lower = _memory(alice, 31, kind="preference", confidence=0.05)
    report = forget()
    assert _after(recent).confidence == 0.8
    assert _after(unused).confidence == pytest.approx(0.72)
    assert _after(low).confidence == pytest.approx(0.1)
    assert _after(lower).confidence == pytest.approx(0.05)
    assert report.counts["confidence_lowered"] == {"preference": 3}


def test_pinned_pending_and_deleted_memories_never_fade(alice: Any) -> None:
    pinned = _memory(alice, 400, kind="context", pinned=True)
    pending = _memory(alice, 400, kind="context", status="pending")
    forget()
    assert _after(pinned).forgotten_at is None and _after(pinned).confidence == 0.8
    assert _after(pending).forgotten_at is None


def test_twice_the_same_day_changes_nothing_more(alice: Any) -> None:
    memory = _memory(alice, 31, kind="preference")
    first = forget()
    events = MemoryEvent.objects.count()
    second = forget()
    assert second.pk == first.pk
    assert MemoryEvent.objects.count() == events
    assert _after(memory).confidence == pytest.approx(0.72)
    assert ForgettingReport.objects.count() == 1


def test_a_forgotten_memory_can_be_restored(alice: Any) -> None:
    memory = _memory(alice, 300, kind="fact")
    forget()
    memory_restore(memory=_after(memory), actor=alice)
    assert Memory.objects.in_effect().filter(pk=memory.pk).exists()


def test_command_dry_run_changes_nothing(alice: Any, capsys: Any) -> None:
    memory = _memory(alice, 300, kind="fact")
    call_command("forget_memories", "--dry-run")
    assert '"forgotten": 1' in capsys.readouterr().out
    assert _after(memory).forgotten_at is None
    assert not ForgettingReport.objects.exists()
    call_command("forget_memories")
    assert _after(memory).forgotten_at is not None
    assert ForgettingReport.objects.get().counts["total"]["forgotten"] == 1


def test_the_daily_schedule_exists() -> None:
    from django_q.models import Schedule

    from memories.jobs import ensure_schedules

    ensure_schedules()
    schedule = Schedule.objects.get(name="forget unused memories")
    assert (schedule.func, schedule.schedule_type) == (
        "memories.jobs.forget_memories",
        Schedule.DAILY,
    )
    assert schedule.next_run > timezone.now()


def test_a_pass_in_many_id_ranges_records_exact_before_and_after(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forgetting, "BATCH_IDS", 2)
    stale = [_memory(alice, 300, kind="fact", content=f"Old fact {i}") for i in range(3)]
    faded = [_memory(alice, 160, kind="preference", confidence=0.8) for _i in range(3)]
    fresh = _memory(alice, 1, kind="fact")
    stale_before = stale[0].snapshot()
    report = forget()
    assert report.counts["total"] == {
        "forgotten": 3,
        "importance_lowered": 3,
        "confidence_lowered": 3,
    }
    assert all(_after(memory).forgotten_at for memory in stale)
    assert _after(fresh).revision == 1 and not fresh.events.exclude(action="created").exists()
    event = MemoryEvent.objects.get(memory=faded[0], action=EventAction.DECAYED)
    memory = _after(faded[0])
    assert event.after == memory.snapshot()
    assert event.before == memory.snapshot() | {"importance": 0.9, "confidence": 0.8, "revision": 1}
    assert memory.importance == pytest.approx(0.81) and memory.confidence == pytest.approx(0.72)
    forgotten = MemoryEvent.objects.get(memory=stale[0], action=EventAction.FORGOTTEN)
    assert forgotten.after == _after(stale[0]).snapshot()
    assert forgotten.before == stale_before
