"""Verdicts a team can trust: what the generator saw, fixed denominators, offsets, sources."""

from __future__ import annotations

import pandas as pd

from cofe import (
    Chunk,
    EvalSample,
    Manifest,
    ParsedDocument,
    SampleRecord,
    ScoreConfig,
    SourceRef,
    StageError,
    Verdict,
    score_run,
)
from cofe.evalset import EvalSet
from cofe.runlog import RunLog
from tests.conftest import ranked, recall_at

TEXT = (
    "Super Bowl 50 was played in 2016. The Denver Broncos won the game 24–10. "
    "| table | row | Peyton Manning retired | after it. The halftime show starred Coldplay."
)


def run_log(records, *, chunks=None, docs=None, **manifest) -> RunLog:
    chunks = chunks or {
        "c0": ("d1", "Super Bowl 50 was played in 2016.", 0, 33),
        "c1": ("d1", "The Denver Broncos won the game 24–10.", 34, 72),
    }
    return RunLog(
        path=pd.io.common.Path("memory"),
        manifest=Manifest(run_id="m", **manifest),
        documents={
            d: ParsedDocument(doc_id=d, source=d if "." in d else f"{d}.txt", text=t)
            for d, t in (docs if docs is not None else {"d1": TEXT}).items()
        },
        chunks={
            c: Chunk(chunk_id=c, doc_id=v[0], text=v[1], start=v[2], end=v[3])
            for c, v in chunks.items()
        },
        records={r.sample_id: r for r in records},
    )


def sample(sid="q", fine=(("Denver Broncos",),), source="d1.txt", **extra) -> EvalSample:
    return EvalSample(
        id=sid,
        query="Who won Super Bowl 50?",
        coarse_keywords=["Super Bowl 50"],
        fine_keywords=[list(p) for p in fine],
        reference_answer="The Denver Broncos.",
        source=SourceRef(doc=source) if source else None,
        **extra,
    )


def score(records, samples=None, config=None, **kw):
    return score_run(run_log(records, **kw), EvalSet(samples or [sample()]), config)


def verdict(result, sid="q"):
    row = result.verdicts.set_index("sample_id").loc[sid]
    return row["verdict"], row["stage"], row["explanation"]


# --- nobody guesses what the generator saw ---------------------------------------------------


def long_pool():
    """The answer's chunk at rank 6 of 10; the engine handed all 10 to its generator."""
    chunks = {f"n{i}": ("d1", f"Filler sentence number {i}.", None, None) for i in range(9)}
    chunks["c1"] = ("d1", "The Denver Broncos won the game 24–10.", 34, 72)
    order = [*(f"n{i}" for i in range(5)), "c1", *(f"n{i}" for i in range(5, 9))]
    return chunks, order


def test_a_context_of_ten_is_judged_at_ten_not_at_a_default_four():
    chunks, order = long_pool()
    record = SampleRecord(sample_id="q", pool=ranked(*order), answer="The Denver Broncos.")
    result = score([record], chunks=chunks, top_k=10)
    assert verdict(result)[0] == Verdict.PASS
    assert recall_at(result, "context", "KeywordRecall@10") == 1.0
    assert result.shape["top_k"] == 10 and "manifest" in result.shape["top_k_from"]


def test_an_unknown_context_size_is_said_not_guessed():
    chunks, order = long_pool()
    record = SampleRecord(sample_id="q", pool=ranked(*order), answer="The Denver Broncos.")
    result = score([record], chunks=chunks)  # no context, no top_k in the manifest
    context = result.skipped[result.skipped.step == "context"]
    assert (
        len(context) and context.reason.str.contains("does not record what the generator saw").all()
    )
    assert not (result.scores.step == "context").any()
    assert verdict(result)[0] == Verdict.PASS  # the answer was judged and holds the point
    wrong = SampleRecord(sample_id="q", pool=ranked(*order), answer="Nobody.")
    assert verdict(score([wrong], chunks=chunks))[0] == Verdict.UNSCORABLE


def test_a_context_without_a_pool_never_blames_the_reranker():
    record = SampleRecord(sample_id="q", context=ranked("c0"), answer="x")
    result = score([record], stages=["retrieval", "reranking", "generation"])
    v, stage, _why = verdict(result)
    assert v == Verdict.NOT_RETRIEVED and stage == "retrieval"


def test_a_pipeline_without_a_reranker_is_never_blamed_on_one():
    record = SampleRecord(sample_id="q", pool=ranked("c0", "c1"), context=ranked("c0"), answer="x")
    result = score([record], stages=["parse", "chunking", "retrieval", "generation"])
    assert verdict(result)[:2] == (Verdict.NOT_RETRIEVED, "retrieval")
    assert not result.scores.measure.str.startswith("Rerank").any()


# --- fixed denominators ------------------------------------------------------------------------


