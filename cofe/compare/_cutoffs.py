"""Runs scored at different cutoffs, compared where both can be.

A run with top-K 4 is scored ``context/KeywordRecall@4``, one with top-K 1
``context/KeywordRecall@1``: no column is shared, and a comparison by column names would
leave the stage out -- the very change made is the one it could not see. But the points
table of each run holds, per information point, the rank at which its ranked step first
held it (``pool_rank``, ``context_rank``), so ``KeywordRecall`` can be computed at any
cutoff up to the run's own list:

* at the **common cutoff** (the smallest of the runs' largest cutoffs): the same depth of
  each list, which says whether the ranking got worse;
* for the context, also over the **whole context** each run handed the generator
  (``context/KeywordRecall``, no cutoff): which says whether the generator received less.

``align_cutoffs`` adds those columns to the value tables and says, in words, what it did.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from cofe.chain import STEP_SPECS, Step
from cofe.results import ScoreResult

MEASURE = "KeywordRecall"
_CUTOFF = re.compile(rf"^{MEASURE}@(\d+)$")


def ranked_steps() -> dict[str, str]:
    """Each ranked step (the chain's) and its points-table rank column."""
    return {
        spec.step.value: spec.columns[0][0]
        for spec in STEP_SPECS
        if spec.reads == "ranked" and spec.columns
    }


def cutoffs_of(columns: list[tuple[str, str]], step: str) -> list[int]:
    """The cutoffs ``KeywordRecall`` is held at in a value table, at one step."""
    found = (_CUTOFF.match(m) for s, m in columns if s == step)
    return sorted(int(f.group(1)) for f in found if f)


def keyword_recall_at(result: ScoreResult, step: str, cutoff: int | None) -> pd.Series:
    """Per sample, ``KeywordRecall@cutoff`` at a ranked step (no cutoff: anywhere in the
    list), from the points table's ranks; only the samples the run scored there. Empty
    when the points table has no ranks of that step."""
    column = ranked_steps().get(step)
    points = result.points
    if column is None or points.empty or column not in points:
        return pd.Series(dtype=float)
    ranks = pd.to_numeric(points[column], errors="coerce")
    held = ranks.notna() if cutoff is None else ranks.le(cutoff).fillna(False)
    values = held.astype(float).groupby(points["sample_id"]).mean()
    scores = result.scores
    scored = scores.loc[
        (scores["step"] == step) & scores["measure"].astype(str).str.match(_CUTOFF.pattern),
        "sample_id",
    ].unique()
    return values[values.index.isin(scored)]


def align_cutoffs(named: Mapping[str, ScoreResult], values: dict[str, pd.DataFrame]) -> list[str]:
    """Where the runs' ``KeywordRecall`` cutoffs differ at a ranked step, add the common
    cutoff (and, at the context, the whole context) to the value tables of the runs that
    lack it, computed from their ranks; one sentence per step saying so."""
    notes = []
    for step in ranked_steps():
        held = {name: cutoffs_of(_columns(values[name]), step) for name in named}
        if any(not cuts for cuts in held.values()) or len({max(c) for c in held.values()}) < 2:
            continue  # a run without the step cannot be aligned; the same depth need not be
        common = min(max(cuts) for cuts in held.values())
        wanted = [f"{MEASURE}@{common}"]
        tops = {name: max(cuts) for name, cuts in held.items()}
        if step == Step.CONTEXT.value and len(set(tops.values())) > 1:
            wanted.append(MEASURE)  # what the generator received, whatever its length
        computed: list[str] = []
        for name, result in named.items():
            for measure in wanted:
                if (step, measure) in values[name].columns:
                    continue
                cut = None if measure == MEASURE else common
                series = keyword_recall_at(result, step, cut)
                if series.empty:
                    continue
                values[name][(step, measure)] = series.reindex(values[name].index)
                if measure != MEASURE:
                    computed.append(name)
        scored = ", ".join(f"{name} @{top}" for name, top in tops.items())
        note = f"{step}: the runs are scored to different cutoffs ({scored}); compared at the common cutoff @{common}"
        if computed:
            note += f" ({', '.join(computed)}: computed from its ranks)"
        if MEASURE in wanted:
            note += (
                f"; {step}/{MEASURE} (no cutoff) is each run's whole context as the generator "
                "received it"
            )
        notes.append(note)
    return notes


def _columns(frame: pd.DataFrame) -> list[tuple[str, str]]:
    from cofe.compare._compare import measure_columns  # the value table's typed columns

    return measure_columns(frame)
