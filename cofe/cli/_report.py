"""``cofe report RUN [RUN ...] -o report.html``: one self-contained HTML page to look at.

Charts (loss waterfall, verdicts per query type, the distribution of every
measure, latency), the comparison of the runs when there are several, and a
bad-case browser filtered by run, verdict, query type and document; a run replayed
with `cofe replay` gets its "what a fix is worth" section. The page
needs no network and runs no code from the documents it shows.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cofe._errors import InputError, InputProblem
from cofe.cli._commands import HELP
from cofe.cli._compare import load, run_folder_of

MAX_CASES = 300  # cofe.report.MAX_CASES (the CLI's default, spelt here: --help loads no pandas)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help=HELP["report"], description=__doc__)
    p.add_argument(
        "runs",
        nargs="+",
        type=Path,
        help="run directories, or results folders of runs (cofe score RUN --out DIR: "
        "for a run folder that cannot be written to)",
    )
    p.add_argument("-o", "--out", type=Path, default=Path("report.html"), help="the HTML file")
    p.add_argument("--names", help="comma-separated names (default: the folders' names)")
    p.add_argument("--max-cases", type=int, default=MAX_CASES, help="bad cases shown per run")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cofe._atomic import write_text_atomically
    from cofe.compare import compare_results
    from cofe.report import RunForReport, render_report

    if args.out.is_dir():  # said before any run is scored, not after
        raise IsADirectoryError(f"{args.out}: is a folder; give the HTML file to write")
    for path in args.runs:
        if not (path / "manifest.json").exists() and not (path / "summary.json").exists():
            raise InputError(
                InputProblem(
                    str(path),
                    None,
                    None,
                    "neither a run directory "
                    "(no manifest.json) nor a results folder (no "
                    "summary.json): the report needs the run's texts",
                )
            )
    results = [load(path) for path in args.runs]
    run_dirs = []
    for path, result in zip(args.runs, results, strict=True):
        run_dir = run_folder_of(path, result)
        if run_dir is None:
            raise InputError(
                InputProblem(
                    str(path),
                    None,
                    None,
                    f"the run it scored "
                    f"({result.run}) is not there: the report needs the "
                    "run's texts",
                )
            )
        run_dirs.append(run_dir)
    # default names: the run directories' names ("chunk128"), unless two are the same
    names = args.names.split(",") if args.names else [p.resolve().name for p in run_dirs]
    if len(names) != len(results):
        raise InputError(
            InputProblem(
                "<command line>", None, "--names", f"{len(names)} names, {len(results)} runs"
            )
        )
    if len(set(names)) < len(names):
        names = [str(p) for p in run_dirs]
    runs = [RunForReport.load(n, p, r) for n, p, r in zip(names, run_dirs, results, strict=True)]
    comparison = (
        compare_results(dict(zip(names, results, strict=True))) if len(results) > 1 else None
    )
    from cofe.replay import report_section

    # a run replayed (cofe replay) gets its "what a fix is worth" section
    sections = [
        report_section(path, name, f"fix-value-{k}")
        for k, (name, path) in enumerate(zip(names, run_dirs, strict=True))
    ]
    page = render_report(
        runs,
        comparison,
        max_cases=args.max_cases,
        fix_value=[s for s in sections if s is not None],
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(args.out, page)
    print(f"wrote {args.out} ({len(page) / 1e6:.1f} MB): open it in a browser, no network needed")
    return 0
