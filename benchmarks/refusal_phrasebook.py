"""Does cofe's refusal reader find declines phrased in ways its rules were not written from?

    python benchmarks/refusal_phrasebook.py

Reads benchmarks/data/refusal_phrasebook/: round 1 ``{en,zh}.jsonl`` and round 2
``{en,zh}2.jsonl``, each round by another writer (its README says how they were made),
and prints, per round, language and split, how many refusals ``cofe.refusal.read_decline`` reads as
whole, how many it leaves to the points (a decline among other sentences: the answer step
settles it against the information points, which this set does not carry), how many
partial refusals it finds a decline in, and how many answers it wrongly reads as declining. ``--speed`` prints instead what reading
costs: microseconds an answer over every answer of the real-answers set and this phrasebook
(most decline nothing, as in a run), the lowest of five passes.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from cofe.refusal import Extent, read_decline

DATA = Path(__file__).resolve().parent / "data" / "refusal_phrasebook"


def count(rows: list[dict[str, str]]) -> Counter[str]:
    """What the refusal reader makes of one split's lines, by kind."""
    c: Counter[str] = Counter()
    for row in rows:
        found = read_decline(row["answer"])
        extent = None if found is None else found.extent
        c[row["kind"]] += 1
        if row["kind"] == "refusal":
            c[
                "whole"
                if extent is Extent.WHOLE
                else "points"
                if extent is Extent.PARTIAL
                else "missed"
            ] += 1
        elif row["kind"] == "partial":
            c["partial_found"] += extent is Extent.PARTIAL or extent is Extent.WHOLE
        else:
            c["false"] += extent is Extent.WHOLE or extent is Extent.PARTIAL
    return c


def speed() -> None:
    """Microseconds ``read_decline`` takes an answer, lowest of five passes."""
    texts = [
        json.loads(line)["answer"]
        for path in sorted((DATA.parent / "real_answers").glob("*/*.jsonl"))
        + sorted(DATA.glob("*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ]
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        for text in texts:
            read_decline(text)
        best = min(best, time.perf_counter() - began)
    print(f"{len(texts)} answers: {best / len(texts) * 1e6:.1f} us an answer")


def main() -> None:
    if "--speed" in sys.argv[1:]:
        speed()
        return
    print(
        "| round | lang | split | refusals read whole | left to the points | missed | partial found | answers read as declining |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for round_, suffix in ((1, ""), (2, "2")):
        for lang in ("en", "zh"):
            text = (DATA / f"{lang}{suffix}.jsonl").read_text("utf-8")
            rows = [json.loads(line) for line in text.splitlines() if line]
            for split in ("tune", "measure"):
                c = count([r for r in rows if r["split"] == split])
                n = c["refusal"]
                print(
                    f"| {round_} | {lang} | {split} | {c['whole']}/{n} | {c['points']}/{n} | "
                    f"{c['missed']}/{n} | {c['partial_found']}/{c['partial']} | "
                    f"{c['false']}/{c['answer']} |"
                )


if __name__ == "__main__":
    main()
