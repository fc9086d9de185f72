"""Whether the judge agrees with itself enough for a judged measure to mean anything.

``cofe judge --repeats N`` asks each judgement N times. Krippendorff's alpha (interval data)
over a measure's repeated values says how much of their spread is the samples' and how much
the judge's whim: 1 when the repeats agree exactly, about 0 when they are as different
as values of different samples. A measure whose alpha is under ``MIN_ALPHA`` on at least
``MIN_UNITS`` samples would rank configurations on noise: ``cofe score`` leaves it unscored
for every sample, with this reason, instead of printing a number.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from itertools import permutations

import numpy as np

from cofe.measures import GATED, ClaimLabels, Step, StepView, Unscored

JUDGED = GATED  # the gated measures, as cofe.measures reads them from their declarations
# Krippendorff's own floor for drawing tentative conclusions from coded data (0.8 for firm
# ones): a judge below it disagrees with itself too much for its values to rank anything
MIN_ALPHA = 0.667
# fewer samples judged twice than this: alpha itself is too uncertain to overrule a measure
MIN_UNITS = 5


def krippendorff_alpha(units: list[list[float]]) -> float | None:
    """Krippendorff's alpha, interval metric, for units each holding repeated values.

    alpha = 1 - D_o / D_e with D_o the mean squared difference within units
    (each unit's ordered pairs weighted 1 / (m_u - 1)) and D_e the mean squared
    difference over all ordered pairs of pairable values. None when every value
    is the same (alpha is undefined without variation).
    """
    pairable = [list(map(float, u)) for u in units if len(u) >= 2]
    n = sum(len(u) for u in pairable)
    if n < 2:
        return None
    observed = (
        sum(sum((a - b) ** 2 for a, b in permutations(u, 2)) / (len(u) - 1) for u in pairable) / n
    )
    values = np.array([v for u in pairable for v in u])
    # sum over ordered pairs of (a - b)^2 = 2 n sum(v^2) - 2 (sum v)^2
    expected = (2 * n * float((values**2).sum()) - 2 * float(values.sum()) ** 2) / (n * (n - 1))
    if expected == 0:
        return None
    return 1.0 - observed / expected


def repeated_values(
    labels: Mapping[tuple[str, int], ClaimLabels],
) -> dict[str, dict[str, list[float]]]:
    """Per judged measure, per sample: its values over the repeats (by (sample id, repeat))."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (sample_id, _repeat), claims in sorted(labels.items()):
        for name, value in judged_values(claims).items():
            values[name][sample_id].append(value)
    return values


def judged_values(claims: ClaimLabels) -> dict[str, float]:
    """Each judged measure's value from one judgement's labels (the unscored ones left out)."""
    view = StepView(Step.ANSWER, (), claims=claims)
    out: dict[str, float] = {}
    for measure in JUDGED:
        value = measure.evaluate(view)
        if not isinstance(value, Unscored):
            out[measure.name] = float(value)
    return out


def unreliable(labels: Mapping[tuple[str, int], ClaimLabels]) -> tuple[tuple[str, str], ...]:
    """The judged measures the judge disagrees with itself on, each with the reason."""
    values = repeated_values(labels)
    out: list[tuple[str, str]] = []
    for measure in JUDGED:
        units = [u for u in values[measure.name].values() if len(u) >= 2]
        if len(units) < MIN_UNITS:
            continue
        alpha = krippendorff_alpha(units)
        if alpha is not None and alpha < MIN_ALPHA:
            times = max(len(u) for u in units)
            out.append(
                (
                    measure.name,
                    f"the judge disagrees with itself on {measure.name}: Krippendorff's "
                    f"alpha {alpha:.2f} over {len(units)} samples judged {times} times, "
                    f"under {MIN_ALPHA}; its values would rank runs on noise",
                )
            )
    return tuple(out)
