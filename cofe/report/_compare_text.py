"""The terminal rendering of a comparison: means with CIs, paired differences, transitions."""

from __future__ import annotations

import pandas as pd

from cofe.compare import ALL, MIN_DOCUMENTS, Comparison, SamplePlan, in_pipeline_order
from cofe.report._text import format_table


def _ci(mean: float, low: float, high: float) -> str:
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def render_comparison(comparison: Comparison, *, query_type: str = ALL) -> str:
    runs = comparison.runs
    means = comparison.means[comparison.means.query_type == query_type]
    diffs = comparison.differences
    if not diffs.empty:
        diffs = diffs[diffs.query_type == query_type]
    pairs = list(dict.fromkeys(zip(diffs["a"], diffs["b"], strict=True))) if len(diffs) else []
    lines = [
        *comparison.headline(query_type),
        *([comparison.small_sample] if comparison.small_sample else []),
        *([f"Caveat: {comparison.caveat}"] if comparison.caveat else []),
        *(f"Cutoffs: {note}" for note in comparison.cutoffs),
        "",
        f"Runs: {', '.join(runs)}   samples: {query_type}   "
        f"95 % CIs; differences tested in pairs, Holm-corrected over every distinct test "
        f"(measure, query type, pair; a measure whose values repeat an earlier one's is its "
        f"test, counted once) (* p_holm < {comparison.alpha:g})",
        f"Clustering: {comparison.clustering}",
        "",
    ]
    rows = []
    for (step, measure), group in in_pipeline_order(means).groupby(["step", "measure"], sort=False):
        by_run = {r["run"]: r for r in group.to_dict("records")}
        row: list[object] = [f"{step}/{measure}"]
        for run in runs:
            if run in by_run:
                ci = by_run[run]
                row.append(_ci(ci["mean"], ci["low"], ci["high"]))
            else:
                row.append("-")
        for a, b in pairs:
            hit = diffs[
                (diffs.a == a) & (diffs.b == b) & (diffs.step == step) & (diffs.measure == measure)
            ]
            if hit.empty:
                row.append("-")
                continue
            d = hit.iloc[0]
            star = "*" if d["significant"] else " "
            if d["a_better"] == 0 and d["b_better"] == 0:  # nothing to test: no change
                note = " (no sample differs)"
            elif same := d.get("same_test_as") or "":
                note = f" (same test as {same})"
            else:
                note = ""
            row.append(
                f"{d['difference']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] "
                f"p={d['p_holm']:.3g}{star}{note}"
            )
        rows.append(row)
    header = ["measure", *runs, *(f"{a} - {b}" for a, b in pairs)]
    lines.append(format_table(header, rows))
    for a, b in pairs:
        lines += ["", f"Verdict transitions {a} -> {b} (rows: {a}, columns: {b})"]
        lines.append(_transition_matrix(comparison.transitions, a, b))
        moved = comparison.transitions[
            (comparison.transitions.a == a)
            & (comparison.transitions.b == b)
            & (comparison.transitions["from"] != comparison.transitions["to"])
        ].sort_values("count", ascending=False)
        for _, t in moved.head(5).iterrows():
            lines.append(f"  {t['from']} -> {t['to']}: {t['count']} (e.g. {t['examples']})")
    refusals = comparison.refusals
    if len(refusals):
        shown = refusals[refusals.query_type == query_type]
        lines += ["", "Refusals (answers that decline; the 'answered' rows above leave them out)"]
        lines.append(
            format_table(
                ["run", "answered", "refused", "rate"],
                shown[["run", "answered", "refused", "rate"]].values.tolist(),
            )
        )
    if not comparison.latency.empty:
        lines += ["", "Stage latency (seconds)"]
        lat = comparison.latency
        lines.append(
            format_table(
                ["run", "stage", "p50", "p95", "n"],
                lat[["run", "stage", "p50", "p95", "n"]].values.tolist(),
            )
        )
    for run, ids in comparison.missing.items():
        lines.append(
            f"{run}: {len(ids)} sample(s) the other runs have are missing, e.g. "
            + ", ".join(ids[:3])
        )
    if comparison.shared is not None:
        left = ", ".join(f"{run} {n}" for run, n in comparison.left_out.items())
        lines.append(
            f"Compared on the {comparison.shared} sample(s) every run has (same id, "
            f"query type and source); left out: {left}"
        )
    return "\n".join(lines)


def _transition_matrix(transitions: pd.DataFrame, a: str, b: str) -> str:
    cells = transitions[(transitions.a == a) & (transitions.b == b)]
    if cells.empty:
        return "(no sample in both runs)"
    matrix = cells.pivot_table(
        index="from", columns="to", values="count", aggfunc="sum", fill_value=0
    )
    header = ["", *(str(c) for c in matrix.columns)]
    rows = [
        [str(i), *(int(v) for v in r)] for i, r in zip(matrix.index, matrix.values, strict=True)
    ]
    return format_table(header, rows)


def plan_rows(plan: SamplePlan) -> tuple[list[str], list[list[object]]]:
    """The plan's table for a person: header and rows (the text and the HTML report's)."""
    header = [
        "measure",
        "mean",
        "questions",
        "documents",
        "unit",
        "detectable now",
        f"questions for {plan.drop:g}",
        f"documents for {plan.drop:g}",
    ]
    rows: list[list[object]] = []
    for r in plan.table.to_dict("records"):
        now = r["detectable_now"]
        rows.append(
            [
                f"{r['step']}/{r['measure']}",
                f"{r['mean']:.3f}",
                r["questions"],
                r["documents"] or "-",
                r["unit"],
                "none" if now is None or pd.isna(now) else f"{now:.3f}",
                _count(r["questions_needed"]),
                _count(r["documents_needed"]),
            ]
        )
    return header, rows


def _count(value: object) -> str:
    if not isinstance(value, int | float) or value != value:  # None, or NaN from pandas
        return "-"
    return f">= {int(value)}"


def render_plan(plan: SamplePlan) -> str:
    """``cofe plan``'s output: what the pilot can detect, and what a drop needs."""
    header, rows = plan_rows(plan)
    lines = [
        f"Sample size to detect a drop of {plan.drop:g} with {plan.power:.0%} power "
        f"(two-sided, alpha {plan.alpha:g}), per measure",
        f"From {plan.basis}.",
        f"Tests: {plan.inference.description}.",
        *([f"Caveat: {plan.inference.caveat}."] if plan.inference.caveat else []),
        *(f"Cutoffs: {note}." for note in plan.notes),
        "",
        format_table(header, rows),
        "",
        "detectable now: the smallest drop this eval set finds with that power ('none': no "
        "drop can be found here); documents: what clustering by document needs (at least "
        f"{MIN_DOCUMENTS}), for a result that carries over to new documents.",
    ]
    return "\n".join(lines)
