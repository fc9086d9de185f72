"""What a fix is worth, measured: ``cofe replay`` on SQuAD part B and CMRC trial.

    python benchmarks/replay_value.py [--sets squad,cmrc] [--size 128] [--limit N]
                                      [--workdir DIR] [--cache DIR] [--json [FILE]]

For each shipped set (the data ``verdict_validity.py`` uses: SQuAD v1.1 dev part B, CMRC 2018
trial), the articles are written as .txt documents, the questions imported with the SQuAD
importer, and the built-in pipeline (BM25 pool of 30, top 4, no reranker, the extractive
generator -- NOT an LLM; ``PipelineConfig`` defaults but the chunk size) run with
``run_pipeline`` and scored with the default ``ScoreConfig``. Then every failed sample is
replayed with each oracle (``replay_run``: context, pool, no-noise, chunking) and scored by
the same scorer.

Prints, per set: the verdict confirmation rate per verdict class (all replayed, and where the
generator answers from the oracle chunks alone), the fix value per stage next to the
observational loss (the share of samples whose verdict blames that stage), and the cost per
replayed sample (calls, seconds; the first pass, then a second one from the cache). Progress
goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


from benchmarks.verdict_validity import write_set  # noqa: E402  (the same shipped sets)

WORK = ROOT / "benchmarks" / "_work" / "replay_value"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_set(
    name: str,
    size: int,
    splitter: str,
    workdir: Path,
    cache: Any,
    limit: int | None,
    reranker: str = "none",
) -> dict[str, Any]:
    from cofe.pipeline import DefaultPipeline, PipelineConfig, parse_documents
    from cofe.replay import cost, replay_run, stage_fixes, verdict_checks
    from cofe.runner import run_pipeline
    from cofe.stages import score_to_folder

    base = workdir / name
    _, samples, docs, evalset = write_set(name, base, limit)
    parsed = parse_documents(docs, cache=cache)
    run = (
        base / f"{splitter}{size}" if reranker == "none" else base / f"{splitter}{size}-{reranker}"
    )
    t = time.perf_counter()
    _log(f"[{name}] running the built-in pipeline on {len(samples)} questions ...")
    run_pipeline(
        DefaultPipeline(PipelineConfig(chunk_size=size, splitter=splitter, reranker=reranker)),
        evalset,
        run,
        documents=parsed.documents,
        cache=cache,
        fresh=True,
        progress=False,
    )
    run_seconds = time.perf_counter() - t
    score_to_folder(run, replace=True)
    shutil.rmtree(run / "replay", ignore_errors=True)
    timings = {}
    passes = []
    for label in ("first pass", "second pass (cache)"):
        t = time.perf_counter()
        _log(f"[{name}] replaying ({label}) ...")
        replayed = replay_run(run, cache=cache, progress=sys.stderr.isatty())
        timings[label] = time.perf_counter() - t
        passes.append(replayed)
        if label == "first pass":
            shutil.rmtree(run / "replay")  # the second pass reads the cache, not replay.jsonl
    replayed = passes[0]
    from cofe.replay._replay import NOT_FAILED

    observed = Counter(v for v in replayed.verdicts.values() if v not in NOT_FAILED)
    stage_of = {t.verdict: t.stage for t in replayed.plan.targets}
    lost_by_stage: Counter[str] = Counter()
    for verdict, n in observed.items():
        lost_by_stage[stage_of.get(verdict) or verdict] += n
    fixes = stage_fixes(replayed)
    # which verdicts each oracle's recoveries had: where oracle and observation part ways
    by_verdict: dict[str, Counter[str]] = {}
    for (sid, oracle), ok in replayed.answer_ok.items():
        if ok and replayed.verdicts.get(sid) != "pass":
            by_verdict.setdefault(oracle.value, Counter())[replayed.verdicts[sid]] += 1
    checks = verdict_checks(replayed)
    spent = cost(replayed)
    return {
        "set": name,
        "chunk_size": size,
        "splitter": splitter,
        "reranker": reranker,
        "samples": replayed.total_samples,
        "replayed": len(replayed.plan.targets),
        "no_oracle": len(replayed.plan.no_oracle),
        "run_seconds": round(run_seconds, 1),
        "replay_seconds": {k: round(v, 1) for k, v in timings.items()},
        "observed_loss": dict(lost_by_stage),
        "fix_value": [
            {
                "stage": f.stage,
                "oracle": f.oracle.value,
                "recovered": f.recovered,
                "replayed": f.replayed,
                "share": f.interval.estimate,
                "low": f.interval.low,
                "high": f.interval.high,
            }
            for f in fixes
        ],
        "verdicts": [
            {
                "verdict": c.verdict,
                "stage": c.stage,
                "oracle": c.oracle.value if c.oracle else None,
                "samples": c.samples,
                "replayed": c.replayed,
                "confirmed": c.confirmed,
                "rate": c.rate,
                "answerable": c.answerable,
                "rate_answerable": c.rate_answerable,
                "answerable_alone": c.answerable_alone,
                "rate_alone": c.rate_alone,
                "moved": c.moved,
                "moved_rate": c.moved_rate,
                "no_oracle": c.no_oracle,
            }
            for c in checks
        ],
        "recovered_by_verdict": {k: dict(v) for k, v in by_verdict.items()},
        "disagreements": disagreements(replayed, PipelineConfig().top_k),
        "cost": spent,
        "second_pass_calls": cost(passes[1])["calls"],
    }


def disagreements(replayed: Any, top_k: int) -> dict[str, dict[str, int]]:
    """Per verdict class, why the oracle and the verdict part ways, sample by sample.

    A loss verdict (retrieval, reranking, chunking) its oracle did not recover:
    * "generator: misses it even alone": the generator does not answer from the oracle chunks
      alone either (no-noise fails): its limit, whatever the stages do;
    * "generator: distractors win": it answers from the oracle chunks alone but not from the
      gold context as the run assembles it (the context oracle fails);
    * "reranker dropped the oracle chunk" / "re-chunked point not in the new context": the
      gold context recovers it, the real stages after the fix did not deliver it;
    * "in the new context, answer differs": delivered, yet the answer is not the control's.
    A generation verdict the oracle context recovered:
    * "order: holder already in the context, moved first": the point was given to the
      generator; only its place changed;
    * "gold passage replaced a look-alike": the context held the point's words only in a chunk
      outside the sample's gold passage; the gold passage brought the answer back (the verdict
      named the generator where the evidence never reached it).
    """
    from cofe.replay import Oracle
    from cofe.replay._summary import LOSS_ORACLE

    out: dict[str, Counter[str]] = {}
    for target in replayed.plan.targets:
        sid, stage = target.sample.id, target.stage
        oracle = LOSS_ORACLE.get(stage or "")
        if oracle is None or (sid, oracle) not in replayed.answer_ok:
            continue
        ok = replayed.answer_ok[(sid, oracle)]
        counts = out.setdefault(target.verdict, Counter())
        if stage == "generation":
            if ok:
                why = (
                    "order: holder already in the context, moved first"
                    if target.oracle.in_context
                    else "gold passage replaced a look-alike"
                )
                counts[why] += 1
            continue
        if ok:
            continue
        if not replayed.answer_ok.get((sid, Oracle.NO_NOISE), False):
            why = "generator: misses it even alone"
        elif oracle is not Oracle.CONTEXT and not replayed.answer_ok.get(
            (sid, Oracle.CONTEXT), False
        ):
            why = "generator: distractors win"
        else:
            record = replayed.records[(sid, oracle)]
            given = set(record.context or (record.pool or [])[:top_k])
            wanted = set(record.oracle_chunks)
            if oracle is Oracle.CHUNKING:
                new = {c for c in given if "#oracle-" in c}
                why = (
                    "in the new context, answer differs"
                    if new
                    else "re-chunked point not in the new context"
                )
            elif wanted <= given:
                why = "in the new context, answer differs"
            else:
                why = "reranker dropped the oracle chunk"
        counts[why] += 1
    return {v: dict(c.most_common()) for v, c in out.items()}


def _pct(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value * 100:.1f}%"


def markdown(reports: Sequence[dict[str, Any]]) -> str:
    out = []
    for r in reports:
        n = r["samples"]
        out += [
            f"### {r['set']}, {r['splitter']} splitter, chunk size {r['chunk_size']}, reranker "
            f"{r['reranker']}: {n} questions, {r['replayed']} failed "
            f"and replayed ({r['no_oracle']} without an oracle)",
            "",
            "| verdict | stage | oracle | samples | confirmed | rate | where answerable "
            "(gold context) | from the chunks alone | loss moved on |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for c in r["verdicts"]:
            out.append(
                f"| {c['verdict']} | {c['stage']} | {c['oracle'] or '-'} | {c['samples']} | "
                f"{c['confirmed']}/{c['replayed']} | {_pct(c['rate'])} | "
                f"{_pct(c['rate_answerable'])} of {c['answerable']} | "
                f"{_pct(c['rate_alone'])} of {c['answerable_alone']} | {_pct(c['moved_rate'])} |"
            )
        out += [
            "",
            "| fix | oracle | observed loss (verdicts) | answers recovered | share of all | 95% CI |",
            "|---|---|---:|---:|---:|---|",
        ]
        for f in r["fix_value"]:
            lost = r["observed_loss"].get(f["stage"])
            lost_text = f"{lost} ({lost / n * 100:.1f}%)" if lost else "-"
            if not f["replayed"]:
                out.append(f"| {f['stage']} | {f['oracle']} | {lost_text} | 0/0 | - | - |")
                continue
            out.append(
                f"| {f['stage']} | {f['oracle']} | {lost_text} | {f['recovered']}/{f['replayed']} "
                f"| {_pct(f['share'])} | [{_pct(f['low'])}, {_pct(f['high'])}] |"
            )
        fixed = {f["stage"] for f in r["fix_value"]}
        for stage, lost in sorted(r["observed_loss"].items()):
            if stage not in fixed:  # a loss no oracle replaces (the generator's, parsing's)
                out.append(f"| {stage} | (none) | {lost} ({lost / n * 100:.1f}%) | - | - | - |")
        out.append("")
        for oracle, counts in sorted(r["recovered_by_verdict"].items()):
            out.append(
                f"- recovered by the {oracle} oracle, by the verdict they had: "
                + ", ".join(f"{v} {n}" for v, n in sorted(counts.items(), key=lambda x: -x[1]))
            )
        for verdict, why in r["disagreements"].items():
            if why:
                out.append(
                    f"- {verdict}, where oracle and verdict part ways: "
                    + ", ".join(f"{k} {v}" for k, v in why.items())
                )
        c = r["cost"]
        per = c["calls_per_sample"]
        if c["calls"]:
            calls = (
                ", ".join(f"{k} {v}" for k, v in sorted(c["calls"].items()))
                + f" ({', '.join(f'{k} {v}' for k, v in sorted(per.items()))} a sample); "
                f"{c['seconds']:.1f} s in the pipeline ({c['seconds_per_replay']} s a replay)"
            )
        else:
            calls = (
                "none: every replay came from the cache (run with an empty --cache for the cost)"
            )
        out += [
            "",
            f"cost: {c['replays']} replays of {c['samples']} samples, calls {calls}; "
            f"the pass {r['replay_seconds']['first pass']} s with scoring and writing, the "
            f"second from the cache {r['replay_seconds']['second pass (cache)']} s "
            f"(calls: {r['second_pass_calls'] or 'none'}); the run itself {r['run_seconds']} s",
            "",
        ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="squad,cmrc")
    parser.add_argument("--size", type=int, default=128, help="chunk size (tokens)")
    parser.add_argument("--splitter", default="sentence", choices=("sentence", "token"))
    parser.add_argument(
        "--reranker", default="none", choices=("none", "minilm"), help="minilm: English only"
    )
    parser.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    parser.add_argument("--workdir", type=Path, default=WORK)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE")
    args = parser.parse_args(argv)

    from cofe._cache import Cache, default_cache_dir

    cache = Cache(args.cache or default_cache_dir())
    reports = [
        run_set(
            name.strip(),
            args.size,
            args.splitter,
            args.workdir,
            cache,
            args.limit or None,
            args.reranker,
        )
        for name in args.sets.split(",")
        if name.strip()
    ]
    as_json = json.dumps(reports, indent=2, ensure_ascii=False)
    if args.json == "-":
        print(as_json)
        return
    if args.json:
        Path(args.json).write_text(as_json + "\n", encoding="utf-8")
    print(markdown(reports))


if __name__ == "__main__":
    main()
