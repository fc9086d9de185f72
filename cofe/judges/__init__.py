"""LLM judges of the generation stage: claim-level faithfulness (to the context and to the
source), and claim-level correctness against the reference. ``cofe judge RUN`` stores the
labels next to the run; ``cofe score`` turns them into measures and verdicts."""

from cofe.judges._agreement import judge_agreement, krippendorff_alpha
from cofe.judges._controls import MIN_PAIRS as CONTROL_MIN_PAIRS
from cofe.judges._controls import POINTS as POINT_LABELS
from cofe.judges._controls import (
    ControlGate,
    auc,
    control_gate,
    control_inputs,
    read_controls,
    traffic_controls,
)
from cofe.judges._judge import (
    JudgeInputs,
    JudgeReport,
    judge_inputs,
    judge_one,
    judge_run,
    labels_for_scoring,
    labels_of,
    read_judgements,
    unscored_labels,
)
from cofe.judges._prompts import (
    PROMPT_VERSION,
    STEPWISE_SUFFIX,
    checks_messages,
    claim_messages,
    claims_messages,
    reference_claim_messages,
    reference_claims,
)
from cofe.judges._replies import Claim, Judgement, PointLabel, ReferenceClaim
from cofe.runlog import JUDGEMENTS  # the run folder's file, named by the run log

# the old name of STEPWISE_SUFFIX (cofe.monitor still reads it): a prompt version's suffix,
# not the chain's steps
STEPS = STEPWISE_SUFFIX

__all__ = [
    "CONTROL_MIN_PAIRS",
    "JUDGEMENTS",
    "POINT_LABELS",
    "PROMPT_VERSION",
    "STEPS",
    "STEPWISE_SUFFIX",
    "Claim",
    "ControlGate",
    "JudgeInputs",
    "JudgeReport",
    "Judgement",
    "PointLabel",
    "ReferenceClaim",
    "auc",
    "checks_messages",
    "claim_messages",
    "claims_messages",
    "control_gate",
    "control_inputs",
    "judge_agreement",
    "judge_inputs",
    "judge_one",
    "judge_run",
    "krippendorff_alpha",
    "labels_for_scoring",
    "labels_of",
    "read_controls",
    "read_judgements",
    "reference_claim_messages",
    "reference_claims",
    "traffic_controls",
    "unscored_labels",
]
