"""A run that does not say its stages (an older run, a framework recorded from its spans)
and records a context next to its pool: a reranker only when some context is not its
pool's first items. A plain top-K cut loses a point at retrieval, as the built-in pipeline
without a reranker says -- not at a reranker that does not exist."""

import pytest

from cofe import EvalSample, SampleRecord, ScoreConfig, score_run
from cofe.stages import score_to_folder
from tests.conftest import ranked


def sample() -> EvalSample:
    return EvalSample(
        id="q", query="When was the tower finished?", coarse_keywords=[], fine_keywords=[["1889"]]
    )


CHUNKS = {
    "a": "Paris is a city.",
    "b": "The Louvre is a museum.",
    "c": "The tower was finished in 1889.",
}


def verdict(run, streamed: bool, tmp_path) -> tuple[str, str]:
    if streamed:
        _, folder = score_to_folder(run, out=tmp_path / "scores")
        from cofe import read_scores

        result = read_scores(folder)
    else:
        result = score_run(run, config=ScoreConfig())
    row = result.verdicts.iloc[0]
    return row["verdict"], row["stage"]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_context_that_is_the_pools_top_k_is_a_cut_not_a_reranker(make_run, tmp_path, streamed):
    record = SampleRecord(
        sample_id="q", pool=ranked("a", "b", "c"), context=ranked("a", "b"), answer="No idea."
    )
    run = make_run([sample()], CHUNKS, [record])
    assert verdict(run, streamed, tmp_path) == ("not_retrieved", "retrieval")


@pytest.mark.parametrize("streamed", [False, True])
def test_a_reordered_context_is_a_reranker(make_run, tmp_path, streamed):
    record = SampleRecord(
        sample_id="q", pool=ranked("c", "a", "b"), context=ranked("a", "b"), answer="No idea."
    )
    run = make_run([sample()], CHUNKS, [record])
    assert verdict(run, streamed, tmp_path) == ("cut_by_rerank", "reranking")
