"""The loss waterfall: mean point recall at each step of the chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.chain import STEP_SPECS, Step

if TYPE_CHECKING:
    import pandas as pd

WATERFALL_STEPS: list[Step] = [spec.step for spec in STEP_SPECS]
"""The waterfall's rows: every step of the chain, in chain order."""
STEPS = WATERFALL_STEPS  # its old name, still read by cofe.results and cofe.report


def waterfall(recalls: pd.DataFrame, by_query_type: bool = False) -> pd.DataFrame:
    """``recalls`` has columns sample_id, query_type, step, value; returns mean per step.

    Each step is averaged over the samples where it was judged; ``n`` says how many.
    """
    import pandas as pd  # here: cofe.diagnose's verdicts are scored without loading pandas

    keys = ["query_type", "step"] if by_query_type else ["step"]
    if recalls.empty:
        return pd.DataFrame(columns=[*keys, "recall", "n"])
    grouped = (
        recalls.groupby(keys, observed=True)["value"].agg(recall="mean", n="count").reset_index()
    )
    grouped["step"] = pd.Categorical(
        grouped["step"], categories=[s.value for s in WATERFALL_STEPS], ordered=True
    )
    return grouped.sort_values(keys).reset_index(drop=True)
