"""The gate: each rule checked on a scoring (thresholds) or against a baseline (drops).

A drop fails only when it is larger than the rule allows *and* significant: the paired
test of ``cofe compare`` (exact McNemar for 0/1 values, else a sign-flip permutation test,
by source document or over questions as ``cofe.compare.choose_inference`` rules),
Holm-adjusted over the drop rules of this check; each drop rule also says the smallest drop
the eval set detects (``Inference.power``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from cofe._errors import InputError, InputProblem
from cofe.chain import STEP_SPECS, STEP_STAGE, Stage, Step
from cofe.check._rules import COMMAND_LINE, DEFAULT_MAX_DROP, GateRule, Kind
from cofe.rules import ANSWERED, close_matches, higher_is_better

if TYPE_CHECKING:
    import pandas as pd

    from cofe.compare import Comparison, Inference, Power
    from cofe.results import ScoreResult

POWER = 0.8  # the power a rule's detectable drop is given at
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

    rule: GateRule
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
    # where the runs were compared when their cutoffs differ ("": as named)
    compared_at: str = ""
    # the smallest drop the paired test finds with 80 % power here (inf: none), and for a
    # limit below it what the rule would need ("cannot detect a drop of 0.02 here (...)")
    detectable: float | None = None
    power_note: str = ""

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
            "severity": self.rule.severity,
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
            "compared_at": self.compared_at,
            "detectable_drop": (
                None if self.detectable is None or math.isinf(self.detectable) else self.detectable
            ),
            "cannot_detect": self.power_note,
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
    # the tests ran over questions (too few documents): what the result does not say
    caveat: str = ""
    power: float = 0.8  # the power the detectable drops are given at
    strict: bool = False  # a stage the runs cannot be compared on fails
    require_power: bool = False  # a drop rule that cannot detect its limit fails

    @property
    def failures(self) -> list[Outcome]:
        """The rules that fail the gate: failed, of severity error."""
        return [o for o in self.outcomes if o.failed and o.rule.severity != "warning"]

    @property
    def warnings(self) -> list[Outcome]:
        """The rules of severity warning that failed: said, the gate still passes."""
        return [o for o in self.outcomes if o.failed and o.rule.severity == "warning"]

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
            "caveat": self.caveat,
            "strict": self.strict,
            "require_power": self.require_power,
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


def _inference(result: ScoreResult) -> Inference:
    """The comparisons' one rule (cofe.compare.choose_inference) for this run's questions."""
    from cofe.compare import inference_for

    return inference_for({"run": result})


def stage_of(rule: GateRule, result: ScoreResult) -> str | None:
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


@dataclass(frozen=True)
class Headlines:
    """The default drop rules: those compared (with, per rule, where: a common cutoff or
    each run's whole context) and those the runs cannot be compared on, with why."""

    rules: list[GateRule]
    compared_at: dict[GateRule, str]
    not_compared: list[tuple[GateRule, str]]


def headline_rules(
    run: ScoreResult,
    baseline: ScoreResult,
    max_drop: float = DEFAULT_MAX_DROP,
    *,
    columns: tuple[set[str], set[str]] | None = None,
) -> Headlines:
    """Keyword recall at each step and the answer's point recall, each allowed ``max_drop``.

    A ranked step is compared at the largest cutoff both runs hold (``columns``: each run's
    columns after ``cofe.compare.align_cutoffs``, which computes the common cutoff from the
    ranks); when the runs' top-K differ, the context is compared as each run handed it to
    the generator (``context/KeywordRecall``, no cutoff). A step only one run has, or
    neither where one is expected (the answer), is a rule not compared, never left out."""
    ours, theirs = columns if columns is not None else _aligned_columns(run, baseline)
    out = Headlines([], {}, [])
    for spec in STEP_SPECS:  # each step's declared headline measure
        if spec.headline is None:
            continue
        step, column = spec.step.value, f"{spec.step.value}/{spec.headline}"
        pattern = re.compile(rf"{re.escape(column)}(@\d+)?")
        mine = sorted((c for c in ours if pattern.fullmatch(c)), key=_cutoff)
        other = sorted((c for c in theirs if pattern.fullmatch(c)), key=_cutoff)
        both = [c for c in mine if c in other]
        if not mine and not other:
            if spec.step is Step.ANSWER:  # named even when neither has it
                rule = GateRule(Kind.MAX_DROP, column, max_drop, "default", default=True)
                out.not_compared.append((rule, "neither run has it"))
            continue
        if not both:
            target = (mine or other)[-1]
            rule = GateRule(Kind.MAX_DROP, target, max_drop, "default", default=True)
            lacking = "the baseline" if mine else "the run"
            has = f" (it has {', '.join(other or mine)})" if (other and mine) else ""
            why = f"{lacking} has no {step} column to compare it with{has}"
            out.not_compared.append((rule, why))
            continue
        cut_ours = [c for c in mine if "@" in c]
        cut_theirs = [c for c in other if "@" in c]
        differ = bool(cut_ours) and bool(cut_theirs) and cut_ours[-1] != cut_theirs[-1]
        if differ and spec.step is Step.CONTEXT and column in both:
            target = column
            where = (
                f"each run's whole context as the generator received it (top-K: run "
                f"@{_k(cut_ours[-1])}, baseline @{_k(cut_theirs[-1])})"
            )
        else:
            cut = [c for c in both if c != column or not differ]
            if not cut:
                rule = GateRule(Kind.MAX_DROP, mine[-1], max_drop, "default", default=True)
                out.not_compared.append((rule, "no cutoff both runs hold"))
                continue
            target = max(cut, key=_cutoff)
            where = (
                f"at the common cutoff @{_k(target)} (run scored to @{_k(cut_ours[-1])}, "
                f"baseline to @{_k(cut_theirs[-1])})"
                if differ
                else ""
            )
        rule = GateRule(Kind.MAX_DROP, target, max_drop, "default", default=True)
        out.rules.append(rule)
        if where:
            out.compared_at[rule] = where
    return out


def _k(column: str) -> str:
    return column.rsplit("@", 1)[1]


def _aligned_columns(run: ScoreResult, baseline: ScoreResult) -> tuple[set[str], set[str]]:
    """Each scoring's columns once the cutoffs are aligned (``cofe.compare.align_cutoffs``)."""
    from cofe.compare import align_cutoffs, measure_columns, value_tables

    tables = value_tables({"run": run, "baseline": baseline})
    align_cutoffs({"run": run, "baseline": baseline}, tables)
    ours, theirs = ({f"{s}/{m}" for s, m in measure_columns(tables[k])} for k in tables)
    return ours, theirs


# --- the check ---------------------------------------------------------------------------------


def _unknown_column(
    result: ScoreResult, which: str, rule: GateRule, available: list[str]
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
    rules: Sequence[GateRule] = (),
    baseline: ScoreResult | None = None,
    *,
    alpha: float = 0.05,
    default_max_drop: float = DEFAULT_MAX_DROP,
    resamples: int = 2000,
    seed: int = 0,
    shared_samples: bool = False,
    run_name: str = "run",
    baseline_name: str = "baseline",
    strict: bool = False,
    require_power: bool = False,
    power: float = POWER,
) -> CheckReport:
    """Check ``rules`` on ``run`` (and against ``baseline``). With a baseline and no drop
    rule, the headline measures may not drop by more than ``default_max_drop``.

    ``strict``: a headline stage the two runs cannot be compared on fails (else it is a
    line marked skip). ``require_power``: a drop rule whose limit is below the smallest
    drop this eval set detects with ``power`` fails."""
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
        power=power,
        strict=strict,
        require_power=require_power,
    )
    inference = _inference(run)
    report.clustering, report.caveat = inference.description, inference.caveat
    available = scored_columns(run)
    for rule in rules:
        if rule.kind != Kind.MAX_SHARE and rule.target not in available:
            raise _unknown_column(run, "the run", rule, available)
    drop_outcomes: dict[GateRule, Outcome] = {}
    not_compared: list[Outcome] = []
    if baseline is not None:
        names = (
            run_name,
            baseline_name if baseline_name != run_name else f"{baseline_name} (baseline)",
        )
        comparison = _compare(run, baseline, names, alpha, resamples, seed, shared_samples, report)
        from cofe.compare import measure_columns

        ours, theirs = (
            {f"{s}/{m}" for s, m in measure_columns(comparison.values[name])} for name in names
        )
        compared_at: dict[GateRule, str] = {}
        if not drops:
            found = headline_rules(run, baseline, default_max_drop, columns=(ours, theirs))
            drops, compared_at = found.rules, found.compared_at
            report.defaults_used = True
            rules = [*rules, *drops]
            for rule, why in found.not_compared:
                status = Status.FAIL if strict else Status.SKIP
                reason = f"not compared: {why}" + (" (--strict)" if strict else "")
                not_compared.append(Outcome(rule, status, stage_of(rule, run), reason=reason))
        else:
            for rule in drops:
                if rule.target not in theirs:
                    raise _unknown_column(baseline, "the baseline", rule, sorted(theirs))
        drop_outcomes = _drop_outcomes(
            comparison, drops, names, compared_at, run=run, alpha=alpha, report=report
        )
    for rule in rules:
        if rule.kind == Kind.MAX_DROP:
            report.outcomes.append(drop_outcomes[rule])
        else:
            report.outcomes.append(_threshold(run, rule, inference, resamples=resamples, seed=seed))
    if not_compared:  # each at its place among the default rules (the chain's order)
        report.outcomes.extend(not_compared)
        report.outcomes.sort(key=_pipeline_place)
    return report


