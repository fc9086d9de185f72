"""The shared shape of measures read from the LLM judge's labels (``cofe judge``).

A judged measure declares whether it needs the reference answer; ``evaluate``
passes on the reason when the sample was not judged, or has no reference, and
otherwise hands the labels to ``from_labels``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from cofe.measures._base import Measure, Need
from cofe.measures._unscored import Unscored
from cofe.measures._view import ClaimLabels, Step, StepView

NO_CLAIM = Unscored("the answer states no claim to check (empty, or a refusal)")
NO_REFERENCE_CLAIM = Unscored("the reference answer states no claim to look for")


class JudgedMeasure(Measure):
    STEPS: ClassVar[frozenset[Step]] = frozenset({Step.ANSWER})
    NEEDS: ClassVar[frozenset[Need]] = frozenset({Need.JUDGED})  # the judge's labels
    NEEDS_REFERENCE: ClassVar[bool] = False
    # the gated measures whose labels this one reads besides its own name's: a label family
    # the judge failed on (self-agreement, known-answer controls) leaves it unscored too
    READS: ClassVar[frozenset[str]] = frozenset()

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = view.claims
        if isinstance(labels, Unscored):
            return labels
        for name, reason in labels.unreliable:
            if name == self.NAME or name in self.READS:
                return Unscored(reason)
        if labels.failed is not None:
            return Unscored(labels.failed)
        if self.NEEDS_REFERENCE and isinstance(labels.reference, Unscored):
            return labels.reference
        return self.from_labels(labels)

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        raise NotImplementedError


def supported_share(labels: Sequence[bool | None] | Unscored, what: str) -> float | Unscored:
    """Share of claims labelled supported; None labels: not checked against ``what``; labels
    missing as a whole: why."""
    if isinstance(labels, Unscored):
        return labels
    if not labels:
        return NO_CLAIM
    if any(label is None for label in labels):
        return Unscored(f"the claims were not checked against {what}")
    return sum(bool(label) for label in labels) / len(labels)
