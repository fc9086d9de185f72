"""``cofe check RUN --baseline OLD``: the CI gate. Exit 0 when every rule passes, 1 when one
fails, 2 on a usage or input error.

Thresholds (--min, --max, --max-share) are checked on the run alone. A drop (--max-drop)
fails only when it is larger than allowed AND significant under cofe compare's paired test
(Holm-adjusted over the drop rules). With --baseline and no drop rule, keyword recall at each
step and answer/PointRecall may not drop by more than --default-max-drop; runs of
different top-K are compared at the common cutoff (the context: as each run received it).
Each drop rule shows the smallest drop the eval set can detect (80% power); --strict fails
a stage the runs cannot be compared on, --require-power a rule that cannot detect its limit.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cofe._errors import InputError
from cofe.cli._commands import HELP


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check",
        help=HELP["check"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "checked",
        type=Path,
        metavar="RUN",
        nargs="?",
        help="results folder (holding summary.json) or run directory (its default "
        "scoring, scored now if missing)",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        metavar="BASE_RUN",
        help="the scoring to compare with (a results folder or a run directory)",
    )
    p.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="rules in TOML: [[rule]] tables of target and min, max or max_drop "
        "(docs/rules.md; --print-example-rules shows one)",
    )
    p.add_argument(
        "--min",
        action="append",
        default=[],
        metavar="STEP/MEASURE=VALUE",
        help="the run's mean at least VALUE, e.g. context/KeywordRecall@4=0.8",
    )
    p.add_argument(
        "--max",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="the run's mean at most VALUE, e.g. context/RerankLoss@4=0.1; or the share "
        "of samples with a verdict (or blaming a stage), e.g. not_retrieved=0.15",
    )
    p.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="STEP/MEASURE=VALUE",
        help="fail on a significant drop from the baseline larger than VALUE, e.g. "
        "answer/PointRecall=0.02",
    )
    p.add_argument(
        "--max-share",
        action="append",
        default=[],
        metavar="VERDICT=SHARE",
        help="the share of samples with this verdict (or blaming this stage) at "
        "most SHARE, e.g. not_retrieved=0.15",
    )
    p.add_argument(
        "--default-max-drop",
        type=float,
        default=None,
        metavar="VALUE",
        help="the drop allowed each headline measure when no drop rule is given (default 0.02)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="family-wise error rate of the drop tests (Holm; default 0.05)",
    )
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap/permutation draws")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--shared-samples",
        action="store_true",
        help="runs of different eval sets: compare the samples both have",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="a stage the two runs cannot be compared on fails the gate (else it is a "
        "line marked skip)",
    )
    p.add_argument(
        "--require-power",
        action="store_true",
        help="a drop rule whose limit is below the smallest drop this eval set can detect "
        "(80%% power) fails the gate",
    )
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML")
    p.add_argument(
        "--github", action="store_true", help="also print GitHub Actions annotations (::error ...)"
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON instead")
    p.add_argument(
        "--print-example-rules", action="store_true", help="print an example rules file and exit"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import json

    from cofe.check import (
        DEFAULT_MAX_DROP,
        EXAMPLE_FILE,
        Kind,
        check_results,
        github_annotations,
        merged,
        parse_flag,
        read_rules,
        render_text,
        write_junit,
    )
    from cofe.cli._compare import load
    from cofe.rules import old_spellings_said

    if args.print_example_rules:
        print(EXAMPLE_FILE, end="")
        return 0
    if args.checked is None:
        raise InputError("give the run to check: cofe check RUN [--baseline BASE_RUN] ...")
    if args.alpha is not None and not 0 < args.alpha < 1:
        raise InputError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.default_max_drop is not None and args.default_max_drop < 0:
        raise InputError(f"--default-max-drop must be at least 0, got {args.default_max_drop}")
    flags = [
        parse_flag(kind, text)
        for kind, texts in (
            (Kind.MIN, args.min),
            (Kind.MAX, args.max),
            (Kind.MAX_DROP, args.max_drop),
            (Kind.MAX_SHARE, args.max_share),
        )
        for text in texts
    ]
    with old_spellings_said():  # an old spelling: one line on stderr naming the new one
        file = read_rules(args.rules) if args.rules else None
    rules = merged(file.rules if file else (), flags)
    alpha: float = next(
        v for v in (args.alpha, file.alpha if file else None, 0.05) if v is not None
    )
    default_max_drop: float = next(
        v
        for v in (args.default_max_drop, file.default_max_drop if file else None, DEFAULT_MAX_DROP)
        if v is not None
    )
    result = load(args.checked)
    baseline = load(args.baseline) if args.baseline else None
    report = check_results(
        result,
        rules,
        baseline,
        alpha=alpha,
        default_max_drop=default_max_drop,
        resamples=args.resamples,
        seed=args.seed,
        shared_samples=args.shared_samples,
        run_name=str(args.checked),
        baseline_name=str(args.baseline) if args.baseline else "baseline",
        strict=args.strict,
        require_power=args.require_power,
    )
    if args.junit:
        write_junit(report, args.junit)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render_text(report))
    if args.github:
        print("\n".join(github_annotations(report)))
    return report.exit_code
