"""Precision and recall of the rules extractor on a labelled bilingual set.

    python benchmarks/extraction_quality.py [--verbose]

The set (benchmarks/data/extraction_quality.json) was written for this
project: conversations in English and Chinese, each with what should be
remembered (kind and words the memory must contain) and, implicitly,
everything else that should not. Sensitive data is dropped as in a real run.
A candidate is correct when it matches an expected memory not matched yet.
Target: precision >= 0.9. No database is needed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from _setup import setup_django

DATA = Path(__file__).resolve().parent / "data" / "extraction_quality.json"


def _matches(candidate: Any, expected: dict[str, Any]) -> bool:
    content = candidate.content.lower()
    return candidate.kind == expected["kind"] and all(
        word.lower() in content for word in expected["contains"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every miss and false hit")
    args = parser.parse_args()
    setup_django()
    from conversations.extraction import WindowMessage
    from conversations.extraction.rules import RulesExtractor
    from conversations.extraction.runs import _is_sensitive, is_trivial, screened

    conversations = json.loads(DATA.read_text())
    extractor = RulesExtractor()
    proposed = correct = expected_total = found = 0
    for conversation in conversations:
        window = [
            WindowMessage(id=index, position=index, role=m["role"], content=m["content"])
            for index, m in enumerate(conversation["messages"], start=1)
        ]
        messages = [m for m in screened(window) if not is_trivial(m.role, m.content)]
        candidates = [c for c in extractor.extract(messages) if not _is_sensitive(c)]
        unmatched = list(conversation["expected"])
        proposed += len(candidates)
        expected_total += len(unmatched)
        for candidate in candidates:
            hit = next((e for e in unmatched if _matches(candidate, e)), None)
            if hit is not None:
                unmatched.remove(hit)
                correct += 1
            elif args.verbose:
                print(f"  false hit  {conversation['id']}: {candidate.kind} {candidate.content!r}")
        found += len(conversation["expected"]) - len(unmatched)
        if args.verbose:
            for miss in unmatched:
                print(f"  missed     {conversation['id']}: {miss['kind']} {miss['contains']}")
    precision = correct / proposed if proposed else 1.0
    recall = found / expected_total if expected_total else 1.0
    print(
        f"conversations {len(conversations)}, expected memories {expected_total}, proposed {proposed}"
    )
    print(f"precision {precision:.2f} (target >= 0.90), recall {recall:.2f}")


if __name__ == "__main__":
    main()
