"""Verdicts per sample and the loss waterfall."""

from cofe.diagnose._verdict import (
    LOSS_VERDICT,
    PASS_AT,
    Diagnosis,
    StageOutcome,
    Verdict,
    diagnose,
)
from cofe.diagnose._waterfall import STEPS, Step, waterfall

__all__ = [
    "LOSS_VERDICT",
    "PASS_AT",
    "STEPS",
    "Diagnosis",
    "StageOutcome",
    "Step",
    "Verdict",
    "diagnose",
    "waterfall",
]
