"""Sample-size planning (``cofe plan``): how many questions, and documents, a drop needs.

From a pilot: per step and measure, the smallest drop the eval set finds now (with
``power`` at ``alpha``, by ``choose_inference``'s rule) and the questions and documents a
drop of ``drop`` needs.

* **Two runs** (a baseline and a changed pipeline, or the same pipeline twice): the
  paired differences' own variance, per question and per document -- what ``cofe check``
  prints per rule.
* **One run**: no difference has been seen, so the difference is taken to be the drop
  itself, falling as whole points lost by some questions (variance drop * (1 - drop) per
  question), and questions of one document moving together as much as the pilot's values
  do (the design effect 1 + (m - 1) ICC, ICC: the intra-document correlation of the
  values). Run-to-run noise adds to that: with one run the numbers are a floor -- a
  second run of the same pipeline gives the noise, and a plan from two runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cofe.chain import STEP_SPECS
from cofe.compare._compare import _names, in_pipeline_order, measure_columns, value_tables
from cofe.compare._cutoffs import align_cutoffs
from cofe.compare._inference import (
    MIN_DOCUMENTS,
    POWER,
    Inference,
    inference_for,
    smallest_drop,
    units_for,
)
from cofe.results import ScoreResult

DROP = 0.02  # cofe check's default allowed drop: the drop a plan is made for by default


@dataclass
class SamplePlan:
    """One row per step and measure: the pilot's mean, what it can detect now, and the
    questions and documents ``drop`` needs."""

    table: pd.DataFrame
    drop: float
    power: float
    alpha: float
    basis: str  # "two runs: ..." or "one run: ..."
    inference: Inference
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        rows: list[dict[str, Any]] = json_records(self.table)
        return {
            "drop": self.drop,
            "power": self.power,
            "alpha": self.alpha,
            "basis": self.basis,
            "inference": self.inference.description,
            "caveat": self.inference.caveat,
            "notes": self.notes,
            "rows": rows,
        }


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    import json

    rows: list[dict[str, Any]] = json.loads(frame.to_json(orient="records", force_ascii=False))
    return rows


def headline_columns(columns: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each step's headline measure (its largest cutoff), and every ``KeywordRecall`` over
    the whole context -- the columns ``cofe check`` guards by default."""
    out = []
    for spec in STEP_SPECS:
        if spec.headline is None:
            continue
        step = spec.step.value
        found = [(s, m) for s, m in columns if s == step and m.split("@")[0] == spec.headline]
        if found:
            out.append(max(found, key=lambda c: _cut(c[1])))
    return out


def _cut(measure: str) -> float:
    _, _, cutoff = measure.partition("@")
    return float(cutoff) if cutoff.isdigit() else math.inf


def plan_sample_size(
    results: Sequence[ScoreResult] | Mapping[str, ScoreResult],
    *,
    drop: float = DROP,
    power: float = POWER,
    alpha: float = 0.05,
    columns: Sequence[str] | None = None,
    headline_only: bool = False,
) -> SamplePlan:
    """The plan from one pilot run or two (the first the baseline); ``columns``:
    ``step/Measure`` names to plan for (default: every measure the runs share)."""
    named = dict(results) if isinstance(results, Mapping) else _names(list(results))
    if not 1 <= len(named) <= 2:
        raise ValueError(f"a plan is made from one run or two, got {len(named)}")
    if not 0 < drop < 1:
        raise ValueError(f"the drop to detect must be between 0 and 1, got {drop}")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("power and alpha must be between 0 and 1")
    inference = inference_for(named)
    values = value_tables(named)
    notes = align_cutoffs(named, values) if len(named) == 2 else []
    shared = [c for c in measure_columns(next(iter(values.values())))]
    for frame in values.values():
        shared = [c for c in shared if c in frame.columns]
    if columns is not None:
        wanted = [tuple(c.split("/", 1)) for c in columns]
        missing = [f"{s}/{m}" for s, m in wanted if (s, m) not in shared]
        if missing:
            raise ValueError(f"not scored in the pilot: {', '.join(missing)}")
        shared = [(s, m) for s, m in wanted]
    elif headline_only:
        shared = headline_columns(shared)
    rows = []
    names = list(named)
    for step, measure in shared:
        if len(names) == 2:
            base, new = (values[n][(step, measure)] for n in names)
            pair = pd.concat([new, base], axis=1, keys=["a", "b"]).dropna()
            row = _from_pair(pair, inference, drop, alpha, power)
            mean = float(pair["b"].mean()) if len(pair) else math.nan
        else:
            column = values[names[0]][(step, measure)].dropna()
            row = _from_one(column, inference, drop, alpha, power)
            mean = float(column.mean()) if len(column) else math.nan
        rows.append({"step": step, "measure": measure, "mean": mean, **row})
    table = in_pipeline_order(pd.DataFrame(rows)) if rows else pd.DataFrame(rows)
    basis = (
        f"two runs ({names[0]} -> {names[1]}): the paired differences' variance"
        if len(names) == 2
        else (
            f"one run ({names[0]}): the drop taken as questions losing whole points, "
            "questions of a document moving together as the run's values do; run-to-run "
            "noise adds to it, so these are floors (give two runs for the noise)"
        )
    )
    return SamplePlan(table, drop, power, alpha, basis, inference, notes)


