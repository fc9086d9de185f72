"""The judge's agreement with itself: Krippendorff's alpha, checked by hand and by simulation."""

from __future__ import annotations

import json
from itertools import count

import numpy as np
import pytest

from cofe.judges import judge_agreement, judge_run, krippendorff_alpha, read_judgements
from cofe.testing import ScriptedOpenAI
from tests.judges.test_judge import CASES, client, make_run, scripted


def test_alpha_by_hand():
    # two units, two coders: values (1, 1) and (3, 3): perfect agreement
    assert krippendorff_alpha([[1, 1], [3, 3]]) == 1.0
    # units (0, 1) and (1, 0): within-unit pairs differ by 1 each way;
    # D_o = (2*1 + 2*1) / 4 = 1; all 4 values: ordered pairs with a difference: 8 of 12 -> 8/12
    # alpha = 1 - 1 / (8 / 12) = -0.5
    assert krippendorff_alpha([[0, 1], [1, 0]]) == pytest.approx(-0.5)
    assert krippendorff_alpha([[2, 2], [2, 2]]) is None  # no variation: undefined
    assert krippendorff_alpha([[1]]) is None  # nothing pairable


def test_alpha_is_near_zero_for_independent_repeats_and_near_one_for_faithful_ones():
    rng = np.random.default_rng(0)
    noise = [list(rng.random(3)) for _ in range(400)]
    assert abs(krippendorff_alpha(noise)) < 0.08
    truth = rng.random(400)
    close = [list(t + rng.normal(scale=0.02, size=3)) for t in truth]
    assert krippendorff_alpha(close) > 0.95


def test_repeats_are_asked_again_not_served_from_a_cache_and_reported(tmp_path):
    run = make_run(tmp_path / "run")
    flips = count()

    def unsteady(messages, request):
        """The scripted judge, except that it changes its mind on claim 1 of q0 every other time."""
        reply = scripted(messages, request)
        if '"claim": 1, "context": false' in reply and next(flips) % 2:
            reply = reply.replace('"claim": 1, "context": false', '"claim": 1, "context": true')
        return reply

    with ScriptedOpenAI(unsteady) as server:
        report = judge_run(run, client(server), repeats=3)
        calls = len(server.requests)
    assert report.judged == 3 * 3 and report.unscored == 3  # q3 fails in every repeat
    assert calls == 3 * (2 + 2 + 2 + 2)  # per repeat: two calls each (q3: call and repair)
    judgements = read_judgements(run, repeat=None)
    assert {r for (_sid, r) in judgements} == {0, 1, 2}
    table = judge_agreement(run).set_index("measure")
    faith = table.loc["Faithfulness"]
    assert faith.samples == 2 and faith.repeats == 3  # q0 and q1 (q2 has no claim)
    assert faith.spread > 0 and faith.alpha < 1  # the judge changed its mind on q0
    assert table.loc["ClaimRecall", "alpha"] == 1.0 or np.isnan(table.loc["ClaimRecall", "alpha"])
    assert len(CASES) == 4
    # scoring uses repeat 0 only, whatever the others said
    from cofe import score_run

    first = read_judgements(run)["q0"]
    assert json.loads(first.model_dump_json())["repeat"] == 0
    assert score_run(run).scores.query(
        "sample_id == 'q0' and measure == 'Faithfulness'"
    ).value.iloc[0] in (0.5, 1.0)
