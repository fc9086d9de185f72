"""Compare runs of one eval set: means with confidence intervals, paired tests, transitions.

``compare_results([result_a, result_b, ...])`` pairs samples by id and gives,
per measure and query type, each run's mean with a bootstrap CI and, per pair
of runs, the paired difference with its CI and a p-value (exact McNemar for
binary measures, a sign-flip permutation test otherwise; clustered by source
document when samples share documents), Holm-corrected over the whole grid;
plus the verdict transition matrix, stage latency and refusal rates. The answer's
measures are compared twice: over every sample (``answer``) and over the samples whose
answer does not decline (``answered``).
"""

from cofe.compare._compare import (
    ALL,
    ANSWERED,
    Comparison,
    cluster_labels,
    compare_results,
    measure_columns,
    refusal_table,
    source_clusters,
    value_tables,
)
from cofe.compare._stats import Interval, PairedTest, holm, mcnemar_p, mean_ci, paired_difference

__all__ = [
    "ALL",
    "ANSWERED",
    "Comparison",
    "Interval",
    "PairedTest",
    "cluster_labels",
    "compare_results",
    "holm",
    "mcnemar_p",
    "mean_ci",
    "measure_columns",
    "paired_difference",
    "refusal_table",
    "source_clusters",
    "value_tables",
]
