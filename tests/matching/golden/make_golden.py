"""The answer matcher's decisions on every labelled answer, kept to hold a refactoring to them.

    python tests/matching/golden/make_golden.py      # rewrites decisions.jsonl beside it

For every (answer, question, point) of benchmarks/data/answer_points/{en,zh}.jsonl and
holdout/{en,zh}.jsonl: the point's decision and, per slot, the decision and missing units
of the fragment that decided it (the best of the slot's alternatives). The matcher sees
every point, also those an answer writes verbatim (the scorer would not ask it). Only a
deliberate change of what the matcher decides rewrites the file;
tests/matching/test_golden.py checks the matcher against it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "benchmarks" / "data" / "answer_points"
SETS = ("en.jsonl", "zh.jsonl", "holdout/en.jsonl", "holdout/zh.jsonl")
GOLDEN = Path(__file__).resolve().parent / "decisions.jsonl"


def _alternatives(keyword: str | dict[str, Any]) -> list[str]:
    return [keyword] if isinstance(keyword, str) else list(keyword["any_of"])


def decisions() -> Iterator[dict[str, Any]]:
    """One record per (set, question, answer, point), in the files' order."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from cofe.matching import AnswerMatcher

    for name in SETS:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            for a, answer in enumerate(row["answers"]):
                matcher = AnswerMatcher(answer["text"], row["question"])
                for p, point in enumerate(row["points"]):
                    slots = [_alternatives(k) for k in point]
                    found = matcher.point(slots)
                    fragments = []
                    for slot in slots:  # the best alternative of each slot, as point() picks
                        best = min(
                            (matcher.fragment(text) for text in slot),
                            key=lambda f: _RANK[f.decision.value],
                        )
                        fragments.append([best.decision.value, list(best.missing)])
                    yield {
                        "key": f"{name}:{row['id']}:{a}:{p}",
                        "decision": found.decision.value,
                        "fragments": fragments,
                    }


_RANK = {"present": 0, "undecided": 1, "partial": 2, "absent": 3}


def main() -> None:
    with GOLDEN.open("w", encoding="utf-8") as out:
        count = 0
        for record in decisions():
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    print(f"{count} points written to {GOLDEN.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
