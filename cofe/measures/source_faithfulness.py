from __future__ import annotations

from cofe.measures._base import Measure, Unscored
from cofe.measures._view import Step, StepView
from cofe.measures.faithfulness import supported_share


class SourceFaithfulness(Measure):
    """Share of the answer's claims supported by the sample's gold source document: a context
    that is only a fragment of the source does not count against a correct answer."""

    NAME = "SourceFaithfulness"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.claims, Unscored):
            return view.claims
        if view.claims.no_source:
            return Unscored(view.claims.no_source)
        return supported_share(view.claims.source, "the source document")
