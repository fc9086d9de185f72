"""Derived context items (summaries, entities, relations) and refusals, scored stage by stage."""

from __future__ import annotations

import filecmp

import pytest

from cofe import Chunk, SampleRecord, ScoreConfig, Verdict, score_run
from cofe.evalset import EvalSet, QueryType
from cofe.stages._stream import score_to_folder
from tests.conftest import ranked, recall_at
from tests.stages.test_trust import run_log, sample, verdict

TWO_DOCS = {
    "d1": "Super Bowl 50 was played in 2016. The Denver Broncos won the game 24–10.",
    "d2": "The halftime show starred Coldplay.",
}
CHUNKS = {
    "c0": ("d1", "Super Bowl 50 was played in 2016.", 0, 33),
    "c1": ("d1", "The Denver Broncos won the game 24–10.", 34, 72),
    "c2": ("d2", "The halftime show starred Coldplay.", 0, 35),
}


def scored(records, derived, samples=None, config=None):
    log = run_log(records, chunks=CHUNKS, docs=TWO_DOCS)
    for item in derived:
        log.chunks[item.chunk_id] = item
    return score_run(log, EvalSet(samples or [sample()]), config)


def summary(text, *sources, ident="s1", kind="summary", doc="(derived)"):
    return Chunk(chunk_id=ident, doc_id=doc, text=text, kind=kind, derived_from=list(sources))


def test_a_summary_whose_source_holds_the_point_but_whose_text_does_not_is_a_derivation_loss():
    lossy = summary("Super Bowl 50 took place in 2016 and was won 24–10.", "c0", "c1")
    record = SampleRecord(sample_id="q", pool=ranked("s1"), context=ranked("s1"), answer="x")
    result = scored([record], [lossy])
    v, stage, why = verdict(result)
    assert (v, stage) == (Verdict.DERIVATION_LOST, "retrieval")
    assert "'s1' was built from chunk 'c1', which holds the point" in why
    assert recall_at(result, "corpus", "KeywordRecall") == 1.0  # the corpus never lost it
    assert result.points.lost_at.tolist() == ["retrieval"]


def test_a_summary_that_holds_the_point_loses_nothing():
    faithful = summary("In 2016 the Denver Broncos won Super Bowl 50, 24–10.", "c0", "c1")
    record = SampleRecord(
        sample_id="q", pool=ranked("s1"), context=ranked("s1"), answer="The Denver Broncos won."
    )
    result = scored([record], [faithful])
    assert verdict(result)[0] == Verdict.PASS
    assert recall_at(result, "context", "KeywordRecall@1") == 1.0


def test_a_summary_of_summaries_is_traced_to_the_leaf_through_the_tree():
    level0 = summary("The Broncos won 24–10.", "c1", ident="s0")
    level1 = summary("A game was played in 2016.", "s0", "c0", ident="s1")
    record = SampleRecord(sample_id="q", pool=ranked("s1"), context=ranked("s1"), answer="x")
    v, _, why = verdict(scored([record], [level0, level1]))
    assert v == Verdict.DERIVATION_LOST and "from chunk 'c1'" in why


def test_a_relation_built_from_another_document_is_not_a_derivation_loss():
    """The relation's sources never held the point: an ordinary miss by the retriever."""
    relation = summary("Coldplay -> starred in -> halftime show", "c2", kind="relation")
    record = SampleRecord(sample_id="q", pool=ranked("s1"), context=ranked("s1"), answer="x")
    assert verdict(scored([record], [relation]))[0] == Verdict.NOT_RETRIEVED


def test_a_reranker_that_drops_the_leaf_and_keeps_a_lossy_summary_cut_it():
    lossy = summary("Super Bowl 50 took place in 2016.", "c0", "c1")
    record = SampleRecord(sample_id="q", pool=ranked("c1", "s1"), context=ranked("s1"), answer="x")
    result = scored([record], [lossy], config=ScoreConfig(top_k=1))
    assert verdict(result)[0] == Verdict.CUT_BY_RERANK


def test_document_measures_of_a_derived_item_use_its_leaves():
    """A summary has no document of its own; it came from d1 (the source): DocPrecision 1. The
    corpus' chunks of d1 are the chunker's two, not the summary (nDCG's ideal ranking)."""
    faithful = summary("The Denver Broncos won Super Bowl 50.", "c0", "c1")
    mixed = summary("Broncos and Coldplay.", "c1", "c2", ident="s2")
    record = SampleRecord(
        sample_id="q",
        pool=ranked("s1", "s2"),
        context=ranked("s1", "s2"),
        answer="The Denver Broncos",
    )
    result = scored([record], [faithful, mixed], config=ScoreConfig(top_k=2))
    assert recall_at(result, "context", "DocPrecision@2") == 1.0  # s2 came from d1 too
    assert recall_at(result, "context", "DocRecall@2") == 1.0
    assert recall_at(result, "context", "nDCG@2") == 1.0  # 2 relevant of the 2 chunks of d1
    corpus = result.scores[(result.scores.step == "corpus")]
    assert set(corpus.measure) >= {"KeywordRecall", "ChunkIntegrity"}


