"""How much of what a conversation's questions need the rules extractor keeps.

    python benchmarks/rules_coverage.py [--data PATH] [--verbose] [--rounds N]

The data is a list of conversations in the LoCoMo format: sessions of turns
({speaker, dia_id, text}) with a date each, and questions whose answers rest
on some turns (their ``evidence``). Each session is fed to RulesExtractor as
one window: speaker_a is the account's user, speaker_b either the assistant
(when named "Assistant" or "助手") or another human. Printed, per
conversation and in total: candidates proposed, the share of evidence turns
that some candidate cites (coverage), candidates carrying a secret before and
after the sensitive-data filter runs.py applies, and messages per second of
the extractor alone. No database is needed.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from _setup import BASE_DIR, setup_django

DATA = BASE_DIR.parent / "shared" / "data" / "conversations_dev.json"
ASSISTANT_NAMES = {"assistant", "助手", "ai"}
_SESSION = re.compile(r"^session_(\d+)$")


def session_date(text: str) -> datetime | None:
    for pattern in ("%I:%M %p on %d %B, %Y", "%d %B, %Y", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text.strip(), pattern)
        except ValueError:
            continue
    return None


def windows(sample: dict[str, Any]) -> list[tuple[list[Any], dict[int, str]]]:
    """Each session as (messages, message id -> dia_id)."""
    from conversations.extraction import WindowMessage

    conversation = sample["conversation"]
    user, other = conversation["speaker_a"], conversation["speaker_b"]
    other_is_assistant = other.strip().lower() in ASSISTANT_NAMES
    result = []
    next_id = 1
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    for number in numbers:
        sent_at = session_date(conversation.get(f"session_{number}_date_time", ""))
        messages, dia_ids = [], {}
        for position, turn in enumerate(conversation[f"session_{number}"], start=1):
            speaker = turn["speaker"]
            is_user = speaker == user
            role = "assistant" if (speaker == other and other_is_assistant) else "user"
            messages.append(
                WindowMessage(
                    id=next_id,
                    position=position,
                    role=role,
                    content=turn["text"],
                    speaker=speaker,
                    is_account_user=is_user,
                    sent_at=sent_at,
                )
            )
            dia_ids[next_id] = turn["dia_id"]
            next_id += 1
        result.append((messages, dia_ids))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--verbose", action="store_true", help="print every evidence turn missed")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds (median is printed)")
    args = parser.parse_args()
    setup_django()
    from conversations.extraction.rules import RulesExtractor
    from conversations.extraction.runs import _is_sensitive, worth_reading
    from memories.sensitive import contains_sensitive

    samples = json.loads(args.data.read_text())
    extractor = RulesExtractor()
    totals = {"candidates": 0, "evidence": 0, "covered": 0, "secret": 0, "kept_secret": 0}
    all_windows = []
    for sample in samples:
        evidence = {dia for qa in sample.get("qa", []) for dia in qa.get("evidence", [])}
        cited: set[str] = set()
        texts: dict[str, str] = {}
        counts = {"candidates": 0, "secret": 0, "kept_secret": 0}
        for messages, dia_ids in windows(sample):
            texts.update({dia_ids[m.id]: f"{m.speaker}: {m.content}" for m in messages})
            kept = worth_reading(messages)
            all_windows.append(kept)
            for candidate in extractor.extract(kept):
                counts["candidates"] += 1
                cited.update(dia_ids[i] for i in candidate.message_ids if i in dia_ids)
                if contains_sensitive(f"{candidate.content}\n{candidate.quote}"):
                    counts["secret"] += 1
                    if not _is_sensitive(candidate):
                        counts["kept_secret"] += 1
        covered = evidence & cited
        print(
            f"{sample['sample_id']:<10} candidates {counts['candidates']:>4}  coverage "
            f"{len(covered) / max(len(evidence), 1):.2f} ({len(covered)}/{len(evidence)})  "
            f"with a secret {counts['secret']} (after the filter {counts['kept_secret']})"
        )
        if args.verbose:
            for dia in sorted(evidence - cited):
                print(f"    missed {dia}  {texts.get(dia, '?')[:160]}")
        totals["candidates"] += counts["candidates"]
        totals["secret"] += counts["secret"]
        totals["kept_secret"] += counts["kept_secret"]
        totals["evidence"] += len(evidence)
        totals["covered"] += len(covered)
    print(
        f"{'total':<10} candidates {totals['candidates']:>4}  coverage "
        f"{totals['covered'] / max(totals['evidence'], 1):.2f} "
        f"({totals['covered']}/{totals['evidence']})  with a secret {totals['secret']} "
        f"(after the filter {totals['kept_secret']}, target 0)"
    )
    message_count = sum(len(window) for window in all_windows)
    rates = []
    for _ in range(max(args.rounds, 1)):
        started = time.perf_counter()
        for window in all_windows:
            extractor.extract(window)
        rates.append(message_count / (time.perf_counter() - started))
    rates.sort()
    print(
        f"throughput {rates[len(rates) // 2]:,.0f} messages/s "
        f"({message_count} messages, median of {len(rates)}; target >= 2,000)"
    )


if __name__ == "__main__":
    main()