def _finite(value: float) -> float | None:
    return None if math.isinf(value) or math.isnan(value) else value


def _from_pair(
    pair: pd.DataFrame, inference: Inference, drop: float, alpha: float, power: float
) -> dict[str, Any]:
    seen = inference.power(
        pair["a"].to_numpy(), pair["b"].to_numpy(), pair.index, alpha=alpha, power=power, drop=drop
    )
    return {
        "questions": seen.questions,
        "documents": inference.documents,
        "unit": inference.unit,
        "detectable_now": _finite(seen.detectable),
        "questions_needed": seen.questions_needed,
        "documents_needed": seen.documents_needed,
    }


def _from_one(
    column: pd.Series, inference: Inference, drop: float, alpha: float, power: float
) -> dict[str, Any]:
    n = len(column)
    docs = inference.sources.reindex(column.index) if inference.sources is not None else None
    labels = (
        docs.fillna("sample:" + column.index.to_series().astype(str)).to_numpy()
        if docs is not None
        else np.array(column.index.astype(str))
    )
    codes, counts = np.unique(labels, return_counts=True)
    groups, m = len(codes), n / max(len(codes), 1)
    icc = _icc(column.to_numpy(dtype=float), labels) if groups >= 2 and m > 1 else 0.0
    deff = 1 + (m - 1) * icc
    size_sq = float((counts.astype(float) ** 2).mean())
    if inference.clustered:
        now = smallest_drop(
            groups, float(n), size_sq * groups, 0.0, alpha=alpha, power=power, deff=deff
        )
    else:
        now = smallest_drop(n, float(n), float(n), 0.0, alpha=alpha, power=power)
    questions, _ = units_for(0.0, 1.0, 1.0, drop, alpha=alpha, power=power)
    documents = None
    if groups >= 2 and m > 1:
        _, documents = units_for(0.0, m, size_sq, drop, alpha=alpha, power=power, deff=deff)
        documents = max(documents, MIN_DOCUMENTS)
        questions = max(questions, math.ceil(documents * m)) if inference.clustered else questions
    return {
        "questions": n,
        "documents": inference.documents,
        "unit": inference.unit,
        "detectable_now": _finite(now),
        "questions_needed": questions,
        "documents_needed": documents,
    }


def _icc(values: np.ndarray, labels: np.ndarray) -> float:
    """The intra-document correlation of the values (one-way ANOVA estimator, unequal
    sizes), clipped to [0, 1]."""
    _codes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    k, n = len(counts), len(values)
    if k < 2 or n <= k:
        return 0.0
    means = np.bincount(inverse, weights=values) / counts
    grand = values.mean()
    between = float((counts * (means - grand) ** 2).sum()) / (k - 1)
    within = float(((values - means[inverse]) ** 2).sum()) / (n - k)
    n0 = (n - float((counts**2).sum()) / n) / (k - 1)
    denominator = between + (n0 - 1) * within
    if denominator <= 0:
        return 0.0
    return float(min(1.0, max(0.0, (between - within) / denominator)))
