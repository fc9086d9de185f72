"""The gate: each rule checked on a scoring (thresholds) or against a baseline (drops).

A drop fails only when it is larger than the rule allows *and* significant: the paired
test of ``cofe compare`` (exact McNemar for 0/1 values, else a sign-flip permutation test,
clustered by source document), Holm-adjusted over the drop rules of this check.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from cofe._errors import InputError, InputProblem
from cofe.chain import STEP_STAGE, STEPS, Stage, Step
from cofe.check._rules import (
    ANSWERED,
    COMMAND_LINE,
    DEFAULT_MAX_DROP,
    Kind,
    Rule,
    close_matches,
    higher_is_better,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from cofe.results import ScoreResult

EPSILON = 1e-12  # a drop equal to its limit passes (floating-point sums are not exact)
# the stage whose output a column's step holds (the answer's measures over answered samples
# are the generator's too; the context's depends on the run: no stage named)
_STAGE_OF_STEP = {
    **{step.value: stage.value for step, stage in STEP_STAGE.items()},
    ANSWERED: Stage.GENERATION.value,
}


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"  # a default rule the two runs cannot be compared on


@dataclass(frozen=True)
class Outcome:
    """One rule's result. ``delta`` is run - baseline (drop rules) and ``low``/``high`` its
    CI; for thresholds ``low``/``high`` are the run's mean's CI and there is no baseline."""

    rule: Rule
    status: Status
    stage: str | None  # the pipeline stage whose output the rule reads
    value: float | None = None  # the run's mean (or share)
    baseline: float | None = None
    delta: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None  # the paired test's own p-value
    p_holm: float | None = None  # adjusted over this check's drop rules
    test: str = ""
    n: int = 0  # samples (paired samples for a drop)
    reason: str = ""

    @property
    def failed(self) -> bool:
        return self.status == Status.FAIL

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": str(self.rule),
            "kind": str(self.rule.kind),
            "target": self.rule.target,
            "limit": self.rule.limit,
            "origin": self.rule.origin,
            "default": self.rule.default,
            "status": str(self.status),
            "stage": self.stage,
            "step": self.rule.step,
            "measure": self.rule.measure,
            "value": self.value,
            "baseline": self.baseline,
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "test": self.test,
            "n": self.n,
            "reason": self.reason,
        }


@dataclass
class CheckReport:
    """Every rule's outcome, and what the statistics were."""

    run: str
    baseline: str | None
    outcomes: list[Outcome]
    alpha: float
    default_max_drop: float
    defaults_used: bool = False  # the headline drop rules were added (no drop rule given)
    clustering: str = ""
    drop_tests: int = 0  # distinct paired tests Holm adjusted over
    notes: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failed]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "baseline": self.baseline,
            "passed": self.passed,
            "alpha": self.alpha,
            "default_max_drop": self.default_max_drop,
            "defaults_used": self.defaults_used,
            "clustering": self.clustering,
            "notes": self.notes,
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


# --- reading a scoring ----------------------------------------------------------------------


def scored_columns(result: ScoreResult) -> list[str]:
    """Every ``step/measure`` the scoring holds values of (answer measures also as
    ``answered/...``)."""
    pairs = result.scores[["step", "measure"]].drop_duplicates()
    columns = [f"{s}/{m}" for s, m in zip(pairs["step"], pairs["measure"], strict=True)]
    columns += [f"{ANSWERED}/{c.split('/', 1)[1]}" for c in columns if c.startswith("answer/")]
    return sorted(columns)


def column_values(result: ScoreResult, column: str) -> pd.Series:
    """Per sample id, the values of one column (``answered/``: the samples whose answer does
    not decline)."""
    from cofe.results import answered_only

    step, measure = column.split("/", 1)
    scores = answered_only(result.scores, result.verdicts) if step == ANSWERED else result.scores
    rows = scores[
        (scores["step"] == ("answer" if step == ANSWERED else step))
        & (scores["measure"] == measure)
    ]
    return rows.drop_duplicates("sample_id").set_index("sample_id")["value"].astype(float)


