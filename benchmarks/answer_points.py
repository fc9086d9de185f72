"""Does cofe's answer step agree with a careful reader on whether an answer conveys each point?

    python benchmarks/answer_points.py [--sets en,zh] [--data DIR] [--json [FILE]]
                                       [--base-url URL --model NAME [--limit N] [--stand-in]]

The labelled dev set (``benchmarks/data/answer_points/``, see its README) holds
questions on shipped SQuAD / CMRC paragraphs, CoFE-style information points
(fragments copied from the paragraph) and LLM-style answers, each point
labelled by a reader: present, partial, absent or contradicts. The labels never
come from cofe's matcher.

Each (question, answer) becomes one sample of a run whose earlier steps all hold
the information (the paragraph is the one document, one chunk, the pool and the
context), with the answer recorded as the pipeline's answer; the run is scored
through ``score_run`` as a user's would be, and cofe's per-point decisions are
read back from ``points`` (``answer_decision``, ``answer_rule``) and its verdicts
from ``verdicts``. Printed per language and answer-matching setting:

* **blame precision** -- of the points cofe says the answer lacks (absent or
  partial, i.e. blamed on the generator), the share the reader also says are not
  conveyed (absent / contradicts / partial); ``strict``: partial counted as a
  disagreement;
* **present recall** -- of the points the reader finds present, the share cofe
  finds present;
* **false present** -- of the points the reader says are absent or contradicted,
  the share cofe calls present;
* **undecided** -- share of all points cofe leaves undecided;
* **reference passes** -- answers of kind ``reference`` (a correct, complete
  answer) whose verdict is ``pass`` or, when a point is undecided,
  ``pass_to_context``; **other answer passes** -- answers of kind
  ``same_doc_other`` (a correct answer to another question on the same article)
  whose verdict is ``pass``.

``--base-url/--model`` also judges every sample with ``cofe judge`` on that
endpoint (its point labels override the offline matcher) and prints the same
table for it; ``--stand-in`` says the endpoint is the loopback stand-in
(``cofe.testing.ScriptedOpenAI``), whose figures measure plumbing only and are
labelled so.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe import score_run  # noqa: E402
from cofe.evalset import EvalSample, write_evalset  # noqa: E402
from cofe.runlog import Chunk, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord  # noqa: E402
from cofe.stages import ScoreConfig  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "answer_points"
NOT_CONVEYED = {"absent", "contradicts", "partial"}


def load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                sys.exit(f"{path}:{number}: not JSON ({error})")
    return rows


def build_run(questions: list[dict[str, Any]], folder: Path) -> dict[str, tuple[str, list[str]]]:
    """One sample per (question, answer); returns sample id -> (answer kind, reader labels)."""
    samples, records, gold = [], [], {}
    writer = RunWriter(folder)
    for q in questions:
        doc = f"{q['id']}.txt"
        for a, answer in enumerate(q["answers"]):
            sample_id = f"{q['id']}/{a}"
            samples.append(
                EvalSample(
                    id=sample_id,
                    query=q["question"],
                    coarse_keywords=q.get("coarse_keywords", []),
                    fine_keywords=q["points"],
                    reference_answer=next(
                        (x["text"] for x in q["answers"] if x["kind"] == "reference"), None
                    ),
                    source={"doc": doc},
                )
            )
            records.append(
                SampleRecord(
                    sample_id=sample_id,
                    pool=[RankedChunk(chunk_id=q["id"], score=1.0)],
                    answer=answer["text"],
                )
            )
            gold[sample_id] = (answer["kind"], answer["labels"])
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer.start(
        Manifest(run_id=folder.name, top_k=1,
                 stages=["parse", "chunking", "retrieval", "generation"]),
        evalset,
    )  # fmt: skip
    writer.add_documents(
        [ParsedDocument(doc_id=q["id"], source=f"{q['id']}.txt", text=q["paragraph"])
         for q in questions]
    )  # fmt: skip
    writer.add_chunks(
        [Chunk(chunk_id=q["id"], doc_id=q["id"], text=q["paragraph"]) for q in questions]
    )
    writer.add_samples(records)
    return gold


def agreement(run: Path, gold: dict[str, tuple[str, list[str]]], config: ScoreConfig) -> dict:
    result = score_run(run, config=config)
    points = result.points
    decision = {
        (row.sample_id, int(row.point)): (row.answer_decision, row.answer_rule)
        for row in points.itertuples()
    }
    verdicts = dict(zip(result.verdicts.sample_id, result.verdicts.verdict, strict=True))
    pairs = Counter()
    rules = Counter()
    kinds: dict[str, Counter] = {}
    for sample_id, (kind, labels) in gold.items():
        for p, label in enumerate(labels):
            cofe, rule = decision.get((sample_id, p), (None, None))
            pairs[(label, cofe)] += 1
            rules[rule] += 1
        kinds.setdefault(kind, Counter())[verdicts.get(sample_id)] += 1
    total = sum(pairs.values())
    blamed = sum(n for (_, c), n in pairs.items() if c in ("absent", "partial"))
    agree = sum(
        n for (g, c), n in pairs.items() if c in ("absent", "partial") and g in NOT_CONVEYED
    )
    agree_strict = sum(
        n for (g, c), n in pairs.items()
        if c in ("absent", "partial") and g in ("absent", "contradicts")
    )  # fmt: skip
    present = sum(n for (g, _), n in pairs.items() if g == "present")
    found = pairs[("present", "present")]
    negative = sum(n for (g, _), n in pairs.items() if g in ("absent", "contradicts"))
    false_present = sum(
        n for (g, c), n in pairs.items() if g in ("absent", "contradicts") and c == "present"
    )
    undecided = sum(n for (_, c), n in pairs.items() if c == "undecided")
    reference, other = kinds.get("reference", Counter()), kinds.get("same_doc_other", Counter())

    def share(part: int, whole: int) -> float | None:
        return part / whole if whole else None

    return {
        "pairs": total,
        "blamed": blamed,
        "blame_precision": share(agree, blamed),
        "blame_precision_strict": share(agree_strict, blamed),
        "present_recall": share(found, present),
        "false_present": share(false_present, negative),
        "undecided": share(undecided, total),
        "reference_passes": share(
            reference["pass"] + reference["pass_to_context"], sum(reference.values())
        ),
        "reference_pass_strict": share(reference["pass"], sum(reference.values())),
        "other_passes": share(other["pass"], sum(other.values())),
        "confusion": {f"{g}->{c}": n for (g, c), n in sorted(pairs.items(), key=str)},
        "rules": dict(rules),
    }


def judge(run: Path, base_url: str, model: str, limit: int | None) -> None:
    from cofe.judges import judge_run
    from cofe.llm import Endpoint, LLMClient

    endpoint = Endpoint.from_env(base_url=base_url, model=model, timeout=600, max_retries=1)
    client = LLMClient(endpoint, json_mode="json_object", max_tokens=800)
    judge_run(run, client, concurrency=1, progress=True, limit=limit)


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="en,zh")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE")
    parser.add_argument("--base-url", help="also judge on this OpenAI-compatible endpoint")
    parser.add_argument("--model", help="the served model id (with --base-url)")
    parser.add_argument("--limit", type=int, help="judge at most N samples per set")
    parser.add_argument("--stand-in", action="store_true",
                        help="the endpoint is the loopback stand-in: figures are plumbing only")  # fmt: skip
    args = parser.parse_args(argv)
    settings = {
        "offline (paraphrase, default)": ScoreConfig(),
        "verbatim (before)": ScoreConfig(answer_match="verbatim"),
    }
    report: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="cofe-answer-points-") as tmp:
        for name in args.sets.split(","):
            questions = load(args.data / f"{name}.jsonl")
            run = Path(tmp) / name
            gold = build_run(questions, run)
            for label, config in settings.items():
                print(f"{name}: scoring {label} ...", file=sys.stderr)
                report[f"{name} | {label}"] = agreement(run, gold, config)
            if args.base_url:
                judge(run, args.base_url, args.model, args.limit)
                who = "loopback STAND-IN (plumbing only)" if args.stand_in else args.model
                report[f"{name} | judge: {who}"] = agreement(run, gold, ScoreConfig())
    header = ("set | setting", "pairs", "blame precision", "(strict)", "present recall",
              "false present", "undecided", "reference passes", "other answer passes")  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for key, row in report.items():
        cells = [key, str(row["pairs"]), fmt(row["blame_precision"]),
                 fmt(row["blame_precision_strict"]), fmt(row["present_recall"]),
                 fmt(row["false_present"]), fmt(row["undecided"]),
                 fmt(row["reference_passes"]), fmt(row["other_passes"])]  # fmt: skip
        print("| " + " | ".join(cells) + " |")
    if args.json:
        text = json.dumps(report, indent=2, ensure_ascii=False)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
