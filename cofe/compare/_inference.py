"""Inference that fits the eval set: the one rule every comparison of runs follows.

``cofe compare``, ``cofe sweep``, ``cofe check`` and the monitor's canary alerts all test
a change on paired per-question values. What counts as an independent unit is decided
here, once:

* **by source document** when the questions share documents and there are at least
  ``MIN_DOCUMENTS`` of them: questions about one document move together (a chunking change
  helps or hurts all of them), so resampling and sign flips act on whole documents, and
  the result generalises to other documents like these;
* **over questions** below that (or when no question shares a document): a test over two
  or five documents can never reach significance -- a sign flip over G units gives no p
  below 2 / 2^G -- and a cluster-robust variance from so few units is badly biased, so the
  paired test runs over questions instead. That test is valid for *these* documents (the
  documents are fixed, the questions about them vary), and the caveat says so: the result
  does not carry over to new documents.

The same module says what such a test can see (``detectable_drop``: the smallest drop
found with 80 % power) and how many questions and documents a drop needs
(``needed_units``), from the paired differences of two runs; docs/ci.md explains both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from cofe.compare._stats import RESAMPLES, Interval, PairedTest, mean_ci, paired_difference

MIN_DOCUMENTS = 20
"""Documents needed before questions are clustered by document. Below it the sign-flip
test over documents has too few distinct outcomes to reach significance once corrected
for several measures (2 / 2^G times the tests), and a cluster-robust standard error from
fewer than about 20 clusters understates the variance (the few-clusters problem:
Cameron, Gelbach and Miller 2008); the question-level test is used, its caveat printed."""

POWER = 0.8


@dataclass(frozen=True)
class Inference:
    """How questions are grouped into independent units for a comparison.

    ``sources``: per sample id, its source document (samples without one are their own
    unit); ``clustered``: whether tests act on whole documents."""

    sources: pd.Series | None
    documents: int  # distinct source documents of the questions (0: none known)
    questions: int
    clustered: bool
    min_documents: int = MIN_DOCUMENTS

    def labels(self, ids: pd.Index | None) -> np.ndarray | None:
        """Per sample id: its unit's label (None: every question its own unit)."""
        if not self.clustered or self.sources is None or ids is None:
            return None
        found = self.sources.reindex(ids)
        return np.where(found.isna(), "sample:" + ids.astype(str), "doc:" + found.astype(str))

    @property
    def unit(self) -> str:
        return "document" if self.clustered else "question"

    @property
    def description(self) -> str:
        """One line: what the tests treat as independent, and why."""
        if self.clustered:
            return (
                f"clustered by source document: {self.documents} documents for "
                f"{self.questions} questions (bootstrap and sign flips act on whole "
                "documents; questions without a source are their own unit)"
            )
        if self.documents == 0 or self.documents >= self.questions:
            return f"over questions: {self.questions} questions, none sharing a source document"
        return (
            f"over questions: {self.questions} questions on {self.documents} source "
            f"document(s), fewer than the {self.min_documents} needed to cluster by document"
        )

    @property
    def caveat(self) -> str:
        """What a result does not say ("" when it generalises as far as the data allow)."""
        if self.clustered or self.documents == 0 or self.documents >= self.questions:
            return ""
        return (
            f"the result holds for these {self.documents} document(s), not for new ones: with "
            f"fewer than {self.min_documents} documents the test treats questions as the "
            "independent units (docs/ci.md)"
        )

    def mean(
        self,
        values: np.ndarray,
        ids: pd.Index | None = None,
        *,
        level: float = 0.95,
        resamples: int = RESAMPLES,
        seed: int = 0,
    ) -> Interval:
        """The mean of ``values`` (one per id) with its CI, resampling this rule's units."""
        return mean_ci(values, self.labels(ids), level=level, resamples=resamples, seed=seed)

    def paired(
        self,
        a: np.ndarray,
        b: np.ndarray,
        ids: pd.Index | None = None,
        *,
        level: float = 0.95,
        resamples: int = RESAMPLES,
        seed: int = 0,
    ) -> PairedTest:
        """A - B on the same questions: mean difference, CI and the two-sided paired test."""
        return paired_difference(
            a, b, self.labels(ids), level=level, resamples=resamples, seed=seed
        )

    def power(
        self,
        a: np.ndarray,
        b: np.ndarray,
        ids: pd.Index | None = None,
        *,
        alpha: float = 0.05,
        power: float = POWER,
        drop: float | None = None,
    ) -> Power:
        """What the paired test of A and B can see: ``detectable_drop`` at ``alpha``, and,
        for ``drop`` (a rule's limit), the questions and documents it would need."""
        diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
        labels = self.labels(ids)
        units = _unit_sums(diff, labels)
        detectable = detectable_drop(*units, alpha=alpha, power=power)
        questions = documents = None
        if drop is not None and drop > 0:
            if self.clustered:
                questions, documents = needed_units(*units, drop, alpha=alpha, power=power)
            else:
                questions, _ = needed_units(*units, drop, alpha=alpha, power=power)
                if self.sources is not None and self.documents > 1:
                    doc_units = _unit_sums(diff, _document_labels(self.sources, ids))
                    _, documents = needed_units(*doc_units, drop, alpha=alpha, power=power)
                    documents = max(documents or 0, self.min_documents)
        return Power(detectable, alpha, power, len(diff), len(units[0]), questions, documents)


