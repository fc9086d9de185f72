"""``cofe compare A B ...``: are the differences between runs real? Paired statistics per measure."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cofe._atomic import write_text_atomically
from cofe._errors import InputError, InputProblem
from cofe.compare import ALL, compare_results
from cofe.report import render_comparison
from cofe.results import ScoreResult, read_scores, scores_folder
from cofe.stages import ScoreConfig, score_run


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare runs of one eval set: means with CIs, paired tests, verdict transitions",
        description=__doc__,
    )
    p.add_argument(
        "runs",
        nargs="+",
        type=Path,
        help="run directories (their default scoring, scored now if missing) or results "
        "folders (holding summary.json)",
    )
    p.add_argument("--names", help="comma-separated names (default: the folders' names)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate (Holm)")
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap/permutation draws")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--query-type", default=ALL, help="rows to print: all, or one query type")
    p.add_argument("-o", "--out", type=Path, help="write means/differences/transitions CSV + JSON")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--html", type=Path, metavar="FILE",
                   help="also write the HTML report of these runs (run directories only)")  # fmt: skip
    p.set_defaults(run=run)


def load(path: Path) -> ScoreResult:
    """A results folder as it is; a run directory through its default scoring."""
    if (path / "summary.json").exists():
        return read_scores(path)
    if (path / "manifest.json").exists():
        folder = scores_folder(path, ScoreConfig())
        if (folder / "summary.json").exists():
            return read_scores(folder)
        result = score_run(path, progress=sys.stderr.isatty())
        result.write(folder)
        return result
    raise InputError(
        InputProblem(str(path), None, None, "neither a results folder nor a run directory")
    )


def run(args: argparse.Namespace) -> int:
    if len(args.runs) < 2:
        raise InputError(InputProblem("<command line>", None, "runs", "give at least two runs"))
    results = [load(path) for path in args.runs]
    names = args.names.split(",") if args.names else None
    if names is not None and len(names) != len(results):
        raise InputError(
            InputProblem(
                "<command line>", None, "--names", f"{len(names)} names, {len(results)} runs"
            )
        )
    if names is None:  # the directories' names ("chunk128"); the paths when two are the same
        names = [p.resolve().name for p in args.runs]
        if len(set(names)) < len(names):
            names = [str(p) for p in args.runs]
    comparison = compare_results(
        dict(zip(names, results, strict=True)),
        alpha=args.alpha,
        resamples=args.resamples,
        seed=args.seed,
    )
    if args.out:
        comparison.write(args.out)
    if args.html:
        _write_html(args.html, names, args.runs, results, comparison)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render_comparison(comparison, query_type=args.query_type))
        if args.out:
            print(f"\nFiles: {args.out}/ means.csv differences.csv transitions.csv latency.csv "
                  "comparison.json")  # fmt: skip
    return 0


def _write_html(out: Path, names, paths, results, comparison) -> None:
    from cofe.report._html import RunForReport, render_report

    runs = []
    for name, path, result in zip(names, paths, results, strict=True):
        run_dir = path if (path / "manifest.json").exists() else Path(result.run)
        if not (run_dir / "manifest.json").exists():
            raise InputError(InputProblem(str(path), None, None, "--html needs the run directory "
                                          "(its texts), and this results folder names none"))  # fmt: skip
        runs.append(RunForReport.load(name, run_dir, result))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out, render_report(runs, comparison))
    print(f"wrote {out}", file=sys.stderr)
