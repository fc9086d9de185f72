"""The CI gate: fail a build when a stage regresses (``cofe check``, the pytest plugin).

Rules are thresholds on a scoring (``min``/``max`` of a column's mean, ``max_share`` of a
verdict or stage) and drops against a baseline scoring (``max_drop``). A drop fails only
when it is larger than allowed *and* significant under ``cofe compare``'s paired test,
Holm-adjusted over the check's drop rules. Given a baseline and no drop rule, the headline
measures -- keyword recall at each step and ``answer/PointRecall`` -- may not drop by more
than ``DEFAULT_MAX_DROP``; runs of different top-K are compared at their common cutoff.
Each drop rule reports the smallest drop the eval set can detect (``strict``: a stage not
compared fails; ``require_power``: a rule that cannot detect its limit fails).

``check(run, baseline, rules)`` takes folders or ``ScoreResult`` objects and returns a
``CheckReport``; ``assert_check`` raises ``CheckFailed`` (an ``AssertionError``) naming
each failing stage and measure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cofe.check._gate import (
    CheckReport,
    Headlines,
    Outcome,
    Status,
    check_results,
    headline_rules,
)
from cofe.check._output import describe, github_annotations, junit_xml, render_text, write_junit
from cofe.check._rules import (
    DEFAULT_MAX_DROP,
    EXAMPLE_FILE,
    GateRule,
    Kind,
    RuleSet,
    make_rule,
    merged,
    parse_flag,
    read_rules,
    rules_from_mapping,
)
from cofe.rules import parse_column

if TYPE_CHECKING:
    from cofe.results import ScoreResult

__all__ = [
    "DEFAULT_MAX_DROP",
    "EXAMPLE_FILE",
    "CheckFailed",
    "CheckReport",
    "GateRule",
    "Headlines",
    "Kind",
    "Outcome",
    "RuleSet",
    "Status",
    "assert_check",
    "check",
    "check_results",
    "describe",
    "github_annotations",
    "headline_rules",
    "junit_xml",
    "load_result",
    "make_rule",
    "merged",
    "parse_column",
    "parse_flag",
    "read_rules",
    "render_text",
    "rules_from_mapping",
    "write_junit",
]


class CheckFailed(AssertionError):
    """The gate failed; the message names each failing stage and measure."""

    def __init__(self, report: CheckReport) -> None:
        lines = [describe(o) for o in report.failures]
        super().__init__(f"cofe check failed: {len(lines)} rule(s)\n  " + "\n  ".join(lines))
        self.report = report


def load_result(path: str | os.PathLike[str]) -> ScoreResult:
    """A results folder (holding ``summary.json``), or a run directory through its default
    scoring (read when saved beside the run, else scored now, in memory)."""
    from cofe._errors import InputError, InputProblem
    from cofe.judges import labels_for_scoring
    from cofe.results import read_scores, scores_folder
    from cofe.stages import ScoreConfig, score_run

    folder = Path(path)
    if (folder / "summary.json").exists():
        return read_scores(folder)
    if (folder / "manifest.json").exists():
        saved = scores_folder(folder, ScoreConfig())
        return (
            read_scores(saved)
            if (saved / "summary.json").exists()
            else score_run(folder, labels=labels_for_scoring)
        )
    raise InputError(
        InputProblem(str(folder), None, None, "neither a results folder nor a run directory")
    )


def _rule_set(rules: Any) -> RuleSet:
    if rules is None:
        return RuleSet(())
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str | os.PathLike):
        return read_rules(rules)
    if isinstance(rules, Mapping):
        return rules_from_mapping(rules)
    return RuleSet(tuple(rules))


def check(
    run: ScoreResult | str | os.PathLike[str],
    baseline: ScoreResult | str | os.PathLike[str] | None = None,
    rules: RuleSet | Sequence[GateRule] | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    alpha: float | None = None,
    default_max_drop: float | None = None,
    resamples: int = 2000,
    seed: int = 0,
    shared_samples: bool = False,
    strict: bool = False,
    require_power: bool = False,
) -> CheckReport:
    """Check a scoring: ``rules`` a rules file, a mapping of the same shape
    (``{"min": {"context/KeywordRecall@4": 0.8}}``), rules, or None (with a baseline: the
    headline measures may not drop)."""
    given = _rule_set(rules)
    ours = run if not isinstance(run, str | os.PathLike) else load_result(run)
    theirs = baseline if not isinstance(baseline, str | os.PathLike) else load_result(baseline)
    return check_results(
        ours,
        given.rules,
        theirs,
        alpha=alpha if alpha is not None else given.alpha or 0.05,
        default_max_drop=(
            default_max_drop
            if default_max_drop is not None
            else DEFAULT_MAX_DROP
            if given.default_max_drop is None
            else given.default_max_drop
        ),
        resamples=resamples,
        seed=seed,
        shared_samples=shared_samples,
        strict=strict,
        require_power=require_power,
        run_name=_name(run, "run"),
        baseline_name=_name(baseline, "baseline"),
    )


def _name(given: object, fallback: str) -> str:
    if isinstance(given, str | os.PathLike):
        return str(given)
    run_id = getattr(given, "run_id", "")
    return str(run_id) if run_id else fallback


def assert_check(
    run: ScoreResult | str | os.PathLike[str],
    baseline: ScoreResult | str | os.PathLike[str] | None = None,
    rules: RuleSet | Sequence[GateRule] | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    **options: Any,
) -> CheckReport:
    """``check`` that raises ``CheckFailed`` (an ``AssertionError``) when a rule fails."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    report = check(run, baseline, rules, **options)
    if not report.passed:
        raise CheckFailed(report)
    return report


def __getattr__(name: str) -> Any:
    """``cofe.check.Rule``, the gate's rule before ``Rule`` meant one thing, still resolves."""
    if name == "Rule":
        import warnings

        warnings.warn(
            "cofe.check.Rule is now cofe.check.GateRule (cofe.rules.Rule is a rule as a rules "
            "file writes it)",
            DeprecationWarning,
            stacklevel=2,
        )
        return GateRule
    raise AttributeError(f"module 'cofe.check' has no attribute {name!r}")