def test_every_measure_of_a_step_has_the_same_sample_count_with_pipeline_errors():
    samples = [sample("ok"), sample("boom"), sample("late")]
    records = [
        SampleRecord(sample_id="ok", pool=ranked("c1", "c0"), answer="The Denver Broncos."),
        SampleRecord(
            sample_id="boom",
            error=StageError(stage="retrieval", type="TimeoutError", message="index down"),
        ),
        SampleRecord(
            sample_id="late",
            pool=ranked("c1", "c0"),
            error=StageError(stage="generation", type="RuntimeError", message="LLM down"),
        ),
    ]
    result = score(records, samples, ScoreConfig(top_k=2))
    table = result.summary()
    assert ((table.scored + table.unscored) == 3).all(), table
    pool = table[table.step == "pool"]
    assert (pool.scored == 2).all() and (pool.unscored == 1).all()
    answer = table[table.step == "answer"]
    assert (answer.scored == 1).all() and (answer.unscored == 2).all()
    reasons = result.skipped.set_index("sample_id").reason
    assert reasons.loc["boom"].str.contains("retrieval stage raised TimeoutError").all()
    assert result.error_rates()["retrieval"] == 1 / 3
    verdicts = result.verdicts.set_index("sample_id").verdict
    assert verdicts["boom"] == verdicts["late"] == Verdict.PIPELINE_ERROR


def test_fail_on_error_exits_non_zero_past_the_rate(tmp_path, make_run):
    from cofe.cli import main

    records = [
        SampleRecord(sample_id="a", pool=ranked("result"), answer="Denver Broncos"),
        SampleRecord(sample_id="b", error=StageError(stage="retrieval", type="E", message="x")),
    ]
    samples = [sample("a", source=None), sample("b", source=None)]
    run = make_run(samples, {"result": "Super Bowl 50: the Denver Broncos won."}, records)
    assert main(["score", str(run), "--top-k", "1", "--fail-on-error", "0.6"]) == 0
    assert main(["score", str(run), "--top-k", "1", "--fail-on-error", "0.25"]) == 1


def test_a_run_without_generation_passes_only_as_far_as_it_was_judged():
    record = SampleRecord(sample_id="q", pool=ranked("c1"), context=ranked("c1"))
    result = score([record], stages=["parse", "chunking", "retrieval", "reranking"])
    assert verdict(result)[0] == Verdict.PASS_TO_CONTEXT
    assert not (result.skipped.step == "answer").any()  # the run has no generation step


def test_a_retrieval_only_run_is_judged_at_its_pool_not_at_an_invented_context():
    record = SampleRecord(sample_id="q", pool=ranked("c0", "c1"))
    result = score([record], stages=["parse", "chunking", "retrieval"], top_k=1)
    assert verdict(result)[0] == Verdict.PASS_TO_POOL
    assert "context" not in set(result.scores.step) | set(result.skipped.step)
    assert recall_at(result, "pool", "KeywordRecall@1") == 0.0  # the fact ranked 2nd


# --- chunk offsets: cut or dropped -----------------------------------------------------------


def test_a_keyword_cut_by_a_boundary_is_chunk_split():
    chunks = {
        "a": ("d1", "Super Bowl 50 was played in 2016. The Denver Bro", 0, 49),
        "b": ("d1", "ncos won the game 24–10. | table", 49, 80),
    }
    record = SampleRecord(sample_id="q", pool=ranked("a", "b"), answer="x")
    v, stage, why = verdict(score([record], chunks=chunks, config=ScoreConfig(top_k=2)))
    assert (v, stage) == (Verdict.CHUNK_SPLIT, "chunking")
    assert "cut by a chunk boundary" in why and "inferred" not in why


def test_a_boundary_at_a_space_no_chunk_covers_is_a_cut_not_dropped_text():
    """The default splitter leaves the space between two chunks to neither: "Denver" ends
    one chunk, "Broncos" starts the next. A whitespace-only gap holds no text to drop."""
    chunks = {
        "a": ("d1", "Super Bowl 50 was played in 2016. The Denver", 0, 44),
        "b": ("d1", "Broncos won the game 24–10. | table", 45, 80),
    }
    record = SampleRecord(sample_id="q", pool=ranked("a", "b"), answer="x")
    result = score([record], chunks=chunks, config=ScoreConfig(top_k=2))
    v, stage, why = verdict(result)
    assert (v, stage) == (Verdict.CHUNK_SPLIT, "chunking")
    assert "cut by a chunk boundary" in why and "no chunk covers" not in why
    assert result.points.dropped_keywords.isna().all()


