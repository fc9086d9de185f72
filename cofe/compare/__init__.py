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
    STEP_WORDS,
    Comparison,
    answer_line,
    cluster_labels,
    compare_results,
    in_pipeline_order,
    measure_columns,
    measure_rank,
    refusal_table,
    small_sample_note,
    source_clusters,
    value_tables,
)
from cofe.compare._stats import Interval, PairedTest, holm, mcnemar_p, mean_ci, paired_difference

__all__ = [
    "ALL",
    "ANSWERED",
    "STEP_WORDS",
    "Comparison",
    "Interval",
    "PairedTest",
    "answer_line",
    "cluster_labels",
    "compare_results",
    "holm",
    "in_pipeline_order",
    "mcnemar_p",
    "mean_ci",
    "measure_columns",
    "measure_rank",
    "paired_difference",
    "refusal_table",
    "small_sample_note",
    "source_clusters",
    "value_tables",
]