def _pipeline_place(outcome: Outcome) -> float:
    """Drop rules in the chain's order (a stage not compared among them), others first."""
    from cofe.compare import step_rank

    if outcome.rule.kind != Kind.MAX_DROP:
        return -1.0
    return step_rank(outcome.rule.step or "")


def _compare(
    run: ScoreResult,
    baseline: ScoreResult,
    names: tuple[str, str],
    alpha: float,
    resamples: int,
    seed: int,
    shared_samples: bool,
    report: CheckReport,
) -> Comparison:
    from cofe.compare import compare_results

    comparison = compare_results(
        dict(zip(names, (run, baseline), strict=True)),
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
    if comparison.inference is not None:  # the questions of both runs
        report.clustering = comparison.inference.description
        report.caveat = comparison.inference.caveat
    return comparison  # its cutoff notes are said per rule (Outcome.compared_at)


def _threshold(
    run: ScoreResult, rule: GateRule, inference: Inference, *, resamples: int, seed: int
) -> Outcome:
    """A threshold on the run alone: its mean (or share) against the limit; the CI is shown,
    not tested."""
    import numpy as np
    import pandas as pd

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
    ci = inference.mean(values.to_numpy(), values.index, resamples=resamples, seed=seed)
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
    comparison: Comparison,
    drops: list[GateRule],
    names: tuple[str, str],
    compared_at: dict[GateRule, str],
    *,
    run: ScoreResult,
    alpha: float,
    report: CheckReport,
) -> dict[GateRule, Outcome]:
    from cofe.compare import ALL, holm

    run_name, baseline_name = names
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
    test_of: dict[GateRule, str] = {}
    p_of: dict[str, float] = {}
    for rule in drops:
        if rule.target in rows:
            test_of[rule] = rows[rule.target]["same_test_as"] or rule.target
            p_of.setdefault(test_of[rule], float(rows[rule.target]["p_value"]))
    adjusted = dict(zip(p_of, holm(list(p_of.values())), strict=True))
    report.drop_tests = len(p_of)
    # a drop alone among the check's tests must reach alpha / tests (Holm's first step):
    # the power is given at that level, so "detectable" errs on the side of larger
    power_alpha = alpha / max(len(p_of), 1)
    out: dict[GateRule, Outcome] = {}
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
        seen = _power(comparison, rule, names, power_alpha, report.power)
        note = seen.shortfall(rule.limit) if seen is not None and rule.limit > 0 else ""
        if note and report.require_power and status != Status.FAIL:
            status, why = Status.FAIL, f"{why}; {note} (--require-power)"
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
            compared_at=compared_at.get(rule, ""),
            detectable=None if seen is None else seen.detectable,
            power_note=note,
        )
    return out


def _power(
    comparison: Comparison, rule: GateRule, names: tuple[str, str], alpha: float, power: float
) -> Power | None:
    """What the paired test of this rule's column can see (None: no inference recorded)."""
    import pandas as pd

    if comparison.inference is None:
        return None
    step, measure = rule.target.split("/", 1)
    columns = [comparison.values[name].get((step, measure)) for name in names]
    if any(c is None for c in columns):
        return None
    pair = pd.concat(columns, axis=1, keys=["a", "b"]).dropna()
    return comparison.inference.power(
        pair["a"].to_numpy(),
        pair["b"].to_numpy(),
        pair.index,
        alpha=alpha,
        power=power,
        drop=rule.limit,
    )


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"
