"""Do cofe's judged measures measure anything? Labelled answers of five kinds, judged.

    python benchmarks/judge_validity.py [--sets en,zh] [--limit N] [--kinds K,...]
                                        (--stand-in | --base-url URL --model NAME)
                                        [--no-embeddings] [--json [FILE]]
    python benchmarks/judge_validity.py --build     # rewrite the labelled set from its sources

The labelled set (``benchmarks/data/judge_validity/``, see its README) holds, per question on
a shipped SQuAD / CMRC paragraph, answers of five kinds -- ``correct``, ``wrong`` (another
article's answer), ``plus_false`` (the correct answer and one false sentence), ``partial``
(correct but incomplete) and ``refusal`` -- each with its claims and their gold labels
(supported by the paragraph? right?). The gold labels come from how each answer was made and
from a reader's labels (``benchmarks/data/answer_points``), never from cofe's matcher or judge.

Each (question, answer) becomes one sample of a run whose context is the gold paragraph (the
one document, one chunk, the pool and the context) and whose reference answer is a second,
reworded correct answer; ``cofe judge`` (``judge_run``) judges every sample, and each judged
measure is read as ``cofe score`` reads it (``labels_for_scoring``: the sense checks, the
correctness echo). Printed per language and measure: the mean per kind (samples scored), the
AUC of correct over wrong answers and of correct over correct-plus-false answers (ties count
a half; 0.5 is chance), the gold value per kind, and the calls, tokens and seconds per sample.

``--stand-in`` judges with the loopback stand-in (``cofe.testing.ScriptedOpenAI``) answering
as a *lexical* judge: claims are the answer's sentences, a claim is supported when most of its
content words are in the passage. Its figures measure the plumbing and a word-overlap baseline,
not a model, and are labelled so. ``--base-url/--model`` judges with a real endpoint (for
example ``cofe llm serve``'s model: add ``--json-mode json_object``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe.evalset import EvalSample, SourceRef, read_evalset, write_evalset  # noqa: E402
from cofe.judges import (  # noqa: E402
    auc,
    control_gate,
    judge_run,
    labels_for_scoring,
    labels_of,
    read_controls,
    read_judgements,
)
from cofe.judges._agreement import JUDGED  # noqa: E402
from cofe.judges._controls import DEFAULT_PAIRS  # noqa: E402
from cofe.judges._prompts import PROMPT_VERSION, STEPWISE_SUFFIX, reference_claims  # noqa: E402
from cofe.judges._sense import _content  # noqa: E402
from cofe.llm import Endpoint, LLMClient  # noqa: E402
from cofe.measures import Step, StepView, Unscored  # noqa: E402
from cofe.runlog import (  # noqa: E402
    Chunk,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunWriter,
    SampleRecord,
    read_compact,
)

DATA = ROOT / "benchmarks" / "data" / "judge_validity"
SOURCES = ROOT / "benchmarks" / "data" / "answer_points"
# the held-out set: built the same way from the answer_points held-out set (other paragraphs,
# another reader), never read while the prompts were chosen
HOLDOUT = DATA / "holdout"
HOLDOUT_SOURCES = SOURCES / "holdout"
KINDS = ("correct", "wrong", "plus_false", "partial", "refusal")
MIN_SEPARATION = 0.85  # the bar: AUC of correct over wrong answers
REFUSALS = {
    "en": [
        "I don't know; the text does not say.",
        "I can't answer that from the information I have.",
        "Sorry, I have no information about this.",
    ],
    "zh": [
        "我不知道，文中没有提到。",
        "根据现有信息，我无法回答这个问题。",
        "抱歉，我没有相关信息。",
    ],
}


# ---------------------------------------------------------------------------------------------
# the labelled set, built from the answer_points set (itself from the shipped SQuAD / CMRC data)


def _answers(question: dict[str, Any], kind: str) -> list[str]:
    return [a["text"] for a in question["answers"] if a["kind"] == kind]


def _claims(text: str, supported: bool, correct: bool) -> list[dict[str, Any]]:
    """An answer's claims: its sentences (each read as one claim), all labelled alike."""
    return [{"text": s, "supported": supported, "correct": correct} for s in reference_claims(text)]


