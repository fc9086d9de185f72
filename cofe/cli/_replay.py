"""``cofe replay``: what fixing each stage is worth, checked by intervention.

    cofe replay RUN                      the failed samples of RUN/scores, every oracle
    cofe replay RUN --dry-run            the calls it would make, and an estimate
    cofe replay RUN --verdict cut_by_rerank --limit 50 --json

Each selected sample is answered again by the run's own pipeline with one stage's output
replaced by an oracle (the chunks holding the lost points): in the context, in the pool
(the run's reranker after it), alone in the context (no-noise), or the source re-chunked so
no point is cut (built-in pipeline). The new answers are scored with the run's scoring
settings. Replays are cached by content and kept in RUN/replay/replay.jsonl as they finish:
a killed pass resumes. docs/replay.md walks through the output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cofe.cli._args import existing_path
from cofe.cli._commands import HELP

ORACLES = ("context", "pool", "no-noise", "chunking")


def _list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help=HELP["replay"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", type=existing_path, metavar="RUN", help="a scored run folder")
    p.add_argument(
        "--scores", type=existing_path, help="the scoring to replay (default RUN/scores)"
    )
    p.add_argument(
        "--oracle",
        type=_list,
        default=list(ORACLES),
        metavar="NAME,...",
        help=f"oracles to replay (default all: {','.join(ORACLES)})",
    )
    p.add_argument("--verdict", type=_list, metavar="V,...", help="only samples of these verdicts")
    p.add_argument(
        "--sample", action="append", default=[], metavar="ID", help="only this sample (repeatable)"
    )
    p.add_argument("--limit", type=int, help="at most N samples (the first, in scoring order)")
    p.add_argument(
        "--pipeline",
        help="package.module:factory the run was made with (default: the built-in pipeline, "
        "rebuilt from the run's manifest)",
    )
    p.add_argument(
        "--generator",
        metavar="MODULE:FUNCTION",
        help="generate(question, contexts) -> answer, for a run whose pipeline cofe cannot "
        "take apart (a framework's): the context and no-noise oracles run through it",
    )
    p.add_argument("--base-url", help="endpoint base URL (default: $OPENAI_BASE_URL)")
    p.add_argument("--model", help="model name (default: $OPENAI_MODEL)")
    p.add_argument("--out", type=Path, help="replay folder (default RUN/replay)")
    p.add_argument("--cache", type=Path, default=None, help="cache folder ('none' disables it)")
    p.add_argument(
        "--dry-run", action="store_true", help="print the calls and an estimate; run nothing"
    )
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="print the result as JSON (FILE: write it there, and print the text)",
    )
    p.add_argument(
        "--html", type=Path, metavar="FILE", help="also write an HTML page of the result"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cofe._atomic import write_text_atomically
    from cofe._errors import InputError, InputProblem
    from cofe._progress import progress_lines
    from cofe.cli._run import make_cache
    from cofe.replay import (
        Oracle,
        ReplayStopped,
        plan_replay,
        rebuild,
        render,
        render_html,
        replay_run,
        to_dict,
    )
    from cofe.runlog import read_run

    unknown = [o for o in args.oracle if o not in ORACLES]
    if unknown:
        raise InputError(
            InputProblem(
                "--oracle", None, None, f"unknown oracle {unknown[0]!r}: use {', '.join(ORACLES)}"
            )
        )
    if args.limit is not None and args.limit < 1:
        raise InputError(InputProblem("--limit", None, None, "must be at least 1"))
    oracles = [Oracle(o) for o in args.oracle]
    cache = make_cache(args.cache)
    endpoint = None
    log = read_run(args.run_dir)
    described = log.manifest.pipeline
    llm = described.get("generator") == "openai" or described.get("reranker") == "llm"
    if llm and args.pipeline is None and args.generator is None:
        from cofe.llm import Endpoint

        endpoint = Endpoint.from_env(base_url=args.base_url, model=args.model)
        if not args.dry_run:
            endpoint.probe()  # fail in seconds, not after rebuilding the pipeline
    selection = {
        "scores": args.scores,
        "oracles": oracles,
        "verdicts": args.verdict,
        "samples": args.sample,
        "limit": args.limit,
        "out": args.out,
    }
    if args.dry_run:
        replayable = rebuild(log, args.pipeline, cache, endpoint, args.generator)
        plan, _, _, _ = plan_replay(args.run_dir, replayable=replayable, log=log, **selection)
        for oracle, why in plan.why_not.items():
            if oracle in oracles:
                print(f"oracle {oracle.value}: not replayed: {why}")
        calls = ", ".join(f"{k} {v}" for k, v in sorted(plan.calls.items())) or "none"
        if plan.seconds is None:
            estimate = "no estimate (the run records no stage latency)"
        elif plan.seconds < 1:
            estimate = "under a second at the run's own latency per stage"
        else:
            estimate = f"about {plan.seconds:.0f} s at the run's own latency per stage"
        print(
            f"cofe replay --dry-run: {len(plan.targets)} sample(s) selected, "
            f"{len(plan.no_oracle)} without an oracle; {len(plan.tasks)} replay(s), "
            f"{plan.done} already done; calls to make: {calls}; {estimate}"
        )
        return 0
    try:
        with progress_lines() as progress:
            replayed = replay_run(
                args.run_dir,
                cache=cache,
                progress=progress,
                # rebuilt inside the pass, under its lock: a second pass on the folder is
                # refused before it spends anything on indexing
                pipeline=args.pipeline,
                generator=args.generator,
                endpoint=endpoint,
                log=log,
                **selection,
            )
    except ReplayStopped as stopped:
        print(f"cofe: error: {stopped}", file=sys.stderr)
        return 1
    data = to_dict(replayed)
    if args.html:
        write_text_atomically(args.html, render_html(replayed))
    if args.json == "-":
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(render(replayed))
    if args.json:
        write_text_atomically(args.json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return 0
