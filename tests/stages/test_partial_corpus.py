"""A run whose chunks are only those its pipeline returned (a canary sent to a service;
manifest ``"corpus": "partial"``): the corpus is not judged, and a loss after a step
that held the point is still blamed."""

from __future__ import annotations

from pathlib import Path

from cofe import Chunk, EvalSample, Manifest, RunLog, SampleRecord, Stage, score_run
from cofe.evalset import EvalSet
from tests.conftest import ranked

SAMPLES = [
    EvalSample(
        id="kept",
        query="When did the Broncos win?",
        coarse_keywords=["Broncos"],
        fine_keywords=[["24–10"]],
    ),
    EvalSample(
        id="dropped",
        query="Who won the game?",
        coarse_keywords=["Broncos"],
        fine_keywords=[["Denver"]],
    ),
    EvalSample(
        id="missing",
        query="Who played at halftime?",
        coarse_keywords=["Broncos"],
        fine_keywords=[["Coldplay"]],
    ),
]
CHUNKS = {
    "a": Chunk(chunk_id="a", doc_id="a", text="The Denver Broncos won the game 24–10."),
    "b": Chunk(chunk_id="b", doc_id="b", text="The Broncos played in Santa Clara."),
}
RECORDS = {
    "kept": SampleRecord(
        sample_id="kept", pool=ranked("b", "a"), context=ranked("a"), answer="They won 24–10."
    ),
    # the reranker dropped the chunk holding the point
    "dropped": SampleRecord(
        sample_id="dropped", pool=ranked("b", "a"), context=ranked("b"), answer="Not sure."
    ),
    # the point is in no returned chunk: retrieval, or a corpus cofe cannot see
    "missing": SampleRecord(
        sample_id="missing", pool=ranked("b"), context=ranked("b"), answer="Not sure."
    ),
}


def _score(corpus):
    stages = [Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION]
    log = RunLog(
        Path("memory"),
        Manifest(run_id="m", stages=stages, top_k=1, corpus=corpus),
        {},
        dict(CHUNKS),
        dict(RECORDS),
    )
    return score_run(log, EvalSet(SAMPLES, []))


def test_a_partial_corpus_is_not_judged_and_losses_are_still_placed():
    result = _score("partial")
    verdicts = result.verdicts.set_index("sample_id")
    assert verdicts.loc["dropped", "stage"] == "reranking"  # the pool held it: not unscorable
    assert verdicts.loc["kept", "verdict"].startswith("pass")
    missing = verdicts.loc["missing"]
    assert missing["verdict"] == "unscorable"
    assert "not the whole corpus" in missing["explanation"]
    assert "chunking" not in result.shape["stages"]
    assert not (result.scores["step"] == "corpus").any()
    skipped = result.skipped[result.skipped["step"] == "corpus"]
    assert len(skipped) and skipped["reason"].str.contains("not the whole corpus").all()


def test_a_whole_corpus_missing_the_point_is_a_chunking_loss():
    result = _score("whole")
    verdicts = result.verdicts.set_index("sample_id")
    assert verdicts.loc["missing", "stage"] == "chunking"
    assert verdicts.loc["dropped", "stage"] == "reranking"
