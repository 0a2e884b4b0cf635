"""Precision, recall and violations of extraction on a labelled bilingual set, through the real job.

    python benchmarks/extraction_quality.py [PATH] [--verbose]

PATH defaults to ../shared/data/extraction_dev.json beside the repository (``{about, cases}``;
its README says how a run is scored); benchmarks/data/extraction_quality.json (the older
``[{id, messages, expected: [{kind, contains}]}]``) is read too. Each case goes to a user of
its own with no memories: a conversation with its messages, ended, and the extraction job run
(the settings' extractor, sensitive-data filter and reconciliation, as in production). The
memories *stored* are those in effect afterwards (active or pending review, alive, not
superseded). A stored memory is *useful* when it matches an expected item (same kind, every
term in its content, compared with ``str.casefold`` and without the spaces next to Chinese
characters); an item is *found* when a stored memory matches it. A *violation* is a stored
memory holding a ``forbid`` term, or, in a case with ``supersede``, every old term and no new
one. Printed: precision, recall and cases with a violation, in all, per language and per
class; ``--verbose`` lists every stored memory that matched nothing, every item not found and
every violation. Target: precision >= 0.90, recall >= 0.85, every class's recall >= 0.75, no
violation. A throw-away database is used.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from _setup import SHARED_DATA, benchmark_database, setup_django

DEFAULT_PATH = SHARED_DATA / "extraction_dev.json"
_SPACE_BY_CJK = re.compile(r"\s*([\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])\s*")


def folded(text: str) -> str:
    return _SPACE_BY_CJK.sub(r"\1", text).casefold()


def load_cases(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    if isinstance(data, dict):
        return list(data["cases"])
    return [
        {
            "id": case["id"],
            "class": "all",
            "messages": case["messages"],
            "expect": [{"kind": e["kind"], "terms": e["contains"]} for e in case["expected"]],
            "forbid": [],
        }
        for case in data
    ]


def stored_memories(case: dict[str, Any], index: int) -> list[tuple[str, str]]:
    """(kind, content) of what the job stores from the case, for a new user."""
    from django.contrib.auth import get_user_model

    from accounts.models import MemorySettings
    from conversations.extraction.runs import execute_run
    from conversations.models import Conversation, ExtractionRun, ExtractionTrigger, Message
    from memories.models import Memory, Status

    user = get_user_model().objects.create_user(
        username=f"case{index}", email=f"case{index}@example.com", password="x"
    )
    MemorySettings.objects.filter(user=user).update(memory_enabled=True)
    conversation = Conversation.objects.create(owner=user, external_id=case["id"])
    Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role=message["role"],
            content=message["content"],
            external_id=f"m{position}",
            position=position,
        )
        for position, message in enumerate(case["messages"], start=1)
    )
    run = ExtractionRun.objects.create(conversation=conversation, trigger=ExtractionTrigger.END)
    execute_run(run.pk)
    stored = (
        Memory.objects.filter(owner=user)
        .alive()
        .current()
        .filter(status__in=[Status.ACTIVE, Status.PENDING])
    )
    return list(stored.values_list("kind", "content"))


def _matches(memory: tuple[str, str], item: dict[str, Any]) -> bool:
    kind, content = memory
    return kind == item["kind"] and all(folded(term) in folded(content) for term in item["terms"])


def _violates(content: str, case: dict[str, Any]) -> bool:
    text = folded(content)
    if any(folded(term) in text for term in case["forbid"]):
        return True
    supersede = case.get("supersede")
    if not supersede:
        return False
    return all(folded(t) in text for t in supersede["old_terms"]) and not any(
        folded(t) in text for t in supersede["new_terms"]
    )


class Tally:
    def __init__(self) -> None:
        self.stored = self.useful = self.expected = self.found = self.cases = self.violated = 0

    def add(self, other: Tally) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def line(self, label: str) -> str:
        precision = self.useful / self.stored if self.stored else 1.0
        recall = self.found / self.expected if self.expected else 1.0
        return (
            f"{label:<14} precision {precision:.2f} ({self.useful}/{self.stored})  "
            f"recall {recall:.2f} ({self.found}/{self.expected})  "
            f"cases with a violation {self.violated}/{self.cases}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--verbose", action="store_true", help="print every miss and false hit")
    args = parser.parse_args()
    setup_django()
    cases = load_cases(args.path)
    total = Tally()
    by_group: dict[str, Tally] = defaultdict(Tally)
    with benchmark_database("bench_extraction_quality"):
        for index, case in enumerate(cases):
            memories = stored_memories(case, index)
            tally = Tally()
            tally.cases, tally.stored = 1, len(memories)
            tally.expected = len(case["expect"])
            for memory in memories:
                if any(_matches(memory, item) for item in case["expect"]):
                    tally.useful += 1
                elif args.verbose:
                    print(f"  not useful {case['id']}: {memory[0]} {memory[1]!r}")
            for item in case["expect"]:
                if any(_matches(memory, item) for memory in memories):
                    tally.found += 1
                elif args.verbose:
                    print(f"  missed     {case['id']}: {item['kind']} {item['terms']}")
            violations = [content for _kind, content in memories if _violates(content, case)]
            tally.violated = 1 if violations else 0
            if args.verbose:
                for content in violations:
                    print(f"  VIOLATION  {case['id']}: {content!r}")
            total.add(tally)
            by_group[f"lang {case['id'][:2]}"].add(tally)
            by_group[f"class {case['class']}"].add(tally)
    print(f"{args.path.name}: {len(cases)} cases")
    print(total.line("all"))
    for label in sorted(by_group):
        print(by_group[label].line(label))
    print("target: precision >= 0.90, recall >= 0.85, every class recall >= 0.75, 0 violations")


if __name__ == "__main__":
    main()
