"""Does cofe's refusal reader find declines phrased in ways its rules were not written from?

    python benchmarks/refusal_phrasebook.py

Reads benchmarks/data/refusal_phrasebook/{en,zh}.jsonl (its README says how it was made)
and prints, per language and split, how many refusals ``cofe.refusal.read_decline`` reads as
whole, how many it leaves to the points (a decline among other sentences: the answer step
settles it against the information points, which this set does not carry), how many
partial refusals it finds a decline in, and how many answers it wrongly reads as declining.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from cofe.refusal import Extent, read_decline

DATA = Path(__file__).resolve().parent / "data" / "refusal_phrasebook"


def main() -> None:
    print(
        "| lang | split | refusals read whole | left to the points | missed | partial found | answers read as declining |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for lang in ("en", "zh"):
        rows = [
            json.loads(line)
            for line in (DATA / f"{lang}.jsonl").read_text("utf-8").splitlines()
            if line
        ]
        for split in ("tune", "measure"):
            c: Counter[str] = Counter()
            for row in (r for r in rows if r["split"] == split):
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
            n = c["refusal"]
            print(
                f"| {lang} | {split} | {c['whole']}/{n} | {c['points']}/{n} | {c['missed']}/{n} | "
                f"{c['partial_found']}/{c['partial']} | {c['false']}/{c['answer']} |"
            )


if __name__ == "__main__":
    main()
