"""``cofe compare A B ...``: are the differences between runs real? Paired statistics per measure."""

from __future__ import annotations

import argparse
import errno
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cofe._errors import InputError, InputProblem
from cofe.cli._commands import HELP

if TYPE_CHECKING:
    from cofe.compare import Comparison
    from cofe.report import RunForReport
    from cofe.results import ScoreResult

# the scoring, comparing and rendering code (pandas, scipy) loads when a command runs, not
# for `cofe --help`


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare",
        help=HELP["compare"],
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
    p.add_argument("--query-type", default="all", help="rows to print: all, or one query type")
    p.add_argument("-o", "--out", type=Path, help="write means/differences/transitions CSV + JSON")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument(
        "--shared-samples",
        action="store_true",
        help="runs of different eval sets: compare only the samples all of them "
        "have (same id, query type and source) and say how many were left out",
    )
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the HTML report of these runs (run directories only)",
    )
    p.set_defaults(run=run)


def load(path: Path) -> ScoreResult:
    """A results folder as it is; a run directory through its default scoring (scored now,
    and saved beside the run when the folder can be written to)."""
    from cofe._progress import progress_lines
    from cofe.cli._score import judge_labels
    from cofe.results import read_scores, scores_folder
    from cofe.runlog import run_folder_lock
    from cofe.stages import ScoreConfig, score_run

    if (path / "summary.json").exists():
        return read_scores(path)
    if (path / "manifest.json").exists():
        folder = scores_folder(path, ScoreConfig())
        if (folder / "summary.json").exists():
            return read_scores(folder)
        with (
            run_folder_lock(path, purpose="scoring the run", reading=True),
            progress_lines() as shown,
        ):
            result = score_run(path, progress=shown, labels=judge_labels)
        try:
            result.write(folder)
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            print(
                f"cofe: note: {folder} cannot be written ({error.strerror}): the scoring of "
                f"{path} is used for this command only. To keep it: cofe score {path} --out "
                "DIR, then give DIR instead of the run",
                file=sys.stderr,
            )
        return result
    raise InputError(
        InputProblem(str(path), None, None, "neither a results folder nor a run directory")
    )


def run_folder_of(path: Path, result: ScoreResult) -> Path | None:
    """The run directory behind what was given: the path itself, or the run a results folder
    was scored from (as it was named then, or the folder holding the results)."""
    for candidate in (path, Path(result.run), path.parent):
        if (candidate / "manifest.json").exists():
            return candidate
    return None


def run(args: argparse.Namespace) -> int:
    from cofe.compare import compare_results
    from cofe.report import render_comparison

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
        shared_samples=args.shared_samples,
    )
    if comparison.shared is not None:  # said first, where the reader starts
        left = ", ".join(f"{run} {n}" for run, n in comparison.left_out.items())
        print(
            f"cofe compare: comparing the {comparison.shared} sample(s) every run has; "
            f"left out: {left}",
            file=sys.stderr,
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
            print(
                f"\nFiles: {args.out}/ means.csv differences.csv transitions.csv latency.csv "
                "comparison.json"
            )
    return 0


def _write_html(
    out: Path,
    names: list[str],
    paths: list[Path],
    results: list[ScoreResult],
    comparison: Comparison,
) -> None:
    from cofe._atomic import write_text_atomically
    from cofe.report import RunForReport, render_report

    runs: list[RunForReport] = []
    for name, path, result in zip(names, paths, results, strict=True):
        if result.shape.get("replay"):
            # its answers are not the run directory's: the report would show the run's texts
            raise InputError(
                InputProblem(
                    str(path),
                    None,
                    None,
                    "a replayed run (cofe replay) has no texts of its own for --html: "
                    "`cofe replay RUN --html FILE` shows its answers beside the run's",
                )
            )
        run_dir = run_folder_of(path, result)
        if run_dir is None:
            raise InputError(
                InputProblem(
                    str(path),
                    None,
                    None,
                    "--html needs the run directory "
                    "(its texts), and this results folder names none",
                )
            )
        runs.append(RunForReport.load(name, run_dir, result))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out, render_report(runs, comparison))
    print(f"wrote {out}", file=sys.stderr)
