"""``cofe plan PILOT [SECOND]``: how many questions -- and documents -- a drop needs.

From one pilot run, or two (a baseline and a change, or the same pipeline run twice: the
paired differences' own noise), per step and measure: the smallest drop the eval set
detects now (80% power, two-sided, at --alpha), and the questions and documents needed
to detect --drop. Tests cluster by source document from 20 documents on, below that they
run over questions (docs/ci.md). For the gate's five default rules, give --alpha 0.01
(Holm: a drop alone among five tests must reach alpha / 5).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cofe.cli._commands import HELP


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "plan",
        help=HELP["plan"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "runs",
        type=Path,
        nargs="+",
        metavar="RUN",
        help="one pilot run or two (results folders or run directories; the first the baseline)",
    )
    p.add_argument("--drop", type=float, default=0.02, help="the drop to detect (default 0.02)")
    p.add_argument("--power", type=float, default=0.8, help="the power wanted (default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument(
        "--measures",
        default=None,
        metavar="STEP/MEASURE,...",
        help="the columns to plan for (default: each step's headline measure)",
    )
    p.add_argument("--all", action="store_true", help="every measure the runs share")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import json

    from cofe._errors import InputError, InputProblem
    from cofe.cli._compare import load
    from cofe.compare import plan_sample_size
    from cofe.report import render_plan

    if len(args.runs) > 2:
        raise InputError(InputProblem("<command line>", None, "runs", "give one pilot run or two"))
    for name in ("drop", "power", "alpha"):
        value = getattr(args, name)
        if not 0 < value < 1:
            raise ValueError(f"--{name} must be between 0 and 1, got {value:g}")
    names = [p.resolve().name for p in args.runs]
    if len(set(names)) < len(names):
        names = [str(p) for p in args.runs]
    results = {name: load(path) for name, path in zip(names, args.runs, strict=True)}
    columns = [c.strip() for c in args.measures.split(",")] if args.measures else None
    try:
        plan = plan_sample_size(
            results,
            drop=args.drop,
            power=args.power,
            alpha=args.alpha,
            columns=columns,
            headline_only=not args.all and columns is None,
        )
    except ValueError as error:
        raise InputError(InputProblem("<command line>", None, "--measures", str(error))) from None
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render_plan(plan))
    return 0
