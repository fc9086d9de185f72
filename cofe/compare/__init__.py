"""Compare runs of one eval set: means with confidence intervals, paired tests, transitions.

``compare_results([result_a, result_b, ...])`` pairs samples by id and gives,
per measure and query type, each run's mean with a bootstrap CI and, per pair
of runs, the paired difference with its CI and a p-value (exact McNemar for
binary measures, a sign-flip permutation test otherwise; clustered by source
document when enough documents are shared, else over questions -- ``choose_inference``,
the one rule compare, sweep, check and the monitor follow), Holm-corrected over the grid;
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
    compare_results,
    in_pipeline_order,
    measure_columns,
    measure_rank,
    refusal_table,
    small_sample_note,
    step_rank,
    value_tables,
)
from cofe.compare._cutoffs import align_cutoffs, keyword_recall_at
from cofe.compare._inference import (
    MIN_DOCUMENTS,
    Inference,
    Power,
    choose_inference,
    detectable_drop,
    inference_for,
    needed_units,
)
from cofe.compare._plan import SamplePlan, plan_sample_size
from cofe.compare._stats import Interval, PairedTest, holm, mcnemar_p, mean_ci, paired_difference

__all__ = [
    "ALL",
    "ANSWERED",
    "MIN_DOCUMENTS",
    "STEP_WORDS",
    "Comparison",
    "Inference",
    "Interval",
    "PairedTest",
    "Power",
    "SamplePlan",
    "align_cutoffs",
    "answer_line",
    "choose_inference",
    "compare_results",
    "detectable_drop",
    "holm",
    "in_pipeline_order",
    "inference_for",
    "keyword_recall_at",
    "mcnemar_p",
    "mean_ci",
    "measure_columns",
    "measure_rank",
    "needed_units",
    "paired_difference",
    "plan_sample_size",
    "refusal_table",
    "small_sample_note",
    "step_rank",
    "value_tables",
]
