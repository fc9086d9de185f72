"""Golden test of the shipped example run: a scorer change that moves its verdicts must be seen.

If a change is meant to move these figures, re-run ``python -m cofe score examples/squad-bm25``,
check the new verdicts by hand on a few samples, and update the numbers with the reason in the
commit message.
"""

from __future__ import annotations

import pytest

from cofe import ScoreConfig, Verdict, score_run
from tests.conftest import EXAMPLE_RUN


@pytest.fixture(scope="module")
def result():
    return score_run(EXAMPLE_RUN, config=ScoreConfig())


def test_verdict_counts_are_pinned(result):
    table = result.verdicts.fillna({"stage": "-"})
    counts = table.groupby(["stage", "verdict"]).size().to_dict()
    assert counts == {
        ("chunking", Verdict.CHUNK_SPLIT): 17,
        ("retrieval", Verdict.NOT_RETRIEVED): 14,
        ("reranking", Verdict.CUT_BY_RERANK): 21,
        ("generation", Verdict.NOT_IN_ANSWER): 63,
        ("-", Verdict.PASS): 147,
    }, counts


def test_first_middle_and_last_samples(result):
    verdicts = result.verdicts.set_index("sample_id")
    assert len(verdicts) == 262
    assert verdicts.loc["56ddde6b9a695914005b9628", "verdict"] == Verdict.CUT_BY_RERANK
    assert verdicts.loc["5725d183271a42140099d23e", "verdict"] == Verdict.PASS
    assert verdicts.loc["TRIAL_263_QUERY_4", "verdict"] == Verdict.NOT_IN_ANSWER


def test_every_measure_is_scored_or_says_why_for_all_samples(result):
    table = result.summary().set_index(["step", "measure"])
    assert ((table.scored + table.unscored) == 262).all()
    assert table.loc[("context", "KeywordRecall@4"), "mean"] == pytest.approx(0.801527, abs=1e-6)
    assert table.loc[("pool", "KeywordRecall@30"), "mean"] == pytest.approx(0.881679, abs=1e-6)
    assert table.loc[("answer", "KeywordRecall"), "mean"] == pytest.approx(0.561069, abs=1e-6)
