"""Verdicts per sample, the loss waterfall, and the rule for answers that decline."""

from cofe.chain import Step
from cofe.diagnose._verdict import (
    LOSS_VERDICT,
    PASS_AT,
    Diagnosis,
    StageOutcome,
    Verdict,
    diagnose,
)
from cofe.diagnose._waterfall import STEPS, WATERFALL_STEPS, waterfall
from cofe.refusal import is_refusal, refusal_reason

__all__ = [
    "LOSS_VERDICT",
    "PASS_AT",
    "STEPS",
    "WATERFALL_STEPS",
    "Diagnosis",
    "StageOutcome",
    "Step",
    "Verdict",
    "diagnose",
    "is_refusal",
    "refusal_reason",
    "waterfall",
]