@dataclass(frozen=True)
class Power:
    """The smallest drop the paired test finds with ``power`` at ``alpha`` (inf: none can
    be found here), and, for a given drop, the questions / documents it needs."""

    detectable: float
    alpha: float
    power: float
    questions: int
    units: int
    questions_needed: int | None = None
    documents_needed: int | None = None

    def can_detect(self, drop: float) -> bool:
        return drop >= self.detectable - 1e-12

    def shortfall(self, drop: float) -> str:
        """ "cannot detect a drop of 0.02 here (needs >= N questions / M documents)", or ""."""
        if self.can_detect(drop):
            return ""
        needs = []
        if self.questions_needed is not None:
            needs.append(f">= {self.questions_needed} questions")
        if self.documents_needed is not None:
            needs.append(f"{self.documents_needed} documents")
        return f"cannot detect a drop of {drop:g} here" + (
            f" (needs {' / '.join(needs)})" if needs else ""
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "detectable_drop": None if math.isinf(self.detectable) else self.detectable,
            "alpha": self.alpha,
            "power": self.power,
            "questions": self.questions,
            "units": self.units,
            "questions_needed": self.questions_needed,
            "documents_needed": self.documents_needed,
        }


def choose_inference(
    sources: pd.Series | Mapping[str, str | None] | None,
    *,
    min_documents: int = MIN_DOCUMENTS,
    questions: int | None = None,
) -> Inference:
    """The rule (module docstring) for questions with these source documents (per sample
    id; None: unknown -- every question its own unit)."""
    if sources is None:
        return Inference(None, 0, questions or 0, False, min_documents)
    series = sources if isinstance(sources, pd.Series) else pd.Series(dict(sources), dtype=object)
    series = series[~series.index.duplicated()]
    n = len(series) if questions is None else questions
    known = series.dropna()
    documents = int(known.nunique())
    shared = not known.empty and int(known.value_counts().max()) >= 2
    # the independent units if clustered: the documents plus each question without one
    units = documents + int(series.isna().sum())
    return Inference(known, documents, n, shared and units >= min_documents, min_documents)


def inference_for(named: Mapping[str, Any]) -> Inference:
    """The rule applied to the questions of these scorings (``ScoreResult``s): each
    sample's source document as their verdicts table gives it."""
    frames = [r.verdicts.set_index("sample_id")["source"] for r in named.values()]
    sources = pd.concat(frames)
    sources = sources[~sources.index.duplicated()]
    return choose_inference(sources)


# --- power --------------------------------------------------------------------------------


def _document_labels(sources: pd.Series, ids: pd.Index | None) -> np.ndarray | None:
    if ids is None:
        return None
    found = sources.reindex(ids)
    return np.where(found.isna(), "sample:" + ids.astype(str), "doc:" + found.astype(str))