def build(lang: str, sources: Path = SOURCES) -> list[dict[str, Any]]:
    """The labelled rows of one language (deterministic: the same sources give the same rows)."""
    questions = [
        json.loads(line)
        for line in (sources / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    rows = []
    for i, q in enumerate(questions):
        correct = _answers(q, "reference")[0]
        base = {
            "question_id": q["id"],
            "lang": lang,
            "title": q["title"],
            "question": q["question"],
            "context": q["paragraph"],
            "reference": _answers(q, "paraphrase")[0],
            "coarse_keywords": q["coarse_keywords"],
            "points": q["points"],
        }
        # another article's question, half the set away: its correct answer is wrong here
        j = (i + len(questions) // 2) % len(questions)
        while questions[j]["title"] == q["title"]:
            j = (j + 1) % len(questions)
        other = _answers(questions[j], "reference")[0]
        kinds: dict[str, tuple[str, list[dict[str, Any]]]] = {
            "correct": (correct, _claims(correct, True, True)),
            "wrong": (other, _claims(other, False, False)),
        }
        false = _answers(q, "wrong")[0]
        if len(reference_claims(false)) == 1:  # one false sentence, as a reader labelled it
            joint = "" if lang == "zh" else " "
            kinds["plus_false"] = (
                correct + joint + false,
                _claims(correct, True, True) + _claims(false, False, False),
            )
        partial = _answers(q, "partial")
        if partial:
            kinds["partial"] = (partial[0], _claims(partial[0], True, True))
        refusal = _answers(q, "refusal") or [REFUSALS[lang][i % len(REFUSALS[lang])]]
        kinds["refusal"] = (refusal[0], [])
        for kind, (answer, claims) in kinds.items():
            rows.append(
                {
                    "id": f"{q['id']}/{kind}",
                    "kind": kind,
                    **base,
                    "answer": answer,
                    "claims": claims,
                    **({"other_question": questions[j]["id"]} if kind == "wrong" else {}),
                }
            )
    return rows


def gold(row: dict[str, Any]) -> dict[str, float | None]:
    """What each measure should read for a row, from its claims' gold labels."""
    claims = row["claims"]
    if not claims:
        return {"Faithfulness": None, "ClaimPrecision": None}
    return {
        "Faithfulness": sum(c["supported"] for c in claims) / len(claims),
        "ClaimPrecision": sum(c["correct"] for c in claims) / len(claims),
    }


# ---------------------------------------------------------------------------------------------
# the lexical stand-in: what the loopback server answers with --stand-in

_FIELD = re.compile(
    r"^(Question|Answer|Reference|Context|Source|Answer claims|Reference claims|"
    r"Claim|Statement|问题|回答|参考答案|上下文|来源|回答断言|参考断言|断言|陈述)"
    r": ?(.*)$",
    re.M,
)
_NUMBERED = re.compile(r"(?:^| )(\d+)\. (.*?)(?= \d+\. |$)")
_REFUSING = re.compile(
    r"don't know|do not know|can't answer|cannot answer|no information|"
    r"不知道|无法回答|没有相关信息",
    re.I,
)


def _covered(claim: str, passage: str | None) -> bool:
    words = _content(claim)
    return (
        bool(words) and passage is not None and len(words & _content(passage)) >= 0.6 * len(words)
    )


def lexical_judge(messages: list[dict[str, str]], request: dict[str, Any]) -> str:
    user = messages[1]["content"]
    fields = {m[1]: m[2] for m in _FIELD.finditer(user)}

    def get(en: str, zh: str) -> str | None:
        return fields.get(en, fields.get(zh))

    answer = get("Answer", "回答") or ""
    if "fact checking" in messages[0]["content"] or "事实核查" in messages[0]["content"]:
        refusing = bool(_REFUSING.search(answer))
        return json.dumps(
            {
                "answer_claims": [] if refusing else reference_claims(answer),
                "questions": [get("Question", "问题") or ""],
                "noncommittal": refusing,
            },
            ensure_ascii=False,
        )
    context, source = get("Context", "上下文"), get("Source", "来源")
    reference = get("Reference", "参考答案")
    claim = get("Claim", "断言")
    if claim is not None:  # a step: one claim against each passage
        return json.dumps(
            {
                "context": _covered(claim, context),
                **({"source": _covered(claim, source)} if source is not None else {}),
                **({"reference": _covered(claim, reference)} if reference else {}),
            }
        )
    statement = get("Statement", "陈述")
    if statement is not None:  # a step: one reference claim against the answer and the context
        return json.dumps(
            {"answer": _covered(statement, answer), "context": _covered(statement, context)}
        )
    claims = [c for _, c in _NUMBERED.findall(get("Answer claims", "回答断言") or "")]
    references = [c for _, c in _NUMBERED.findall(get("Reference claims", "参考断言") or "")]
    stated = [_covered(r, answer) for r in references]
    return json.dumps(
        {
            "answer_claims": [
                {
                    "claim": i,
                    "context": _covered(c, context),
                    **({"source": _covered(c, source)} if source is not None else {}),
                    **({"reference": _covered(c, reference)} if reference else {}),
                }
                for i, c in enumerate(claims)
            ],
            "reference_claims": [
                {"claim": i, "answer": s, "context": _covered(r, context)}
                for i, (r, s) in enumerate(zip(references, stated, strict=True))
            ],
            "useful_chunks": [1],
            "correctness": 1 + round(4 * sum(stated) / len(stated)) if stated else 1,
        },
        ensure_ascii=False,
    )


# ---------------------------------------------------------------------------------------------
# judging and reading the measures


def build_run(rows: list[dict[str, Any]], folder: Path) -> None:
    """One sample per row: the paragraph is the document, its one chunk, the pool and the
    context; no fine keywords (the judge is asked about claims only)."""
    writer = RunWriter(folder)
    samples, records, documents = [], [], {}
    for row in rows:
        doc = row["question_id"]
        documents[doc] = ParsedDocument(doc_id=doc, source=f"{doc}.txt", text=row["context"])
        samples.append(
            EvalSample(
                id=row["id"],
                query=row["question"],
                coarse_keywords=row["coarse_keywords"],
                reference_answer=row["reference"],
                source=SourceRef(doc=f"{doc}.txt"),
            )
        )
        records.append(
            SampleRecord(
                sample_id=row["id"],
                pool=[RankedChunk(chunk_id=doc, score=1)],
                context=[RankedChunk(chunk_id=doc, score=1)],
                answer=row["answer"],
            )
        )
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer.start(Manifest(run_id=folder.name, top_k=1, stages=["retrieval", "generation"]), evalset)
    writer.add_documents(list(documents.values()))
    writer.add_chunks(
        [Chunk(chunk_id=d.doc_id, doc_id=d.doc_id, text=d.text) for d in documents.values()]
    )
    writer.add_samples(records)


def measures_of(run: Path) -> dict[str, dict[str, float | str]]:
    """Per sample, per judged measure: its value, or why it is unscored (as ``cofe score``)."""
    log, records = read_compact(run)
    samples = read_evalset(run / "evalset.jsonl").samples
    out: dict[str, dict[str, float | str]] = {}
    for sample_id, labels in labels_for_scoring(run, log, records, samples).items():
        view = StepView(Step.ANSWER, (), claims=labels)
        row = {}
        for measure in JUDGED:
            value = measure.evaluate(view)
            row[measure.name] = value.reason if isinstance(value, Unscored) else float(value)
        out[sample_id] = row
    return out


def choose(
    rows: list[dict[str, Any]], kinds: tuple[str, ...], limit: int | None, seed: int
) -> list[dict[str, Any]]:
    """Per kind, the rows of the first ``limit`` questions of a seeded shuffle having that kind,
    in question order (the kinds of one question side by side)."""
    by_question: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_question[row["question_id"]][row["kind"]] = row
    order = sorted(by_question)
    random.Random(seed).shuffle(order)
    taken: dict[str, int] = Counter()
    chosen = []
    for q in order:  # question by question, so that a pass cut short has every kind
        for kind in kinds:
            if kind in by_question[q] and (limit is None or taken[kind] < limit):
                taken[kind] += 1
                chosen.append(by_question[q][kind])
    return chosen


def judge_set(
    rows: list[dict[str, Any]],
    client: LLMClient,
    embedder,
    folder: Path,
    concurrency: int,
    steps: bool = False,
    controls: int = DEFAULT_PAIRS,
) -> dict[str, Any]:
    run = folder / "run"
    build_run(rows, run)
    started = time.perf_counter()
    report = judge_run(
        run, client, concurrency=concurrency, embedder=embedder, steps=steps, controls=0
    )
    seconds = time.perf_counter() - started
    sample_calls, sample_tokens = client.usage.calls, client.usage.total_tokens
    values = measures_of(run)  # before the controls: every measure's own values, ungated
    # then the known-answer controls, as `cofe judge` makes them (judges/_controls.py): which
    # measures would cofe score leave unscored for this model?
    started = time.perf_counter()
    judge_run(
        run, client, concurrency=concurrency, embedder=embedder, steps=steps, controls=controls
    )
    control_seconds = time.perf_counter() - started
    version = PROMPT_VERSION + (STEPWISE_SUFFIX if steps else "")
    gate = control_gate(
        read_controls(run).values(),
        labels_of,
        model=client.endpoint.model,
        versions=frozenset({version}),
    )
    failed = dict(gate.failed)
    judgements = read_judgements(run)
    kinds = {row["id"]: row["kind"] for row in rows}
    table = {}
    for measure in JUDGED:
        per_kind: dict[str, list[float]] = defaultdict(list)
        unscored: Counter = Counter()
        for sample_id, row in values.items():
            value = row[measure.name]
            if isinstance(value, float):
                per_kind[kinds[sample_id]].append(value)
            else:
                unscored[value] += 1
        means = {k: (sum(v) / len(v), len(v)) for k, v in per_kind.items()}
        separation = auc(per_kind["correct"], per_kind["wrong"])
        control_auc, _pairs = gate.figures.get(measure.name, (None, 0))
        table[measure.name] = {
            "means": means,
            "auc_wrong": separation,
            "auc_plus_false": auc(per_kind["correct"], per_kind["plus_false"]),
            "unscored": dict(unscored.most_common(3)),
            "controls_auc": control_auc,
            "cofe_scores_it": measure.name not in failed,
            "verdict": verdict(separation, measure.name in failed),
        }
    golds: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for name, value in gold(row).items():
            if value is not None:
                golds[name][row["kind"]].append(value)
    n = len(rows)
    controls_read = read_controls(run)
    return {
        "steps": steps,
        "samples": n,
        "kinds": dict(Counter(kinds.values())),
        "table": table,
        "gold": {name: {k: sum(v) / len(v) for k, v in per.items()} for name, per in golds.items()},
        "calls_per_sample": sample_calls / n,  # this pass's (a cached reply costs none)
        # what a judgement takes, cached or not: its replies (a JSON repair's aside)
        "replies_per_sample": sum(len(j.raw) for j in judgements.values()) / n,
        "tokens_per_sample": sample_tokens / n,
        "seconds_per_sample": seconds / n,
        # the controls: judged once per run, whatever its size (their cost is the run's, not
        # a sample's); replies and seconds of this pass
        "controls": {
            "judged": len(controls_read),
            "replies": sum(len(c.raw) for c in controls_read.values()),
            "seconds": control_seconds,
            "gate": gate.note or {name: reason for name, reason in gate.failed},
        },
        "judged": report.judged,
        "unscored": report.unscored,
        "reasons": report.reasons,
        "repairs": report.repairs,
        "correctness_echo": report.correctness_echo,
        "label_echo": report.label_echo,
    }


def verdict(separation: float | None, gated: bool) -> str:
    """What a user of cofe gets from the measure with this judge: a number that separates
    correct from wrong answers, an unscored measure with the reason, or a number that looks
    valid and is not (the failure the issue is about)."""
    if gated:
        return (
            "unscored (says so)"
            if separation is None or separation < MIN_SEPARATION
            else ("unscored, though it separates")
        )
    if separation is None:
        return "no value"
    return "measures" if separation >= MIN_SEPARATION else "FAILS: a number that does not separate"


def render(lang: str, result: dict[str, Any], label: str) -> str:
    kinds = [k for k in KINDS if k in result["kinds"]]
    counts = ", ".join(f"{k} {result['kinds'][k]}" for k in kinds)
    version = PROMPT_VERSION + (STEPWISE_SUFFIX if result["steps"] else "")
    lines = [
        f"### {lang}: {label}, prompt {version}, {result['samples']} samples ({counts})",
        "",
        "| measure | "
        + " | ".join(kinds)
        + " | AUC correct>wrong | AUC correct>plus_false | controls AUC | cofe score |",
        "|---" * (len(kinds) + 5) + "|",
    ]

    def fmt(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    for name, row in result["table"].items():
        cells = [
            f"{row['means'][k][0]:.2f} ({row['means'][k][1]})" if k in row["means"] else "–"
            for k in kinds
        ]
        lines.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {fmt(row['auc_wrong'])} | {fmt(row['auc_plus_false'])} "
            + f"| {fmt(row['controls_auc'])} | {row['verdict']} |"
        )
    for name, per in result["gold"].items():
        cells = [fmt(per.get(k)) for k in kinds]
        lines.append(f"| gold {name} | " + " | ".join(cells) + " | | | | |")
    lines += [
        "",
        f"replies/sample {result['replies_per_sample']:.2f}; this pass: calls/sample "
        f"{result['calls_per_sample']:.2f}, tokens/sample "
        f"{result['tokens_per_sample']:.0f}, seconds/sample {result['seconds_per_sample']:.1f}; "
        f"judged {result['judged']}, unscored {result['unscored']} {result['reasons'] or ''}; "
        f"repairs {result['repairs'] or 'none'}; correctness echo: "
        f"{result['correctness_echo'] or 'no'}; label echo: {result['label_echo'] or 'no'}",
        f"controls: {result['controls']['judged']} judged once for the run "
        f"({result['controls']['replies']} replies, {result['controls']['seconds']:.0f} s; "
        "replies/sample with them spread over the samples "
        f"{result['replies_per_sample'] + result['controls']['replies'] / result['samples']:.2f})"
        + (
            f"; {result['controls']['gate']}" if isinstance(result["controls"]["gate"], str) else ""
        ),
    ]
    unscored = {name: row["unscored"] for name, row in result["table"].items() if row["unscored"]}
    if unscored:
        lines.append(
            "unscored (top reasons): "
            + "; ".join(
                f"{name}: " + ", ".join(f"{r[:60]} x{c}" for r, c in why.items())
                for name, why in unscored.items()
            )
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="rewrite the labelled sets")
    parser.add_argument(
        "--holdout",
        action="store_true",
        help=f"judge the held-out set ({HOLDOUT.relative_to(ROOT)}) instead of the dev set",
    )
    parser.add_argument("--sets", default="en,zh")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--limit", type=int, help="questions per kind (a seeded choice)")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="the loopback lexical stand-in (plumbing and a baseline, no model)",
    )
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--json-mode", default="off")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument(
        "--steps",
        action="store_true",
        help="the step-by-step mode (cofe judge --steps): a call per claim",
    )
    parser.add_argument("--no-embeddings", action="store_true")
    parser.add_argument(
        "--controls",
        type=int,
        default=DEFAULT_PAIRS,
        help="known-answer control pairs judged after the samples (cofe judge --controls)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="cache replies here (a rerun with the same prompts calls nothing)",
    )
    parser.add_argument("--keep", type=Path, help="keep the runs (and judgements) here")
    parser.add_argument("--json", nargs="?", const="-", help="also write the figures as JSON")
    parser.add_argument(
        "--export-rows",
        type=Path,
        metavar="FILE",
        help="write the chosen rows (per --sets, --kinds, --limit, --seed) as JSON lines and "
        "stop: the same samples for another judge (benchmarks/ragas_side.py)",
    )
    args = parser.parse_args()
    if args.build:
        for target, sources in ((DATA, SOURCES), (HOLDOUT, HOLDOUT_SOURCES)):
            target.mkdir(parents=True, exist_ok=True)
            for lang in ("en", "zh"):
                rows = build(lang, sources)
                (target / f"{lang}.jsonl").write_text(
                    "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8",
                )
                counts = dict(Counter(r["kind"] for r in rows))
                print(f"{target.relative_to(ROOT)}/{lang}: {len(rows)} rows {counts}")
        return
    data = HOLDOUT if args.holdout else DATA
    kinds = tuple(k for k in args.kinds.split(",") if k)
    if args.export_rows:
        with args.export_rows.open("w", encoding="utf-8") as out:
            for lang in args.sets.split(","):
                every = [
                    json.loads(x)
                    for x in (data / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
                    if x
                ]
                for row in choose(every, kinds, args.limit, args.seed):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    if not args.stand_in and not (args.base_url and args.model):
        parser.error("give --stand-in, or --base-url and --model")
    embedder = None
    if not args.no_embeddings:
        from cofe.pipeline._embed import shared_embedder

        embedder = shared_embedder()
    results = {}
    server = None
    if args.stand_in:
        from cofe.testing import ScriptedOpenAI

        server = ScriptedOpenAI(lexical_judge).__enter__()
        base_url, model, label = (
            server.base_url,
            "lexical-stand-in",
            "STAND-IN (loopback lexical judge, not a model)",
        )
    else:
        base_url, model, label = args.base_url, args.model, f"model {args.model}"
    if args.holdout:
        label += ", held-out set"
    try:
        for lang in args.sets.split(","):
            rows = [
                json.loads(x)
                for x in (data / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
                if x
            ]
            rows = choose(rows, kinds, args.limit, args.seed)
            cache = None
            if args.cache:
                from cofe._cache import Cache

                cache = Cache(args.cache)
            client = LLMClient(
                Endpoint(base_url, model, "none", timeout=args.timeout),
                json_mode=args.json_mode,
                cache=cache,
            )
            folder = Path(tempfile.mkdtemp(prefix=f"judge-validity-{lang}-"))
            try:
                results[lang] = judge_set(
                    rows, client, embedder, folder, args.concurrency, args.steps, args.controls
                )
            finally:
                if args.keep:
                    shutil.copytree(folder, args.keep / lang, dirs_exist_ok=True)
                shutil.rmtree(folder, ignore_errors=True)
            print(render(lang, results[lang], label), flush=True)
            print()
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    if args.json:
        text = json.dumps(
            {
                "label": label,
                "prompt_version": PROMPT_VERSION,
                "set": "holdout" if args.holdout else "dev",
                **results,
            },
            indent=2,
            ensure_ascii=False,
        )
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
