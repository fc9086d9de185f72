"""``cofe score RUN_DIR``: score every stage and print the waterfall and verdicts."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cofe.cli._args import existing_path
from cofe.cli._commands import HELP

if TYPE_CHECKING:
    from cofe.config import ScoreConfig
    from cofe.evalset import EvalSample
    from cofe.measures import ClaimLabels, Unscored
    from cofe.results import ScoreSummary
    from cofe.runlog import CompactRecord, RunLog

# the values of cofe.matching.MatchMode and cofe.stages.CoarseScope, spelt here so that
# `cofe score --help` loads neither (tests/cli/test_fast_start.py checks they agree)
MODES = ("strict", "cofe-rag")
COARSE_SCOPES = ("document", "chunk", "off")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("score", help=HELP["score"], description=__doc__)
    p.add_argument(
        "run_dir", type=Path, help="run directory (manifest.json, chunks.jsonl, samples.jsonl, ...)"
    )
    p.add_argument(
        "--evalset", type=existing_path, help="eval set (default: RUN_DIR/evalset.jsonl)"
    )
    p.add_argument(
        "--top-k",
        type=int,
        help="size of the context the generator saw (default: what the run recorded)",
    )
    p.add_argument(
        "--candidates", type=int, help="cutoff of the candidate pool (default: longest pool)"
    )
    p.add_argument("--mode", choices=MODES, default=MODES[0])
    p.add_argument(
        "--coarse-scope",
        choices=COARSE_SCOPES,
        help="where a chunk's entity (coarse keyword) must be named for the chunk to count: "
        "its document (strict default), the chunk itself (cofe-rag default), or off",
    )
    p.add_argument("--no-coarse-filter", action="store_true", help="same as --coarse-scope off")
    p.add_argument(
        "--same-source",
        action="store_true",
        help="count only chunks of the sample's source document",
    )
    p.add_argument(
        "--fuzzy",
        type=float,
        metavar="RATIO",
        help="accept approximate matches (error ratio, e.g. 0.15)",
    )
    p.add_argument(
        "--answer-match",
        choices=["paraphrase", "verbatim"],
        default="paraphrase",
        help="how the answer step decides a point is conveyed: paraphrase (default: words "
        "as written, else content words, numbers and names after normalisation; a point it "
        "cannot settle is undecided, never blamed) or verbatim (as in chunks)",
    )
    p.add_argument(
        "--measures",
        metavar="LIST",
        help="only these measures, comma-separated, each [step/]Name[@cutoff] (e.g. "
        "'KeywordRecall@4,answer/PointRecall,nDCG@10'; without a step: every step it applies "
        "to). Default: every measure the run allows. Verdicts are the same either way",
    )
    p.add_argument(
        "--fail-on-error",
        type=float,
        metavar="RATE",
        help="exit 1 when the pipeline raised for more than this share of samples at any stage",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="where to write the tables (default: RUN_DIR/scores for the default settings, "
        "RUN_DIR/scores-<settings> for others, so scorings sit side by side)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a scoring made with other settings in --out (refused otherwise)",
    )
    p.add_argument(
        "--json", action="store_true", help="print the summary as JSON instead of tables"
    )
    p.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        help="samples scored at a time (default: the whole run up to 100,000 records, else "
        "20,000): memory grows with N, never with the "
        "run; each batch costs one scan of the corpus",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="score on a Dask cluster (scheduler address, or 'local' for one machine); "
        'needs pip install "cofe[dask]"',
    )
    p.set_defaults(run=run)


def judge_labels(
    run_dir: Path, log: RunLog, records: dict[str, CompactRecord], samples: list[EvalSample]
) -> dict[str, ClaimLabels | Unscored]:
    """The judge's labels, handed to the scorer (``labels=``) by the commands that score: the
    judges (and their LLM client) load only when a judged run asks for them."""
    from cofe.judges import labels_for_scoring

    return labels_for_scoring(run_dir, log, records, samples)


def score_and_write(
    run_dir: Path,
    config: ScoreConfig,
    *,
    evalset: Path | None = None,
    out: Path | None = None,
    replace: bool = False,
    dask: str | None = None,
    batch_size: int | None = None,
) -> tuple[ScoreSummary, Path]:
    """Score a run a batch at a time (memory flat in its samples) and write the tables, by
    default into the run folder beside other scorings."""
    from cofe._distributed import connect, disconnect
    from cofe._progress import progress_lines
    from cofe.runlog import run_folder_lock
    from cofe.stages import score_to_folder

    # scoring a run another process is writing would read half of it: never beside a writer;
    # a scoring written elsewhere only reads the run, so any number of them go on at once
    reading = out is not None and not _inside(out, run_dir)
    hint = "pass --out DIR to write the scores elsewhere (the run is then only read)"
    with (
        run_folder_lock(run_dir, purpose="cofe score", reading=reading, hint=hint),
        progress_lines() as progress,
    ):
        client = connect(dask) if dask else None
        try:
            return score_to_folder(
                run_dir,
                evalset,
                config,
                out=out,
                replace=replace,
                progress=progress,
                cluster=client,
                batch_size=batch_size,
                labels=judge_labels,
            )
        finally:
            if client is not None:
                disconnect(client)


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def run(args: argparse.Namespace) -> int:
    # scoring calls no BLAS routine, yet loading numpy starts OpenBLAS's thread pool, a
    # thread per core (about 50 ms of CPU on a 1,000-query run); a user's own setting stays
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from cofe.matching import MatchMode
    from cofe.measures import parse_measures
    from cofe.report import render_result
    from cofe.stages import CoarseScope, ScoreConfig

    if args.measures is not None:
        parse_measures(args.measures)  # its own one-line error, before the settings' checks
    config = ScoreConfig(
        measures=args.measures,
        top_k=args.top_k,
        candidates=args.candidates,
        mode=MatchMode(args.mode),
        coarse_scope=CoarseScope.OFF if args.no_coarse_filter else args.coarse_scope,
        same_source=args.same_source,
        fuzzy=args.fuzzy,
        answer_match=args.answer_match,
    )
    result, out = score_and_write(
        args.run_dir,
        config,
        evalset=args.evalset,
        out=args.out,
        replace=args.force,
        dask=args.dask,
        batch_size=args.batch_size,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render_result(result, files_in=str(out)))
    if args.fail_on_error is not None:
        worst = max(result.error_rates().items(), key=lambda item: item[1], default=("", 0.0))
        if worst[1] > args.fail_on_error:
            print(
                f"cofe score: the pipeline raised at {worst[0]} for {worst[1]:.1%} of the samples "
                f"(--fail-on-error {args.fail_on_error:g})",
                file=sys.stderr,
            )
            return 1
    return 0
