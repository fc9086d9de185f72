"""Draw TAT-QA questions and the contexts their answers are written from.

TAT-QA (Zhu et al., ACL 2021; CC BY 4.0) asks questions about financial reports: a table
and the paragraphs around it, answers that are spans, lists, counts or a computation over
the table with a scale ("million", "percent"). It is the shape the issue names -- answers
that compute, round and rescale -- and it is unlike the other folders' Wikipedia text.

    python benchmarks/data/real_answers/tatqa/build.py TATQA_DEV_JSON OUT.jsonl [ROUND [FIRST_ID]]

TATQA_DEV_JSON is ``dataset_raw/tatqa_dataset_dev.json`` of github.com/NExTplusplus/TAT-QA.
One question per report, drawn with a fixed seed and stratified by answer type; each gets
one context variant, rotated: ``gold`` (its table and paragraphs), ``padded`` (gold plus
another report's, shuffled), ``dropped`` (another report's only: the context lacks the
answer), ``cut`` (the half the answer does not come from removed: a table question keeps
its paragraphs only, a text question its table only). The split is a hash of the question
id, as in the other folders. The output holds the question, the contexts and the upstream
reference; answers and grades are added by hand (README.md says how). ROUND (default 1)
draws the next 80 questions of the same shuffled order, from reports no earlier round used,
numbered on from the last round's ids: round 2 is a second set written and graded later.
FIRST_ID numbers a round drawn from another file of TAT-QA's (round 3 is round 1 of
``dataset_raw/tatqa_dataset_test_gold.json``, numbered from 181).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

QUOTA = {"arithmetic": 40, "span": 18, "multi-span": 14, "count": 8}
VARIANTS = ("gold", "padded", "gold", "dropped", "gold", "cut", "padded", "dropped")


def table_text(table: list[list[str]]) -> str:
    """The table as a markdown pipe table, the way a RAG loader commonly renders one."""
    rows = [[cell.replace("\n", " ").strip() for cell in row] for row in table]
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def passages(report: dict[str, Any]) -> list[str]:
    paragraphs = sorted(report["paragraphs"], key=lambda p: p["order"])
    return [table_text(report["table"]["table"]), *(p["text"] for p in paragraphs)]


def split_of(uid: str) -> str:
    return "tune" if int(hashlib.sha256(uid.encode()).hexdigest(), 16) % 2 == 0 else "measure"


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    wanted = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    first_id = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    reports = json.loads(source.read_text(encoding="utf-8"))
    rng = random.Random(20261128)
    order = list(range(len(reports)))
    rng.shuffle(order)
    rows: list[dict[str, Any]] = []
    start = 0
    for round_ in range(1, wanted + 1):
        first = len(rows)
        start = draw(reports, order, start, rng, rows, first_id)
        if round_ < wanted:
            continue
        out.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[first:]),
            encoding="utf-8",
        )
        print(f"{len(rows) - first} questions -> {out}", file=sys.stderr)


def draw(
    reports: list[dict[str, Any]],
    order: list[int],
    start: int,
    rng: random.Random,
    rows: list[dict[str, Any]],
    first_id: int = 1,
) -> int:
    """One round's questions appended to ``rows``, from ``order[start:]``; returns where
    the next round starts."""
    taken = dict.fromkeys(QUOTA, 0)
    for n in range(start, len(order)):
        index = order[n]
        report = reports[index]
        questions = [
            q
            for q in report["questions"]
            if taken.get(q["answer_type"], 99) < QUOTA[q["answer_type"]]
        ]
        if not questions:
            continue
        q = rng.choice(questions)
        taken[q["answer_type"]] += 1
        variant = VARIANTS[len(rows) % len(VARIANTS)]
        own = passages(report)
        other = passages(reports[order[(n + 7) % len(order)]])
        if variant == "gold":
            contexts = own
        elif variant == "padded":
            contexts = own + other
            rng.shuffle(contexts)
        elif variant == "dropped":
            contexts = other
        else:  # cut: keep the half the answer does not come from
            contexts = own[1:] if q["answer_from"] in ("table", "table-text") else own[:1]
        rows.append(
            {
                "id": f"tatqa-en-{len(rows) + first_id:04d}",
                "lang": "en",
                "source": "tatqa",
                "split": split_of(q["uid"]),
                "question": q["question"],
                "contexts": contexts,
                "origin": {
                    "tatqa_uid": q["uid"],
                    "table_uid": report["table"]["uid"],
                    "variant": variant,
                    "answer": q["answer"],
                    "derivation": q["derivation"],
                    "scale": q["scale"],
                    "answer_type": q["answer_type"],
                    "answer_from": q["answer_from"],
                },
            }
        )
        if all(taken[k] >= v for k, v in QUOTA.items()):
            return n + 1
    return len(order)


if __name__ == "__main__":
    main()
