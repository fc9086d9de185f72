"""The loss waterfall: mean point recall at each step of the chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.chain import STEPS as CHAIN_STEPS
from cofe.chain import Step

if TYPE_CHECKING:
    import pandas as pd

STEPS: list[Step] = [spec.step for spec in CHAIN_STEPS]


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
        grouped["step"], categories=[s.value for s in STEPS], ordered=True
    )
    return grouped.sort_values(keys).reset_index(drop=True)
