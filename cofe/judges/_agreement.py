"""How much the judge agrees with itself: every judged measure over ``--repeats`` judgements.

Per measure: the mean over all repeats, the spread (the mean over samples of
the standard deviation of a sample's repeated values) and Krippendorff's
alpha for interval data (1: the repeats agree exactly; 0: no more than
chance). Only samples with at least two valued repeats count.
"""

from __future__ import annotations

import os
from collections import defaultdict
from itertools import permutations

import numpy as np
import pandas as pd

from cofe.judges._judge import labels_of, read_judgements
from cofe.measures import (
    AnswerCorrectness,
    AnswerRelevancy,
    AnswerSimilarity,
    ClaimPrecision,
    ClaimRecall,
    CorrectnessScore,
    Faithfulness,
    SourceFaithfulness,
    Step,
    StepView,
    Unscored,
)

JUDGED = (Faithfulness(), SourceFaithfulness(), ClaimPrecision(), ClaimRecall(),
          AnswerCorrectness(), CorrectnessScore(), AnswerRelevancy(), AnswerSimilarity())  # fmt: skip


def krippendorff_alpha(units: list[list[float]]) -> float | None:
    """Krippendorff's alpha, interval metric, for units each holding repeated values.

    alpha = 1 - D_o / D_e with D_o the mean squared difference within units
    (each unit's ordered pairs weighted 1 / (m_u - 1)) and D_e the mean squared
    difference over all ordered pairs of pairable values. None when every value
    is the same (alpha is undefined without variation).
    """
    pairable = [list(map(float, u)) for u in units if len(u) >= 2]
    n = sum(len(u) for u in pairable)
    if n < 2:
        return None
    observed = (
        sum(sum((a - b) ** 2 for a, b in permutations(u, 2)) / (len(u) - 1) for u in pairable) / n
    )
    values = np.array([v for u in pairable for v in u])
    # sum over ordered pairs of (a - b)^2 = 2 n sum(v^2) - 2 (sum v)^2
    expected = (2 * n * float((values**2).sum()) - 2 * float(values.sum()) ** 2) / (n * (n - 1))
    if expected == 0:
        return None
    return 1.0 - observed / expected


def judge_agreement(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per judged measure: samples, repeats, mean, spread and alpha."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (sample_id, _repeat), judgement in sorted(read_judgements(run_dir, repeat=None).items()):
        if judgement.status != "judged":
            continue
        view = StepView(Step.ANSWER, (), claims=labels_of(judgement))
        for measure in JUDGED:
            value = measure.evaluate(view)
            if not isinstance(value, Unscored):
                values[measure.name][sample_id].append(float(value))
    rows = []
    for measure in JUDGED:
        units = [u for u in values[measure.name].values() if len(u) >= 2]
        if not units:
            continue
        rows.append({
            "measure": measure.name,
            "samples": len(units),
            "repeats": max(len(u) for u in units),
            "mean": float(np.mean([v for u in units for v in u])),
            "spread": float(np.mean([np.std(u) for u in units])),
            "alpha": krippendorff_alpha(units),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["measure", "samples", "repeats", "mean", "spread", "alpha"])
