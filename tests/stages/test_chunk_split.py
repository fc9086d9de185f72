"""Split points: every keyword of a point in some chunk in scope, none holding them together.

A point that did not reach the context whole is a chunking loss (``chunk_split``), with the
chunks each keyword landed in as evidence -- not a retrieval loss.
"""

from __future__ import annotations

from cofe import Chunk, SampleRecord, ScoreConfig, Verdict, score_run
from cofe.evalset import EvalSet
from tests.conftest import ranked, recall_at
from tests.stages.test_trust import run_log, sample, verdict

TEXT = "Revenue 2023 was 1,234 million. Operating costs were 900 million. Staff: 12,000."
ROW = (("Revenue 2023", "1,234 million"),)  # a table row: its label and its figure
CHUNKS = {  # a boundary between the row's label and its figure
    "c0": ("d1", "Revenue 2023 was", 0, 16),
    "c1": ("d1", "1,234 million. Operating costs were 900 million.", 17, 66),
    "c2": ("d1", "Staff: 12,000.", 67, 81),
}


def scored(record, fine=ROW, chunks=CHUNKS, config=None, derived=()):
    log = run_log([record], chunks=chunks, docs={"d1": TEXT})
    for item in derived:
        log.chunks[item.chunk_id] = item
    one = sample(fine=fine).model_copy(update={"coarse_keywords": []})
    return score_run(log, EvalSet([one]), config or ScoreConfig(top_k=2))


def test_a_point_split_across_two_chunks_is_a_chunking_loss_with_its_fragments():
    record = SampleRecord(
        sample_id="q", pool=ranked("c1", "c2"), context=ranked("c1", "c2"), answer="1,234 million."
    )
    result = scored(record)
    v, stage, why = verdict(result)
    assert (v, stage) == (Verdict.CHUNK_SPLIT, "chunking")
    assert "'Revenue 2023' in chunk(s) 'c0'" in why and "'1,234 million' in chunk(s) 'c1'" in why
    assert "'Revenue 2023' absent" in why and "'1,234 million' at rank 1" in why
    assert result.points.lost_at.tolist() == ["chunking"]
    # the keywords are all in the corpus: its recall is unchanged; the point is not intact
    assert recall_at(result, "corpus", "KeywordRecall") == 1.0
    assert recall_at(result, "corpus", "ChunkIntegrity") == 0.0


def test_both_pieces_in_the_context_is_still_a_split_point():
    """The label and the figure reached the generator in separate chunks: not whole."""
    record = SampleRecord(
        sample_id="q", pool=ranked("c0", "c1"), context=ranked("c0", "c1"), answer="1,234 million."
    )
    result = scored(record)
    v, _, why = verdict(result)
    assert v == Verdict.CHUNK_SPLIT and "at rank 1" in why and "at rank 2" in why
    assert recall_at(result, "context", "KeywordRecall@2") == 1.0  # the keywords did arrive


def test_a_split_point_the_context_holds_whole_in_one_item_is_not_a_chunking_loss():
    """A derived item (a window over both chunks) carries the whole row to the generator."""
    window = Chunk(
        chunk_id="w",
        doc_id="(derived)",
        text="Revenue 2023 was 1,234 million.",
        kind="window",
        derived_from=["c0", "c1"],
    )
    record = SampleRecord(
        sample_id="q",
        pool=ranked("w", "c2"),
        context=ranked("w", "c2"),
        answer="Revenue 2023 was 1,234 million.",
    )
    result = scored(record, derived=[window])
    assert verdict(result)[0] == Verdict.PASS
    assert result.points.lost_at.isna().all()


def test_a_split_point_lost_later_by_the_generator_is_still_chunking():
    window = Chunk(
        chunk_id="w",
        doc_id="(derived)",
        text="Revenue 2023 was 1,234 million.",
        kind="window",
        derived_from=["c0", "c1"],
    )
    record = SampleRecord(
        sample_id="q", pool=ranked("w"), context=ranked("w"), answer="Staff: 12,000."
    )
    assert verdict(scored(record, derived=[window]))[0] == Verdict.NOT_IN_ANSWER


