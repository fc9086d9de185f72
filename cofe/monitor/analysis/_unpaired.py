"""The monitor's alert statistic: a change between two windows of unpaired traces.

Traffic windows hold different queries, so the change is unpaired: each group bootstrapped
for the CI, the group labels shuffled for the p-value (``cofe.compare`` pairs samples by id,
which traffic never shares)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cofe.monitor.analysis._signals import STATISTICS

RESAMPLES = 2000
CAP = 5000  # values per side resampled by the unpaired test (a 2000 x 10000 matrix at most)


def unpaired_change(
    current: Sequence[float],
    baseline: Sequence[float],
    statistic: str = "mean",
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float, float]:
    """``statistic(current) - statistic(baseline)`` with a 95 % bootstrap CI (each group
    resampled) and a two-sided permutation p-value (group labels shuffled)."""
    a, b = np.asarray(current, dtype=float), np.asarray(baseline, dtype=float)
    stat = STATISTICS[statistic]
    observed = stat(a.tolist()) - stat(b.tolist())
    rng = np.random.default_rng(seed)
    # resampling matrices grow with the traces: past CAP per side, a random CAP of each
    # (at a thousand queries a second a window holds hundreds of thousands)
    if len(a) > CAP:
        a = rng.choice(a, CAP, replace=False)
    if len(b) > CAP:
        b = rng.choice(b, CAP, replace=False)
    if statistic == "mean":  # vectorised: the common case, thousands of traces
        boot = a[rng.integers(0, len(a), (resamples, len(a)))].mean(axis=1) - b[
            rng.integers(0, len(b), (resamples, len(b)))
        ].mean(axis=1)
        pooled = np.concatenate([a, b])
        perms = np.argsort(rng.random((resamples, len(pooled))), axis=1)
        shuffled = pooled[perms]
        diffs = shuffled[:, : len(a)].mean(axis=1) - shuffled[:, len(a) :].mean(axis=1)
    else:
        q = {"p10": 0.1, "p50": 0.5, "p90": 0.9, "p95": 0.95}[statistic]
        boot = np.quantile(
            a[rng.integers(0, len(a), (resamples, len(a)))], q, axis=1
        ) - np.quantile(b[rng.integers(0, len(b), (resamples, len(b)))], q, axis=1)
        pooled = np.concatenate([a, b])
        shuffled = pooled[np.argsort(rng.random((resamples, len(pooled))), axis=1)]
        diffs = np.quantile(shuffled[:, : len(a)], q, axis=1) - np.quantile(
            shuffled[:, len(a) :], q, axis=1
        )
    low, high = np.quantile(boot, [0.025, 0.975])
    extreme = int((np.abs(diffs) >= abs(observed) - 1e-12).sum())
    return float(observed), float(low), float(high), (1 + extreme) / (1 + resamples)