def _clusters(result: ScoreResult, ids: pd.Index) -> np.ndarray | None:
    """The source document of each sample when samples share documents, as cofe compare
    clusters them (a sample without a source is its own cluster); None: independent."""
    from cofe.compare import cluster_labels, source_clusters

    sources, _ = source_clusters({"run": result})
    return cluster_labels(ids, sources)


def stage_of(rule: Rule, result: ScoreResult) -> str | None:
    """The stage whose output a rule reads: the context is the reranker's when the run
    reranks, else the retriever's; a share names its stage (a verdict: the stage it blames)."""
    if rule.kind == Kind.MAX_SHARE:
        from cofe.diagnose import Verdict

        if rule.target in {str(v) for v in Verdict}:
            stage = Verdict(rule.target).stage
            return None if stage is None else str(stage)
        return rule.target
    step = rule.step or ""
    if step == "context":
        return "reranking" if "reranking" in (result.shape or {}).get("stages", []) else "retrieval"
    return _STAGE_OF_STEP.get(step)


# --- the default rules -----------------------------------------------------------------------


def _cutoff(column: str) -> float:
    found = re.search(r"@(\d+)$", column)
    return float(found.group(1)) if found else math.inf


def headline_rules(
    run: ScoreResult, baseline: ScoreResult, max_drop: float = DEFAULT_MAX_DROP
) -> tuple[list[Rule], list[str]]:
    """Keyword recall at each step (the largest cutoff the run has: the pool's, the
    context's top-K) and the answer's point recall, each allowed ``max_drop``; with a note
    for each the two scorings cannot be compared on."""
    ours, theirs = set(scored_columns(run)), set(scored_columns(baseline))
    wanted = []
    for spec in STEPS:  # each step's declared headline measure, at its largest cutoff
        if spec.headline is None:
            continue
        column = f"{spec.step.value}/{spec.headline}"
        found = [c for c in ours | theirs if re.fullmatch(rf"{re.escape(column)}(@\d+)?", c)]
        mine = [c for c in found if c in ours] or found
        if mine:
            wanted.append(max(mine, key=_cutoff))
        elif spec.step is Step.ANSWER:  # named even when neither has it: the note says so
            wanted.append(column)
    rules, notes = [], []
    for column in wanted:
        if column in ours and column in theirs:
            rules.append(Rule(Kind.MAX_DROP, column, max_drop, "default", default=True))
        elif column in ours or column in theirs:
            missing = "the baseline" if column in ours else "the run"
            prefix = column.rsplit("@", 1)[0] + "@"
            other = [c for c in (theirs if column in ours else ours) if c.startswith(prefix)]
            has = f" (it has {', '.join(sorted(other))})" if other else ""
            notes.append(f"{column}: not compared, {missing} has no such column{has}")
    return rules, notes


# --- the check ---------------------------------------------------------------------------------


def _unknown_column(
    result: ScoreResult, which: str, rule: Rule, available: list[str]
) -> InputError:
    near = close_matches(rule.target, available)
    hint = (
        f"; scored there: {', '.join(near)}" if near else f"; scored there: {', '.join(available)}"
    )
    return InputError(
        InputProblem(
            rule.origin if rule.origin != COMMAND_LINE else COMMAND_LINE,
            None,
            rule.target,
            f"not scored in {which} ({result.run}){hint}",
        )
    )


