"""The statistics are checked by simulation: size under the null, power, CI coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cofe.compare import holm, mcnemar_p, mean_ci, paired_difference

REPS = 300


def _binomial_two_sided(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 9), (10, 10), (1, 20), (40, 55)])
def test_mcnemar_is_the_exact_binomial_test(b, c):
    assert mcnemar_p(b, c) == pytest.approx(_binomial_two_sided(b, c), rel=1e-9)


def test_holm_adjusts_step_down():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_with_no_true_difference_the_permutation_test_rejects_at_about_alpha():
    rng = np.random.default_rng(1)
    rejections = 0
    for rep in range(REPS):
        a = rng.normal(size=50)
        b = a + rng.normal(scale=0.5, size=50)  # paired, same mean
        rejections += paired_difference(a, b, resamples=999, seed=rep).p_value < 0.05
    rate = rejections / REPS
    assert 0.02 <= rate <= 0.085, rate


def test_with_no_true_difference_mcnemar_is_not_anti_conservative():
    rng = np.random.default_rng(2)
    rejections = 0
    for rep in range(REPS):
        a = (rng.random(80) < 0.6).astype(float)
        b = (rng.random(80) < 0.6).astype(float)
        test = paired_difference(a, b, seed=rep)
        assert test.test == "mcnemar"
        rejections += test.p_value < 0.05
    assert rejections / REPS <= 0.07


def test_a_known_shift_is_detected():
    rng = np.random.default_rng(3)
    detected = 0
    for rep in range(50):
        a = rng.normal(size=60)
        b = a - 0.4 + rng.normal(scale=0.5, size=60)  # A better by 0.4
        test = paired_difference(a, b, resamples=999, seed=rep)
        detected += test.p_value < 0.05 and test.difference.low > 0
    assert detected >= 45


def test_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(4)
    covered = 0
    for rep in range(REPS):
        values = rng.exponential(scale=1.0, size=80)  # skewed, true mean 1
        ci = mean_ci(values, resamples=999, seed=rep)
        covered += ci.low <= 1.0 <= ci.high
    assert 0.90 <= covered / REPS <= 0.985, covered / REPS


def test_clustered_samples_need_the_clustered_interval():
    """Samples of one document share an effect: the naive CI is too narrow, the clustered one
    keeps its coverage."""
    rng = np.random.default_rng(5)
    naive = clustered = 0
    clusters = np.repeat(np.arange(20), 10)
    for rep in range(200):
        effect = rng.normal(scale=1.0, size=20)[clusters]
        values = effect + rng.normal(scale=0.5, size=200)  # true mean 0
        plain = mean_ci(values, resamples=499, seed=rep)
        naive += plain.low <= 0 <= plain.high
        ci = mean_ci(values, clusters, resamples=499, seed=rep)
        assert ci.clusters == 20 and ci.n == 200
        clustered += ci.low <= 0 <= ci.high
    assert clustered / 200 >= 0.88
    assert naive / 200 <= 0.75  # what ignoring the documents would claim


def test_large_samples_use_the_normal_limit_and_agree_with_the_bootstrap():
    rng = np.random.default_rng(6)
    values = rng.random(5000)
    boot = mean_ci(values, resamples=2000)
    normal = mean_ci(values, resamples=2000, exact_limit=1)
    assert boot.method == "bootstrap" and normal.method == "normal"
    assert normal.low == pytest.approx(boot.low, abs=2e-3)
    assert normal.high == pytest.approx(boot.high, abs=2e-3)
    a, b = rng.normal(size=5000), rng.normal(size=5000) + 0.05
    exact = paired_difference(a, b, resamples=2000)
    approx = paired_difference(a, b, resamples=2000, exact_limit=1)
    assert approx.test == "normal"
    assert approx.p_value == pytest.approx(exact.p_value, abs=0.01)


def test_identical_runs_differ_by_nothing():
    values = np.array([0.0, 1.0, 0.5, 0.25])
    test = paired_difference(values, values)
    assert test.difference.estimate == 0 and test.p_value == 1.0
