"""Does cofe read real LLM answers as their graders do? The generation verdict on answers
that compute, round, hedge, list and refuse.

    python benchmarks/real_answers.py [--data DIR ...] [--split measure|tune|all] [--json [FILE]]
                                      [--show KIND]

The set (``benchmarks/data/real_answers/``, see its FORMAT.md and each source's README)
holds real answers -- by GPT-4o and Llama 3.1 405B on MTRAG's conversations (graded by
MTRAG's human raters, points and per-point labels by a reader who never ran cofe), by the
local instruct model and the extractive generator on SQuAD / CMRC paragraphs whose context
was kept, dropped, truncated or padded with distractors (graded blind) -- each with a grade
(correct, incorrect, refusal, partial_refusal), information points, whether the context
held each point, and a label per point (conveyed, declined, absent, contradicted).

Each answer becomes one sample of a run whose context is the passages the generator saw
(one chunk each; a point the grader says the context held but whose words the passages
phrase otherwise gets one extra chunk holding its fragments, so that the steps before the
answer pass exactly where the grader says the context held the point). The runs are scored
with ``score_run`` and default settings, as a user's would be. Printed per language, source
and split, against the issue's goals:

* **correct blamed** -- answers graded correct, every point held by the context, whose
  verdict blames the generator (goal <= 3 %);
* **refusals recognised** -- answers graded refusal that cofe reads as a refusal (the
  verdict's refusal column; goal >= 90 %); **false refusals** -- answers graded correct or
  incorrect that cofe reads as a refusal (goal <= 2 %);
* **incorrect passed** -- answers graded incorrect, every point held by the context, whose
  verdict is ``pass`` (goal <= 5 %);
* **blame precision** -- of the points that reached the context (the grader's
  ``context_holds``: a point lost before it is blamed on that stage, never on the
  generator) and that cofe says the answer lacks (absent, partial or declined), the share
  the grader says are not conveyed (goal >= 97 %);
* **undecided** -- share of the points that reached the context the offline matcher leaves
  undecided (goal <= 25 %);
* **declined right** -- of the points cofe says are declined, the share the grader labels
  declined (partial refusals, per point).

The ``measure`` split is never looked at while rules are written; ``tune`` is.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe import score_run  # noqa: E402
from cofe.evalset import EvalSample, write_evalset  # noqa: E402
from cofe.runlog import (  # noqa: E402
    Chunk,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunWriter,
    SampleRecord,
)

DATA = ROOT / "benchmarks" / "data" / "real_answers"
GRADES = ("correct", "incorrect", "refusal", "partial_refusal")
NOT_CONVEYED = {"absent", "contradicted", "declined"}
BLAMED = {"absent", "partial", "declined"}
REQUIRED = {
    "id": str,
    "lang": str,
    "question": str,
    "contexts": list,
    "points": list,
    "context_holds": list,
    "answer": str,
    "grade": str,
    "point_labels": list,
    "split": str,
}


def load(paths: list[Path]) -> list[dict[str, Any]]:
    """Every record of the given files (or folders of ``*.jsonl``), checked field by field."""
    rows: list[dict[str, Any]] = []
    files = [f for p in paths for f in (sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])]
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                sys.exit(f"{path}:{number}: not JSON ({error})")
            for field, kind in REQUIRED.items():
                if not isinstance(row.get(field), kind):
                    sys.exit(f"{path}:{number}: field {field!r} missing or not {kind.__name__}")
            n = len(row["points"])
            if not (n == len(row["context_holds"]) == len(row["point_labels"])) or not n:
                sys.exit(f"{path}:{number}: points, context_holds, point_labels differ in length")
            if row["grade"] not in GRADES:
                sys.exit(f"{path}:{number}: field 'grade' is {row['grade']!r}, not one of {GRADES}")
            row.setdefault("source", path.parent.name)
            row["set"] = path.parent.name  # the folder: mtrag, local, extractive
            rows.append(row)
    return rows


def _held_chunk(row: dict[str, Any]) -> str:
    """The fragments of the points the context holds in the grader's reading but not as
    written (the passages phrase them otherwise): one extra chunk, so that those points
    reach the context as the grader says they do."""
    passages = "\n".join(row["contexts"]).casefold()
    missing = [
        fragment
        for point, held in zip(row["points"], row["context_holds"], strict=True)
        if held
        for fragment in point
        if fragment.casefold() not in passages
    ]
    return ". ".join(missing)


def build_run(rows: list[dict[str, Any]], folder: Path) -> None:
    samples, records, documents, chunks = [], [], [], []
    top_k = 1
    for row in rows:
        texts = [c for c in row["contexts"] if c.strip()]
        extra = _held_chunk(row)
        if extra:
            texts.append(extra)
        if not texts:  # no context at all: the answer was written from nothing
            texts = ["(no context)"]
        ids = [f"{row['id']}#{i}" for i in range(len(texts))]
        top_k = max(top_k, len(ids))
        documents.append(
            ParsedDocument(doc_id=row["id"], source=f"{row['id']}.txt", text="\n\n".join(texts))
        )
        chunks += [
            Chunk(chunk_id=cid, doc_id=row["id"], text=text)
            for cid, text in zip(ids, texts, strict=True)
        ]
        samples.append(
            EvalSample(
                id=row["id"],
                query=row["question"],
                coarse_keywords=row.get("coarse_keywords") or [],
                fine_keywords=row["points"],
                reference_answer=row.get("reference") or None,
                source={"doc": f"{row['id']}.txt"},
            )
        )
        records.append(
            SampleRecord(
                sample_id=row["id"],
                pool=[RankedChunk(chunk_id=cid, score=1.0 - i / 100) for i, cid in enumerate(ids)],
                answer=row["answer"],
            )
        )
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(
            run_id=folder.name,
            top_k=top_k,
            stages=["parse", "chunking", "retrieval", "generation"],
        ),
        evalset,
    )
    writer.add_documents(documents)
    writer.add_chunks(chunks)
    writer.add_samples(records)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def measure(rows: list[dict[str, Any]], folder: Path) -> tuple[dict[str, Any], list[dict]]:
    """The figures over ``rows`` (one run), and per answer what cofe said."""
    build_run(rows, folder)
    result = score_run(folder)
    verdict = {r.sample_id: r for r in result.verdicts.itertuples()}
    decisions = {(r.sample_id, int(r.point)): r.answer_decision for r in result.points.itertuples()}
    counts: Counter[str] = Counter()
    per_answer = []
    for row in rows:
        v = verdict[row["id"]]
        held = all(row["context_holds"])
        refused = isinstance(v.refusal, str) and bool(v.refusal)
        blames = str(v.stage) == "generation"
        grade = row["grade"]
        counts[f"n_{grade}"] += 1
        if grade == "correct" and held:
            counts["correct_held"] += 1
            counts["correct_blamed"] += blames
        if grade == "incorrect" and held:
            counts["incorrect_held"] += 1
            counts["incorrect_passed"] += str(v.verdict) == "pass"
        if grade == "refusal":
            counts["refusal_recognised"] += refused
        if grade in ("correct", "incorrect"):
            counts["answers"] += 1
            counts["false_refusal"] += refused
        points = []
        for p, label in enumerate(row["point_labels"]):
            cofe = decisions.get((row["id"], p))
            points.append(cofe)
            if cofe == "declined":
                counts["declined"] += 1
                counts["declined_right"] += label == "declined"
            if not row["context_holds"][p]:
                continue  # lost before the answer: cofe blames that stage, not the generator
            counts["points"] += 1
            counts["undecided"] += cofe == "undecided"
            if cofe in BLAMED:
                counts["blamed"] += 1
                counts["blamed_right"] += label in NOT_CONVEYED
        per_answer.append(
            {
                "id": row["id"],
                "grade": grade,
                "verdict": v.verdict,
                "refusal": v.refusal if refused else None,
                "labels": row["point_labels"],
                "cofe": points,
                "explanation": v.explanation,
            }
        )
    c = counts
    figures = {
        "answers": len(rows),
        "grades": {g: c[f"n_{g}"] for g in GRADES},
        "correct_blamed": _share(c["correct_blamed"], c["correct_held"]),
        "refusals_recognised": _share(c["refusal_recognised"], c["n_refusal"]),
        "false_refusals": _share(c["false_refusal"], c["answers"]),
        "incorrect_passed": _share(c["incorrect_passed"], c["incorrect_held"]),
        "blame_precision": _share(c["blamed_right"], c["blamed"]),
        "undecided": _share(c["undecided"], c["points"]),
        "declined_right": _share(c["declined_right"], c["declined"]),
        "counts": dict(c),
    }
    return figures, per_answer


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, nargs="*", default=[DATA])
    parser.add_argument("--split", choices=("measure", "tune", "all"), default="all")
    parser.add_argument("--json", nargs="?", const="-", default=None)
    parser.add_argument("--show", help="print the answers of one grade and what cofe said")
    args = parser.parse_args()
    rows = load(args.data)
    splits = ("tune", "measure") if args.split == "all" else (args.split,)
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["split"] in splits:
            groups[(row["lang"], row["set"], row["split"])].append(row)
    tmp = Path(tempfile.mkdtemp(prefix="cofe-real-answers-"))
    table, shown = {}, []
    try:
        for key in sorted(groups):
            print(f"{'/'.join(key)}: scoring {len(groups[key])} answers ...", file=sys.stderr)
            figures, answers = measure(groups[key], tmp / "-".join(key))
            table["/".join(key)] = figures
            shown += [a for a in answers if args.show and a["grade"] == args.show]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    head = (
        "| set | answers | correct blamed | refusals recognised | false refusals "
        "| incorrect passed | blame precision | undecided | declined right |"
    )
    print(head)
    print("|---" * 9 + "|")
    for name, f in table.items():
        print(
            f"| {name} | {f['answers']} | {_pct(f['correct_blamed'])} | "
            f"{_pct(f['refusals_recognised'])} | {_pct(f['false_refusals'])} | "
            f"{_pct(f['incorrect_passed'])} | {_pct(f['blame_precision'])} | "
            f"{_pct(f['undecided'])} | {_pct(f['declined_right'])} |"
        )
    print(
        "goals: correct blamed <= 3 %, refusals >= 90 %, false refusals <= 2 %, "
        "incorrect passed <= 5 %, blame precision >= 97 %, undecided <= 25 %"
    )
    for a in shown:
        print(json.dumps(a, ensure_ascii=False))
    if args.json is not None:
        text = json.dumps(table, indent=2, ensure_ascii=False)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