def check_results(
    run: ScoreResult,
    rules: Sequence[Rule] = (),
    baseline: ScoreResult | None = None,
    *,
    alpha: float = 0.05,
    default_max_drop: float = DEFAULT_MAX_DROP,
    resamples: int = 2000,
    seed: int = 0,
    shared_samples: bool = False,
    run_name: str = "run",
    baseline_name: str = "baseline",
) -> CheckReport:
    """Check ``rules`` on ``run`` (and against ``baseline``). With a baseline and no drop
    rule, the headline measures may not drop by more than ``default_max_drop``."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    rules = list(rules)
    drops = [r for r in rules if r.kind == Kind.MAX_DROP]
    if drops and baseline is None:
        raise InputError(
            InputProblem(
                COMMAND_LINE,
                None,
                "--baseline",
                f"a drop rule ({drops[0]}) needs a baseline to compare with",
            )
        )
    if not rules and baseline is None:
        raise InputError(
            InputProblem(
                COMMAND_LINE,
                None,
                None,
                "nothing to check: give --baseline, a rules file (--rules) "
                "or a --min/--max/--max-share rule",
            )
        )
    report = CheckReport(
        run=run_name,
        baseline=baseline_name if baseline is not None else None,
        outcomes=[],
        alpha=alpha,
        default_max_drop=default_max_drop,
    )
    if baseline is not None and not drops:
        drops, report.notes = headline_rules(run, baseline, default_max_drop)
        report.defaults_used = True
        rules = [*rules, *drops]
    available = scored_columns(run)
    for rule in rules:
        if rule.kind != Kind.MAX_SHARE and rule.target not in available:
            raise _unknown_column(run, "the run", rule, available)
    if baseline is not None:
        base_columns = scored_columns(baseline)
        for rule in drops:
            if rule.target not in base_columns:
                raise _unknown_column(baseline, "the baseline", rule, base_columns)
    ids = run.verdicts["sample_id"].drop_duplicates()
    import pandas as pd

    if _clusters(run, pd.Index(ids)) is not None:
        n_docs = run.verdicts["source"].dropna().nunique()
        report.clustering = f"clustered by source document ({n_docs} documents)"
    else:
        report.clustering = "samples independent (they share no source document)"
    drop_outcomes = (
        _drop_outcomes(
            run,
            baseline,
            drops,
            alpha=alpha,
            resamples=resamples,
            seed=seed,
            shared_samples=shared_samples,
            names=(run_name, baseline_name),
            report=report,
        )
        if baseline is not None and drops
        else {}
    )
    for rule in rules:
        if rule.kind == Kind.MAX_DROP:
            report.outcomes.append(drop_outcomes[rule])
        else:
            report.outcomes.append(_threshold(run, rule, resamples=resamples, seed=seed))
    return report


def _threshold(run: ScoreResult, rule: Rule, *, resamples: int, seed: int) -> Outcome:
    """A threshold on the run alone: its mean (or share) against the limit; the CI is shown,
    not tested."""
    import numpy as np
    import pandas as pd

    from cofe.compare import mean_ci

    if rule.kind == Kind.MAX_SHARE:
        verdicts = run.verdicts.drop_duplicates("sample_id").set_index("sample_id")
        column = "stage" if rule.target in _stage_names() else "verdict"  # no name is both
        values = pd.Series(
            (verdicts[column].astype("string") == rule.target).fillna(False).to_numpy(dtype=float),
            index=verdicts.index,
        )
    else:
        values = column_values(run, rule.target)
    stage = stage_of(rule, run)
    if values.empty:
        return Outcome(rule, Status.SKIP, stage, reason="no sample scored")
    ci = mean_ci(values.to_numpy(), _clusters(run, values.index), resamples=resamples, seed=seed)
    mean = float(np.mean(values.to_numpy()))
    if rule.kind == Kind.MIN:
        ok = mean >= rule.limit - EPSILON
        reason = f"{mean:.3f} {'>=' if ok else '<'} {rule.limit:g}"
    else:
        ok = mean <= rule.limit + EPSILON
        reason = f"{mean:.3f} {'<=' if ok else '>'} {rule.limit:g}"
    what = "share" if rule.kind == Kind.MAX_SHARE else "mean"
    return Outcome(
        rule,
        Status.PASS if ok else Status.FAIL,
        stage,
        value=mean,
        low=ci.low,
        high=ci.high,
        n=len(values),
        reason=f"{what} {reason} (the run alone)",
    )


def _stage_names() -> list[str]:
    from cofe.runlog import Stage

    return [str(s) for s in Stage]


def _drop_outcomes(
    run: ScoreResult,
    baseline: ScoreResult,
    drops: list[Rule],
    *,
    alpha: float,
    resamples: int,
    seed: int,
    shared_samples: bool,
    names: tuple[str, str],
    report: CheckReport,
) -> dict[Rule, Outcome]:
    from cofe.compare import ALL, compare_results, holm

    run_name, baseline_name = names
    if run_name == baseline_name:
        baseline_name = f"{baseline_name} (baseline)"
    comparison = compare_results(
        {run_name: run, baseline_name: baseline},
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        shared_samples=shared_samples,
    )
    if comparison.shared is not None:
        left = ", ".join(f"{r} {n}" for r, n in comparison.left_out.items())
        report.notes.append(
            f"compared on the {comparison.shared} samples both runs have (left out: {left})"
        )
    if comparison.clustering.startswith("by source document"):
        report.clustering = "clustered " + comparison.clustering.split(" (")[0]
    d = comparison.differences
    rows: dict[str, dict[Hashable, Any]] = {}  # a record of the differences table
    if not d.empty:
        mine = d[(d["a"] == run_name) & (d["b"] == baseline_name) & (d["query_type"] == ALL)]
        for record in mine.to_dict("records"):
            rows[f"{record['step']}/{record['measure']}"] = record
    means = comparison.means
    mean_of: dict[tuple[str, str], float] = {}
    if not means.empty:
        for record in means[means["query_type"] == ALL].to_dict("records"):
            mean_of[(record["run"], f"{record['step']}/{record['measure']}")] = record["mean"]
    # Holm over the distinct tests of this check (two columns holding the same per-sample
    # values -- answered/X when nothing declined -- are one test)
    test_of: dict[Rule, str] = {}
    p_of: dict[str, float] = {}
    for rule in drops:
        if rule.target in rows:
            test_of[rule] = rows[rule.target]["same_test_as"] or rule.target
            p_of.setdefault(test_of[rule], float(rows[rule.target]["p_value"]))
    adjusted = dict(zip(p_of, holm(list(p_of.values())), strict=True))
    report.drop_tests = len(p_of)
    out: dict[Rule, Outcome] = {}
    for rule in drops:
        stage = stage_of(rule, run)
        if rule.target not in rows:
            if rule.default:
                out[rule] = Outcome(rule, Status.SKIP, stage, reason="no paired samples")
                continue
            raise InputError(
                InputProblem(
                    rule.origin,
                    None,
                    rule.target,
                    "no sample is scored in both runs: nothing to compare",
                )
            )
        row = rows[rule.target]
        delta = float(row["difference"])  # run - baseline, over the paired samples
        drop = -delta if higher_is_better(rule.target) else delta
        p_raw, p_adj = float(row["p_value"]), adjusted[test_of[rule]]
        beyond = drop > rule.limit + EPSILON
        significant = p_adj < alpha
        if beyond and significant:
            status, why = (
                Status.FAIL,
                (
                    f"dropped {drop:.3f} > {rule.limit:g} allowed, and "
                    f"significant (p_holm {_p(p_adj)} < {alpha:g})"
                ),
            )
        elif beyond:
            status, why = (
                Status.PASS,
                (
                    f"dropped {drop:.3f} > {rule.limit:g} allowed, but not "
                    f"significant (p_holm {_p(p_adj)} >= {alpha:g})"
                ),
            )
        elif drop > EPSILON:
            status, why = Status.PASS, f"dropped {drop:.3f}, within {rule.limit:g}"
        elif drop < -EPSILON:
            status, why = Status.PASS, f"improved by {-drop:.3f}"
        else:
            status, why = Status.PASS, "no change"
        low, high = float(row["low"]), float(row["high"])
        out[rule] = Outcome(
            rule,
            status,
            stage,
            value=_finite(mean_of.get((run_name, rule.target))),
            baseline=_finite(mean_of.get((baseline_name, rule.target))),
            delta=delta,
            low=low,
            high=high,
            p_value=p_raw,
            p_holm=p_adj,
            test=str(row["test"]),
            n=int(row["n"]),
            reason=why,
        )
    return out


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"
