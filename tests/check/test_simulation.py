"""The gate's error rates by simulation: noise-only pairs pass, real drops fail."""

from __future__ import annotations

import numpy as np
import pytest

from cofe.check import DEFAULT_MAX_DROP, Status, check_results
from tests.check.conftest import HEADLINE, NoisePair

PAIRS = 200


@pytest.mark.slow
def test_false_failures_over_200_noise_only_pairs_stay_under_five_percent(noise_pair: NoisePair):
    rng = np.random.default_rng(26)
    failed, significant_anywhere, beyond_anywhere = 0, 0, 0
    for rep in range(PAIRS):
        old, new = noise_pair(rng)
        report = check_results(new, (), old, resamples=499, seed=rep)
        assert report.defaults_used and [o.rule.target for o in report.outcomes] == list(HEADLINE)
        failed += not report.passed
        significant_anywhere += any(
            o.p_holm is not None and o.p_holm < 0.05 for o in report.outcomes
        )
        beyond_anywhere += any(
            o.delta is not None and -o.delta > DEFAULT_MAX_DROP for o in report.outcomes
        )
    rate = failed / PAIRS
    print(
        f"false failures: {failed}/{PAIRS} = {rate:.1%}; a significant change in "
        f"{significant_anywhere}, a drop beyond {DEFAULT_MAX_DROP} in {beyond_anywhere}"
    )
    assert rate <= 0.05, rate
    # the noise is real: without the test, the minimum effect alone would fail many pairs
    assert beyond_anywhere / PAIRS > 0.3


@pytest.mark.slow
def test_a_real_drop_of_one_stage_fails_the_gate_naming_that_stage(noise_pair: NoisePair):
    rng = np.random.default_rng(27)
    named = 0
    for rep in range(40):
        old, new = noise_pair(rng, drop={"context/KeywordRecall@4": 0.2})
        report = check_results(new, (), old, resamples=499, seed=rep)
        failing = {(o.stage, o.rule.target) for o in report.outcomes if o.status == Status.FAIL}
        named += ("reranking", "context/KeywordRecall@4") in failing
    assert named >= 36, named  # power >= 90 %
