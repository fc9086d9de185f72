"""The one inference rule and what it says an eval set can detect."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cofe.compare import (
    MIN_DOCUMENTS,
    choose_inference,
    detectable_drop,
    needed_units,
    plan_sample_size,
)
from cofe.compare._inference import _t
from tests.compare.test_compare_output import scoring


def sources(questions: int, documents: int) -> pd.Series:
    ids = [f"q{i}" for i in range(questions)]
    return pd.Series([f"d{i % documents}" for i in range(questions)], index=ids)


def test_questions_are_clustered_by_document_from_the_threshold_on():
    below = choose_inference(sources(200, MIN_DOCUMENTS - 1))
    at = choose_inference(sources(200, MIN_DOCUMENTS))
    assert not below.clustered and below.unit == "question" and below.labels(None) is None
    assert "holds for these 19 document(s), not for new ones" in below.caveat
    assert at.clustered and at.unit == "document" and at.caveat == ""
    labels = at.labels(pd.Index(["q0", "q20", "q1"]))
    assert labels is not None and list(labels) == ["doc:d0", "doc:d0", "doc:d1"]
    # questions sharing no document, or none known: independent, nothing to caveat
    alone = choose_inference(sources(30, 30))
    assert not alone.clustered and alone.caveat == ""
    assert choose_inference(None, questions=5).description.startswith("over questions")


def test_the_t_quantile_matches_the_tables():
    # Student's t, two-sided 5 % and 1 %, and the 80 % quantile (textbook tables)
    assert _t(0.975, 5) == pytest.approx(2.571, abs=2e-3)
    assert _t(0.975, 19) == pytest.approx(2.093, abs=1e-3)
    assert _t(0.995, 9) == pytest.approx(3.250, abs=2e-3)
    assert _t(0.8, 5) == pytest.approx(0.920, abs=1e-3)


def test_too_few_units_can_detect_nothing_and_more_questions_detect_less():
    rng = np.random.default_rng(0)
    noise = rng.choice([-0.5, 0.0, 0.0, 0.5], size=400)
    assert math.isinf(detectable_drop(noise[:5], np.ones(5)))  # 2 / 2^5 > 0.05
    small = detectable_drop(noise[:100], np.ones(100))
    large = detectable_drop(noise, np.ones(400))
    assert 0 < large < small < 1
    assert large == pytest.approx(small / 2, rel=0.25)  # about 1 / sqrt(n)
    # what a drop needs grows as the drop shrinks, and a found drop needs no more
    q_small, _ = needed_units(noise, np.ones(400), 0.02)
    q_large, _ = needed_units(noise, np.ones(400), 0.1)
    assert q_small > q_large > 6
    q_now, _ = needed_units(noise, np.ones(400), large)
    assert q_now <= 400 * 1.05


def test_a_pilot_without_differences_still_counts_the_noise_of_the_drop():
    """Identical runs: no variance seen, yet a drop brings its own (some questions lose
    their point): the detectable drop is about (t + t)^2 / n, not zero."""
    zero = detectable_drop(np.zeros(200), np.ones(200))
    assert 0.02 < zero < 0.1


def test_a_plan_from_one_run_and_from_two():
    base = scoring({("answer", "PointRecall"): [1.0, 0.0] * 60}, 40)
    worse = scoring({("answer", "PointRecall"): [1.0, 0.0, 0.0, 0.0] * 30}, 40)
    one = plan_sample_size([base], drop=0.05)
    (row,) = one.table.to_dict("records")
    assert row["questions"] == 120 and row["documents"] == 40 and row["unit"] == "document"
    assert row["questions_needed"] > 120 and row["documents_needed"] >= MIN_DOCUMENTS
    assert one.basis.startswith("one run")
    two = plan_sample_size({"base": base, "worse": worse}, drop=0.05)
    (paired,) = two.table.to_dict("records")
    assert two.basis.startswith("two runs (base -> worse)")
    assert paired["detectable_now"] is not None and paired["questions_needed"] > 120
    with pytest.raises(ValueError, match="not scored in the pilot"):
        plan_sample_size([base], columns=["pool/KeywordRecall@4"])