def test_a_stopword_only_keyword_leaves_the_rest_of_its_point_scored():
    """A table row label such as "Other" is a bad label; its figure still has to be found."""
    s = sample(fine=(("other", "Denver Broncos"),))
    record = SampleRecord(sample_id="q", pool=ranked("c0", "c1"), answer="The Denver Broncos.")
    result = score([record], [s], ScoreConfig(top_k=2))
    v, _, _ = verdict(result)
    assert v == Verdict.PASS
    assert result.points.keywords.tolist() == ["Denver Broncos"]
    problem = next(p for p in result.problems if "'other'" in p.message)
    assert problem.field == "fine_keywords[0][0]"
    assert "the point is scored with its other keywords" in problem.message
    # a point of bad labels only is still unscored, and says so
    alone = sample(fine=(("other",),))
    result = score([record], [alone], ScoreConfig(top_k=2))
    assert verdict(result)[0] == Verdict.UNSCORABLE


def test_a_derived_context_chunk_does_not_hide_a_cut_by_the_chunker():
    """A sentence window (derived from chunk a, no offsets) holds the whole keyword, but the
    chunker cut it: chunking is judged on the chunker's chunks, and still by offsets."""
    chunks = {
        "a": ("d1", "Super Bowl 50 was played in 2016. The Denver Bro", 0, 49),
        "b": ("d1", "ncos won the game 24–10. | table", 49, 80),
    }
    log = run_log(
        [SampleRecord(sample_id="q", pool=ranked("a", "b"), context=ranked("a~w"), answer="x")],
        chunks=chunks,
    )
    log.chunks["a~w"] = Chunk(
        chunk_id="a~w",
        doc_id="d1",
        kind="replaced",
        derived_from=["a"],
        text="Super Bowl 50 was played in 2016. The Denver Broncos won.",
    )
    v, stage, why = verdict(score_run(log, EvalSet([sample()])))
    assert (v, stage) == (Verdict.CHUNK_SPLIT, "chunking")
    assert "cut by a chunk boundary" in why and "inferred" not in why


def test_text_no_chunk_covers_is_chunk_dropped():
    """The chunker skipped the table: 'Peyton Manning' is in the parsed text, in no chunk."""
    s = sample(fine=(("Peyton Manning",),))
    record = SampleRecord(sample_id="q", pool=ranked("c0", "c1"), answer="x")
    result = score([record], [s], ScoreConfig(top_k=2))
    v, stage, why = verdict(result)
    assert (v, stage) == (Verdict.CHUNK_DROPPED, "chunking")
    assert "no chunk covers" in why
    assert result.points.dropped_keywords.tolist() == ["Peyton Manning"]


def test_without_offsets_the_cut_is_said_to_be_inferred():
    chunks = {
        "a": ("d1", "Super Bowl 50 was played in 2016. The Denver Bro", None, None),
        "b": ("d1", "ncos won the game 24–10.", None, None),
    }
    record = SampleRecord(sample_id="q", pool=ranked("a", "b"), answer="x")
    v, _, why = verdict(score([record], chunks=chunks, config=ScoreConfig(top_k=2)))
    assert v == Verdict.CHUNK_SPLIT and "inferred" in why


# --- sources --------------------------------------------------------------------------------


def test_a_source_naming_several_documents_is_reported_not_widened():
    docs = {"report.pdf": TEXT, "report.docx": TEXT}
    chunks = {"c1": ("report.pdf", "The Denver Broncos won the game 24–10.", 34, 72)}
    record = SampleRecord(sample_id="q", pool=ranked("c1"), answer="The Denver Broncos")
    s = sample(source="report")
    result = score([record], [s], ScoreConfig(top_k=1), chunks=chunks, docs=docs)
    problems = [p for p in result.problems if p.field == "source.doc"]
    assert problems and "several documents" in problems[0].message
    parse = result.skipped[result.skipped.step == "parse"]
    assert parse.reason.str.contains("several documents").all()
    doc_recall = result.skipped[result.skipped.measure == "DocRecall@1"]
    assert len(doc_recall) == 2  # pool and context, each with the reason


def test_same_source_uses_the_recorded_span():
    s = sample()
    s = s.model_copy(update={"source": SourceRef(doc="d1.txt", start=0, end=33)})
    record = SampleRecord(sample_id="q", pool=ranked("c1"), answer="The Denver Broncos")
    loose = score([record], [s], ScoreConfig(top_k=1))
    inside = score([record], [s], ScoreConfig(top_k=1, same_source=True))
    assert recall_at(loose, "pool", "KeywordRecall@1") == 1.0
    assert recall_at(inside, "pool", "KeywordRecall@1") == 0.0  # c1 lies outside the span


# --- labels ------------------------------------------------------------------------------------


def test_a_bad_alternative_does_not_claim_its_point_is_dropped():
    from cofe.evalset import AnyOf

    s = sample(fine=((AnyOf(any_of=["Denver Broncos", "the"]),),))
    record = SampleRecord(sample_id="q", pool=ranked("c1"), answer="Denver Broncos")
    result = score([record], [s], ScoreConfig(top_k=1))
    (problem,) = [p for p in result.problems if "bad label" in p.message]
    assert "point is scored with its other alternatives" in problem.message
    assert recall_at(result, "answer", "KeywordRecall") == 1.0
