from __future__ import annotations

from collections.abc import Sequence

from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from cofe.measures._base import Measure, Unscored

_SMOOTH = SmoothingFunction().method1  # short answers have no 4-gram matches


class BLEU(Measure):
    """Sentence BLEU-4 (smoothed) of the answer against the reference, on strict tokens."""

    NAME = "BLEU"

    def compute(self, answer: Sequence[str], reference: Sequence[str]) -> float | Unscored:
        if not reference:
            return Unscored("the reference answer has no words")
        if not answer:
            return 0.0
        return float(sentence_bleu([list(reference)], list(answer), smoothing_function=_SMOOTH))