def test_a_derived_item_of_documents_out_of_scope_does_not_count():
    """Same-source scoring: a summary built only from d2 is filtered out, like d2's chunks."""
    other = summary("The Denver Broncos, and the halftime show with Coldplay.", "c2")
    record = SampleRecord(sample_id="q", pool=ranked("s1"), context=ranked("s1"), answer="x")
    result = scored([record], [other], config=ScoreConfig(same_source=True))
    assert recall_at(result, "context", "KeywordRecall@1") == 0.0


# --- refusals --------------------------------------------------------------------------------

ANSWERS = {
    "en": "I am unable to answer this question from the provided context.",
    "zh": "无法回答，上下文中没有提供相关信息。",
    "right": "The Denver Broncos won.",
    "wrong": "The Carolina Panthers won.",
}


def _refusal_run():
    samples = [
        sample(
            sid, query_type=QueryType.FACTUAL if sid in ("en", "right") else QueryType.ANALYTICAL
        )
        for sid in ANSWERS
    ]
    records = [
        SampleRecord(
            sample_id=sid, pool=ranked("c0", "c1"), context=ranked("c0", "c1"), answer=answer
        )
        for sid, answer in ANSWERS.items()
    ]
    return records, samples


def test_refusals_in_english_and_chinese_are_their_own_verdict_and_rate():
    records, samples = _refusal_run()
    result = scored(records, [], samples)
    verdicts = result.verdicts.set_index("sample_id")
    assert verdicts.loc[["en", "zh"], "verdict"].tolist() == [Verdict.REFUSED] * 2
    assert verdicts.loc[["en", "zh"], "stage"].tolist() == ["generation"] * 2
    assert '"无法回答"' in verdicts.at["zh", "refusal"]
    assert verdicts.loc["right", "verdict"] == Verdict.PASS
    assert verdicts.loc["wrong", "verdict"] == Verdict.NOT_IN_ANSWER
    assert verdicts["refusal"].isna().tolist() == [False, False, True, True]
    view = result.view()
    both = {"context_held": 2, "context_lacked": 0}  # the context held every point
    assert view.refusal_rates() == {"answered": 4, "refused": 2, "rate": 0.5, **both}
    by_type = view.refusal_rates(by_query_type=True)
    one = {"answered": 2, "refused": 1, "rate": 0.5, "context_held": 1, "context_lacked": 0}
    assert by_type["factual"] == one
    assert by_type["analytical"] == one
    assert result.to_dict()["refusals"]["overall"]["refused"] == 2


def test_answer_measures_are_reported_over_all_and_over_answered_samples_side_by_side():
    records, samples = _refusal_run()
    table = scored(records, [], samples).summary().set_index(["step", "measure"])
    row = table.loc[("answer", "KeywordRecall")]
    assert (row["mean"], row["scored"]) == (0.25, 4)  # the refusals count as misses
    assert (row["answered_mean"], row["answered_scored"]) == (0.5, 2)  # and here they do not
    assert table.loc[("context", "KeywordRecall@2"), "answered_scored"] == 0  # answer step only


def test_a_refusal_after_an_earlier_loss_keeps_the_earlier_verdict_but_counts_as_refused():
    record = SampleRecord(
        sample_id="q", pool=ranked("c0"), context=ranked("c0"), answer="I don't know."
    )
    result = scored([record], [])
    assert verdict(result)[0] == Verdict.NOT_RETRIEVED
    assert result.view().refusal_rates()["refused"] == 1


def test_the_streaming_scorer_writes_the_same_derivations_and_refusals(tmp_path, make_run):
    records, samples = _refusal_run()
    records.append(
        SampleRecord(sample_id="lossy", pool=ranked("s1"), context=ranked("s1"), answer="x")
    )
    samples.append(sample("lossy", source=None))
    chunks = {c: (d, t) for c, (d, t, _, _) in CHUNKS.items()}
    run = make_run(samples, chunks, records, docs=TWO_DOCS)
    with (run / "chunks.jsonl").open("a") as out:
        out.write(summary("Super Bowl 50 took place in 2016.", "c0", "c1").model_dump_json() + "\n")
    whole = score_run(run).write(tmp_path / "whole")
    _, streamed = score_to_folder(run, out=tmp_path / "streamed", batch_size=2)
    for name in ["scores.csv", "verdicts.jsonl", "points.csv", "summary.json"]:
        assert filecmp.cmp(whole / name, streamed / name, shallow=False), name
    assert "derivation_lost" in (whole / "verdicts.jsonl").read_text()


@pytest.mark.parametrize("kind", ["entity", "relation", "community_report"])
def test_every_derived_kind_is_kept_out_of_the_chunking_stage(kind):
    """An entity holding the whole keyword does not hide a chunk boundary that cut it."""
    chunks = {
        "a": ("d1", "Super Bowl 50 was played in 2016. The Denver Bro", 0, 49),
        "b": ("d1", "ncos won the game 24–10.", 49, 73),
    }
    log = run_log(
        [SampleRecord(sample_id="q", pool=ranked("a", "b"), context=ranked("e"), answer="x")],
        chunks=chunks,
    )
    log.chunks["e"] = Chunk(
        chunk_id="e", doc_id="d1", kind=kind, derived_from=["a", "b"], text="Denver Broncos"
    )
    v, stage, _ = verdict(score_run(log, EvalSet([sample()])))
    assert (v, stage) == (Verdict.CHUNK_SPLIT, "chunking")
