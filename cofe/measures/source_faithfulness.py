from __future__ import annotations

from cofe.measures._base import register
from cofe.measures._judged_measure import JudgedMeasure, supported_share
from cofe.measures._unscored import Unscored
from cofe.measures._view import ClaimLabels


@register
class SourceFaithfulness(JudgedMeasure):
    """Share of the answer's claims supported by the sample's gold source document: a context
    that is only a fragment of the source does not count against a correct answer."""

    NAME = "SourceFaithfulness"

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        return supported_share(labels.source, "the source document")