def test_single_keyword_points_are_unchanged():
    """One keyword per point: whole in a chunk or cut, as before -- a retrieval miss stays one."""
    record = SampleRecord(sample_id="q", pool=ranked("c2"), context=ranked("c2"), answer="x")
    v, stage, _ = verdict(scored(record, fine=(("1,234 million",),)))
    assert (v, stage) == (Verdict.NOT_RETRIEVED, "retrieval")
    cut = {"c0": ("d1", TEXT[:20], 0, 20), "c1": ("d1", TEXT[20:], 20, len(TEXT))}
    record = SampleRecord(sample_id="q", pool=ranked("c1"), context=ranked("c1"), answer="x")
    v, _, why = verdict(scored(record, fine=(("1,234 million",),), chunks=cut))
    assert v == Verdict.CHUNK_SPLIT and "cut by a chunk boundary" in why


def test_an_intact_point_missed_by_the_retriever_is_not_retrieved():
    chunks = {
        "c0": ("d1", "Revenue 2023 was 1,234 million.", 0, 31),
        "c1": ("d1", "Operating costs were 900 million. Staff: 12,000.", 32, 81),
    }
    record = SampleRecord(sample_id="q", pool=ranked("c1"), context=ranked("c1"), answer="x")
    assert verdict(scored(record, chunks=chunks))[0] == Verdict.NOT_RETRIEVED


def test_without_a_context_step_the_pool_is_what_reached():
    """A retrieval-only run (no top-K): the pool is judged, and the split point blamed."""
    record = SampleRecord(sample_id="q", pool=ranked("c1", "c0"))
    result = scored(record, config=ScoreConfig())
    v, _, why = verdict(result)
    assert v == Verdict.CHUNK_SPLIT and "no item of the pool holds it whole" in why


def test_a_run_without_pool_or_context_does_not_blame_the_split():
    """Nothing says what reached the generator: the split is a risk (ChunkIntegrity)."""
    record = SampleRecord(sample_id="q", answer="Revenue 2023 was 1,234 million.")
    result = scored(record, config=ScoreConfig())
    assert verdict(result)[0] != Verdict.CHUNK_SPLIT
    assert recall_at(result, "corpus", "ChunkIntegrity") == 0.0


def test_the_keywords_of_a_split_point_in_another_sample_are_scored_alone():
    """Two points, one whole and one split: the split one is named, the whole one not."""
    fine = (("Operating costs", "900 million"), ("Revenue 2023", "1,234 million"))
    record = SampleRecord(sample_id="q", pool=ranked("c1"), context=ranked("c1"), answer="x")
    v, _, why = verdict(scored(record, fine=fine))
    assert v == Verdict.CHUNK_SPLIT and why.startswith("point 1 [")
    assert "Operating costs" not in why


def test_a_point_whole_only_in_a_chunk_out_of_scope_says_so():
    """Same-source scoring: another document's chunk holds the row whole; the evidence names
    it rather than blaming a boundary."""
    chunks = {**CHUNKS, "x": ("d2", "Revenue 2023 was 1,234 million.", 0, 31)}
    record = SampleRecord(sample_id="q", pool=ranked("c1"), context=ranked("c1"), answer="x")
    log_docs = {"d1": TEXT, "d2": "Revenue 2023 was 1,234 million."}
    log = run_log([record], chunks=chunks, docs=log_docs)
    one = sample(fine=ROW).model_copy(update={"coarse_keywords": []})
    result = score_run(log, EvalSet([one]), ScoreConfig(top_k=2, same_source=True))
    v, _, why = verdict(result)
    assert v == Verdict.CHUNK_SPLIT and "chunk 'x', outside the sample's scope, does" in why
