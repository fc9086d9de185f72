"""How much the judge agrees with itself: every judged measure over ``--repeats`` judgements.

Per measure: the mean over all repeats, the spread (the mean over samples of
the standard deviation of a sample's repeated values) and Krippendorff's
alpha for interval data (1: the repeats agree exactly; 0: no more than
chance), and whether ``cofe score`` scores it (``cofe.judges._alpha``: not when the
judge disagrees with itself). Only samples with at least two valued repeats count.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from cofe.judges._alpha import JUDGED, MIN_ALPHA, MIN_UNITS, krippendorff_alpha, repeated_values
from cofe.judges._judge import labels_of, read_judgements

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JUDGED", "judge_agreement", "krippendorff_alpha"]


def judge_agreement(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per judged measure: samples, repeats, mean, spread and alpha."""
    import pandas as pd  # here: cofe score reads the judgements without loading pandas

    every = read_judgements(run_dir, repeat=None)
    values = repeated_values(
        {key: labels_of(j) for key, j in every.items() if j.status == "judged"}
    )
    rows = []
    for measure in JUDGED:
        units = [u for u in values[measure.name].values() if len(u) >= 2]
        if not units:
            continue
        rows.append(
            {
                "measure": measure.name,
                "samples": len(units),
                "repeats": max(len(u) for u in units),
                "mean": float(np.mean([v for u in units for v in u])),
                "spread": float(np.mean([np.std(u) for u in units])),
                "alpha": (alpha := krippendorff_alpha(units)),
                "scored": _gate(alpha, len(units)),
            }
        )
    return pd.DataFrame(
        rows, columns=["measure", "samples", "repeats", "mean", "spread", "alpha", "scored"]
    )


def _gate(alpha: float | None, units: int) -> str:
    """What cofe score does with the measure (the gate of cofe.judges._alpha.unreliable)."""
    if units < MIN_UNITS:
        return f"yes (fewer than {MIN_UNITS} samples judged twice: not gated)"
    if alpha is not None and alpha < MIN_ALPHA:
        return f"no: alpha under {MIN_ALPHA}, the judge disagrees with itself"
    return "yes"