def _unit_sums(diff: np.ndarray, labels: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per independent unit: the sum of its differences and its question count."""
    if labels is None:
        return diff, np.ones(len(diff))
    _codes, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=diff)
    counts = np.bincount(inverse).astype(float)
    return sums, counts


def _t(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom: the normal
    quantile's Cornish-Fisher expansion (Abramowitz and Stegun 26.7.5), to about 1e-3 from
    5 degrees of freedom -- fewer units than that never reach here (``_units_floor``)."""
    z = NormalDist().inv_cdf(p)
    v = float(max(df, 1))
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def _detects(
    drop: float,
    units: int,
    n: float,
    q: float,
    v_obs: float,
    alpha: float,
    power: float,
    deff: float = 1.0,
) -> bool:
    """Whether the paired test over ``units`` units finds a drop of ``drop`` with ``power``
    at ``alpha``. ``n``: questions; ``q``: the units' squared question counts, summed;
    ``v_obs``: the units' summed differences' squared deviations from the mean, summed.

    The summed difference T is about N(drop * n, V). The sign-flip test's null variance is
    the sum of the squared unit sums -- V + drop^2 q under the drop, not V --, so it
    rejects when |T| >= t_{1-alpha/2} sqrt(V + drop^2 q), which a drop passes with
    ``power`` when drop * n - t_{1-alpha/2} sqrt(V + drop^2 q) >= t_power sqrt(V)
    (Student's t over units - 1 degrees of freedom for the few-units case). When one
    document holds so many questions that the normal limit fails (n^2 <= t^2 q), the
    exact test still rejects when every unit moves one way: the centred form is used.

    The variance is never taken below what the drop itself brings when it falls as whole
    points lost by some questions (n * drop * (1 - drop)): a pilot with no difference, or
    almost none, says nothing of the noise a real drop comes with (``deff``: that floor's
    design effect, when questions of one unit move together)."""
    v = max(v_obs, deff * n * drop * (1 - drop))
    if v <= 0:
        return True
    t_a, t_b = _t(1 - alpha / 2, units - 1), _t(power, units - 1)
    if n * n > t_a * t_a * q:
        return drop * n - t_a * math.sqrt(v + drop * drop * q) >= t_b * math.sqrt(v)
    return drop * n >= (t_a + t_b) * math.sqrt(v)


def _units_floor(alpha: float) -> int:
    """Units that must all move one way for a sign-flip test to reach ``alpha``: its
    smallest p over k units is 2 / 2^k."""
    return math.ceil(math.log2(2 / alpha))


def _spread(sums: np.ndarray, counts: np.ndarray) -> float:
    """The units' summed differences' squared deviations from the mean, summed, with the
    small-sample factor G / (G - 1): the cluster-robust variance's numerator."""
    units = len(sums)
    mean = sums.sum() / counts.sum()
    return float(units / max(units - 1, 1) * ((sums - mean * counts) ** 2).sum())


def detectable_drop(
    sums: np.ndarray, counts: np.ndarray, *, alpha: float = 0.05, power: float = POWER
) -> float:
    """The smallest drop in the mean the paired test finds with ``power`` at ``alpha``,
    from the units' summed differences and question counts (``inf``: none can be)."""
    units = len(sums)
    if units < _units_floor(alpha):
        return math.inf
    n, q, v_obs = float(counts.sum()), float((counts**2).sum()), _spread(sums, counts)
    return smallest_drop(units, n, q, v_obs, alpha=alpha, power=power)


def smallest_drop(
    units: int,
    n: float,
    q: float,
    v_obs: float,
    *,
    alpha: float = 0.05,
    power: float = POWER,
    deff: float = 1.0,
) -> float:
    """``detectable_drop`` from the units' figures (``_detects``' arguments)."""
    if units < _units_floor(alpha) or not _detects(1.0, units, n, q, v_obs, alpha, power, deff):
        return math.inf
    low, high = 0.0, 1.0
    for _ in range(50):  # bisection: a larger drop is found whenever a smaller one is
        mid = (low + high) / 2
        found = _detects(mid, units, n, q, v_obs, alpha, power, deff)
        low, high = (low, mid) if found else (mid, high)
    return high


def needed_units(
    sums: np.ndarray,
    counts: np.ndarray,
    drop: float,
    *,
    alpha: float = 0.05,
    power: float = POWER,
) -> tuple[int, int]:
    """Questions and units needed to find ``drop`` with ``power`` at ``alpha``: each unit's
    variance and size kept as they are, their number grown until the test can (when the
    units are questions, the two numbers are the same)."""
    units = max(len(sums), 1)
    n = float(counts.sum())
    per_unit = _spread(sums, counts) / units if units > 1 else 0.0
    size_sq = float((counts**2).sum()) / units
    return units_for(per_unit, n / units, size_sq, drop, alpha=alpha, power=power)


def units_for(
    per_unit: float,
    size: float,
    size_sq: float,
    drop: float,
    *,
    alpha: float = 0.05,
    power: float = POWER,
    deff: float = 1.0,
) -> tuple[int, int]:
    """Questions and units needed to find ``drop``, each unit holding ``size`` questions
    (``size_sq``: their square, on average) with ``per_unit`` variance of its summed
    differences around the mean."""
    floor = _units_floor(alpha)
    most = 10**7

    def enough(g: int) -> bool:
        return _detects(drop, g, g * size, g * size_sq, g * per_unit, alpha, power, deff)

    if not enough(most):
        return (math.ceil(most * size), most)
    g = floor
    while not enough(g):
        g *= 2
    low, high = g // 2, g
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    g = max(high, floor)  # the bisection keeps ``high`` enough
    return math.ceil(g * size), g
