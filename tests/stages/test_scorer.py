"""Each verdict on a small hand-built run, and scoring that survives bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cofe import EvalSample, SampleRecord, ScoreConfig, SourceRef, StageError, Verdict, score_run
from cofe.stages import SCORE_FILES
from tests.conftest import ranked, recall_at

DOC = (
    "Super Bowl 50 was an American football game. The Denver Broncos defeated the "
    "Carolina Panthers 24–10 in Super Bowl 50. Super Bowl 50 was played on February 7, 2016."
)
CHUNKS = {
    "intro": "Super Bowl 50 was an American football game.",
    "result": "The Denver Broncos defeated the Carolina Panthers 24–10 in Super Bowl 50.",
    "date": "Super Bowl 50 was played on February 7, 2016.",
    "noise": "The Denver Broncos are a team from Colorado.",  # no coarse keyword
}


def sample(sample_id="q", fine=(("Denver Broncos",), ("24–10",)), **extra) -> EvalSample:
    return EvalSample(
        id=sample_id,
        query="Who won Super Bowl 50 and by how much?",
        coarse_keywords=["Super Bowl 50"],
        fine_keywords=[list(p) for p in fine],
        reference_answer="The Denver Broncos won 24–10.",
        source=SourceRef(doc="d1.txt"),
        **extra,
    )


def verdict_of(result, sample_id="q"):
    row = result.verdicts.set_index("sample_id").loc[sample_id]
    return row["verdict"], row["explanation"]


def run_one(make_run, record, chunks=CHUNKS, docs=None, config=None, samples=None):
    run = make_run(
        samples or [sample()], chunks, [record], docs={"d1": DOC} if docs is None else docs
    )
    return score_run(run, config=config or ScoreConfig(top_k=2))


def test_pass(make_run):
    record = SampleRecord(
        sample_id="q",
        pool=ranked("result", "intro"),
        context=ranked("result"),
        answer="The Denver Broncos, 24–10.",
    )
    result = run_one(make_run, record)
    assert verdict_of(result)[0] == Verdict.PASS
    assert recall_at(result, "answer", "KeywordRecall") == 1.0
    assert recall_at(result, "context", "KeywordRecall@2") == 1.0


def test_parse_lost(make_run):
    doc = DOC.replace("24–10", "")  # the parser dropped the score (say, a table)
    record = SampleRecord(
        sample_id="q", pool=ranked("result"), context=ranked("result"), answer="Broncos"
    )
    verdict, why = verdict_of(run_one(make_run, record, docs={"d1": doc}))
    assert verdict == Verdict.PARSE_LOST and "24–10" in why and "'d1'" in why


def test_chunk_split_by_a_boundary(make_run):
    chunks = {
        "a": "The Denver Bron",
        "b": "cos defeated the Carolina Panthers 24–10 in Super Bowl 50.",
    }
    record = SampleRecord(sample_id="q", pool=ranked("b", "a"), context=ranked("b"), answer="x")
    result = run_one(make_run, record, chunks=chunks)
    verdict, why = verdict_of(result)
    assert verdict == Verdict.CHUNK_SPLIT and "cut by a chunk boundary" in why
    points = result.points.set_index("point")
    assert bool(points.loc[0, "parse"]) and not bool(points.loc[0, "corpus"])
    assert points.loc[0, "lost_at"] == "chunking" and points.loc[1, "lost_at"] == "generation"
    assert points.loc[0, "cut_keywords"] == "Denver Broncos" and pd.isna(
        points.loc[1, "cut_keywords"]
    )


def test_a_chunk_that_never_names_the_entity_is_a_risk_not_a_loss(make_run):
    """The only chunk with the answer does not repeat the entity ("Super Bowl 50").

    Its document names the entity, so by default (coarse keywords scoped to the
    document) the retrieved chunk counts and the case passes; the unanchored fact is
    reported as a chunking risk. The reference's chunk-level filter calls it a loss.
    """
    s = sample(fine=(("Colorado",),))
    record = SampleRecord(
        sample_id="q", pool=ranked("noise"), context=ranked("noise"), answer="Colorado"
    )
    docs = {"d1": DOC + " The Denver Broncos are a team from Colorado."}
    result = run_one(make_run, record, docs=docs, samples=[s])
    assert verdict_of(result)[0] == Verdict.PASS
    assert recall_at(result, "corpus", "EntityAnchoring") == 0.0
    assert result.findings()["held_only_by_chunks_not_naming_the_entity"] == 1
    assert result.findings()["of_those_in_the_context"] == 1
    chunk_scope = run_one(
        make_run, record, docs=docs, samples=[s], config=ScoreConfig(top_k=2, coarse_scope="chunk")
    )
    verdict, why = verdict_of(chunk_scope)
    assert verdict == Verdict.CHUNK_UNANCHORED and "do not name the entity" in why


def test_a_document_that_never_names_the_entity_is_out_of_scope(make_run):
    """Fine keywords found only in another document, about something else, do not count."""
    chunks = {**CHUNKS, "elsewhere": ("d2", "Colorado is a state of the United States.")}
    s = sample(fine=(("Colorado",),))
    s = s.model_copy(update={"source": None})
    record = SampleRecord(sample_id="q", pool=ranked("elsewhere"), answer="Colorado")
    result = run_one(make_run, record, chunks=chunks, docs={}, samples=[s])
    assert recall_at(result, "pool", "KeywordRecall@1") == 0.0
    off = run_one(
        make_run,
        record,
        chunks=chunks,
        docs={},
        samples=[s],
        config=ScoreConfig(top_k=2, coarse_scope="off"),
    )
    assert recall_at(off, "pool", "KeywordRecall@1") == 1.0


def test_coarse_keywords_match_number_inflections(make_run):
    chunks = {"c": ("d9", "The teachers of the school went on strike in 1990.")}
    s = EvalSample(
        id="q",
        query="When did the teacher strike?",
        coarse_keywords=["Teacher"],
        fine_keywords=[["1990"]],
    )
    record = SampleRecord(sample_id="q", pool=ranked("c"), answer="1990")
    result = run_one(
        make_run,
        record,
        chunks=chunks,
        docs={},
        samples=[s],
        config=ScoreConfig(top_k=1, coarse_scope="chunk"),
    )
    assert recall_at(result, "pool", "KeywordRecall@1") == 1.0
    assert recall_at(result, "pool", "CoarsePrecision@1") == 1.0


def test_not_retrieved(make_run):
    record = SampleRecord(
        sample_id="q", pool=ranked("intro", "date", "noise"), context=ranked("intro"), answer="x"
    )
    result = run_one(make_run, record)
    verdict, why = verdict_of(result)
    assert verdict == Verdict.NOT_RETRIEVED and "not in the pool" in why
    assert "chunk 'result' holds the whole point" in why
    # 'noise' names the Broncos too: its document is about Super Bowl 50, so it counts
    assert recall_at(result, "pool", "KeywordRecall@3") == 0.5
    assert recall_at(result, "pool", "CoarsePrecision@2") == 1.0
    assert recall_at(result, "corpus", "KeywordRecall") == 1.0


def test_cut_by_rerank(make_run):
    record = SampleRecord(
        sample_id="q",
        pool=ranked("date", "intro", "result"),
        # reordered: a reranker ran (the run does not say; a context that is only the pool's
        # first items would be a plain top-K cut, tests/stages/test_topk_cut_is_not_a_reranker)
        context=ranked("intro", "date"),
        answer="x",
    )
    result = run_one(make_run, record)
    verdict, why = verdict_of(result)
    assert verdict == Verdict.CUT_BY_RERANK and "pool rank 3" in why
    assert recall_at(result, "context", "RerankLoss@2") == 1.0
    assert recall_at(result, "context", "RerankGain@2") == 0.0
    assert result.points.pool_rank.tolist() == [3, 3]


def test_not_in_answer(make_run):
    record = SampleRecord(
        sample_id="q",
        pool=ranked("result"),
        context=ranked("result"),
        answer="The Denver Broncos won.",
    )
    result = run_one(make_run, record)
    verdict, why = verdict_of(result)
    assert verdict == Verdict.NOT_IN_ANSWER and "24–10" in why and "Denver" not in why
    assert recall_at(result, "answer", "KeywordRecall") == 0.5


def test_without_a_reranker_the_context_is_the_pools_top_k(make_run):
    record = SampleRecord(
        sample_id="q",
        pool=ranked("intro", "date", "result"),
        answer="The Denver Broncos won 24–10.",
    )
    result = run_one(make_run, record)
    assert not result.scores.measure.str.startswith("Rerank").any()
    verdict, why = verdict_of(result)
    assert verdict == Verdict.NOT_RETRIEVED and "below the cutoff 2" in why
    assert result.verdicts.stage.tolist() == ["retrieval"]  # never the absent reranker
    assert recall_at(result, "pool", "KeywordRecall@3") == 1.0
    assert recall_at(result, "pool", "KeywordRecall@2") == 0.0
    assert recall_at(result, "context", "KeywordRecall@2") == 0.0


def test_pipeline_error_after_no_loss_and_loss_before_the_error(make_run):
    error = StageError(stage="generation", type="TimeoutError", message="LLM timed out")
    ok = SampleRecord(sample_id="q", pool=ranked("result"), context=ranked("result"), error=error)
    verdict, why = verdict_of(run_one(make_run, ok))
    assert verdict == Verdict.PIPELINE_ERROR and "TimeoutError" in why
    lost = SampleRecord(sample_id="q", pool=ranked("intro"), context=ranked("intro"), error=error)
    assert verdict_of(run_one(make_run, lost))[0] == Verdict.NOT_RETRIEVED


def test_unscorable_samples_say_why(make_run):
    samples = [
        sample("no-keywords", fine=()),
        sample("bad-labels", fine=(("!!!",), ("the",))),
        sample("no-record"),
    ]
    records = [
        SampleRecord(sample_id=s, pool=ranked("result"), answer="x")
        for s in ("no-keywords", "bad-labels")
    ]
    run = make_run(samples, CHUNKS, records, docs={"d1": DOC})
    result = score_run(run)
    verdicts = result.verdicts.set_index("sample_id")
    assert set(verdicts.verdict) == {Verdict.UNSCORABLE}
    assert verdicts.loc["no-keywords", "explanation"] == "no fine keywords"
    assert "normalises to nothing" in verdicts.loc["bad-labels", "explanation"]
    assert "did not answer" in verdicts.loc["no-record", "explanation"]
    # bad labels are also input problems naming the eval-set file, line and field
    bad = [p for p in result.problems if "bad label" in p.message]
    assert {(p.line, p.field) for p in bad} == {
        (2, "fine_keywords[0][0]"),
        (2, "fine_keywords[1][0]"),
    }
    assert all(p.file.endswith("evalset.jsonl") for p in bad)
    assert result.scores.empty and result.to_dict()["samples"]["unscorable"] == 3


def test_bad_run_lines_are_reported_and_the_rest_is_scored(make_run, tmp_path):
    s1, s2 = sample("q1"), sample("q2")
    records = [SampleRecord(sample_id="q1", pool=ranked("result"), answer="Denver Broncos 24–10")]
    run = make_run([s1, s2], CHUNKS, records, docs={"d1": DOC})
    with (run / "samples.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"sample_id": "q2", "pool": [{"chunk_id": "result", "score": "high"}]}\n')
        handle.write('{"sample_id": "stranger", "pool": [{"chunk_id": "nope"}]}\n')
        handle.write('{"sample_id": "q1", "pool": [{"chunk_id": "resu')  # torn by a crash
    result = score_run(run, config=ScoreConfig(top_k=2))
    messages = [str(p) for p in result.problems]
    assert any(m.startswith(f"{run / 'samples.jsonl'}:2: pool.0.score:") for m in messages)
    assert any(":4:" in m and "interrupted" in m for m in messages)
    assert any("'stranger' is not in the eval set" in m for m in messages)
    verdicts = result.verdicts.set_index("sample_id").verdict
    assert verdicts["q1"] == Verdict.PASS and verdicts["q2"] == Verdict.UNSCORABLE


def test_unknown_chunk_ids_and_changed_evalset_are_reported(make_run):
    record = SampleRecord(
        sample_id="q", pool=ranked("ghost", "result"), answer="Denver Broncos 24–10"
    )
    run = make_run([sample()], CHUNKS, [record], docs={"d1": DOC})
    changed = sample().model_copy(update={"reference_answer": "edited after the run"})
    (run / "evalset.jsonl").write_text(changed.model_dump_json() + "\n", encoding="utf-8")
    result = score_run(run, config=ScoreConfig(top_k=2))
    assert any("differs from the one the run answered" in p.message for p in result.problems)
    # an id the corpus lacks makes the ranked steps unscorable, never a miss
    pool_rows = result.skipped[result.skipped.step == "pool"]
    assert len(pool_rows) and pool_rows.reason.str.contains("'ghost'").all()
    assert not (result.scores.step == "pool").any()
    assert result.points.pool_rank.isna().all()
    assert verdict_of(result)[0] == Verdict.PASS  # the answer was judged and holds both points


def test_written_files_and_summary(make_run, tmp_path):
    record = SampleRecord(
        sample_id="q",
        pool=ranked("result", "intro"),
        context=ranked("result"),
        answer="Denver Broncos 24–10",
        latency={"retrieval": 0.01, "generation": 0.5},
    )
    result = run_one(make_run, record)
    out = result.write(tmp_path / "scores")
    assert all((out / name).exists() for name in SCORE_FILES)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdicts"]["overall"] == {"pass": 1}
    assert summary["waterfall"]["overall"]["answer"] == 1.0
    assert {r["stage"] for r in summary["latency_seconds"]} == {"retrieval", "generation"}
    lines = (out / "verdicts.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["verdict"] == "pass"


def test_same_source_filter(make_run):
    chunks = {**CHUNKS, "other": ("d2", "Super Bowl 50: the Denver Broncos won 24–10.")}
    record = SampleRecord(sample_id="q", pool=ranked("other"), answer="x")
    loose = run_one(make_run, record, chunks=chunks)
    strict = run_one(make_run, record, chunks=chunks, config=ScoreConfig(top_k=2, same_source=True))
    assert recall_at(loose, "pool", "KeywordRecall@2") == 1.0
    assert recall_at(strict, "pool", "KeywordRecall@2") == 0.0
    assert recall_at(strict, "pool", "DocRecall@2") == 0.0


@pytest.mark.parametrize("fuzzy, expected", [(None, 0.0), (0.15, 1.0)])
def test_fuzzy_matching(make_run, fuzzy, expected):
    chunks = {"typo": "In Super Bowl 50 the Denvr Broncos beat Carolina 24–10."}
    record = SampleRecord(sample_id="q", pool=ranked("typo"), answer="x")
    result = run_one(
        make_run, record, chunks=chunks, docs={}, config=ScoreConfig(top_k=2, fuzzy=fuzzy)
    )
    assert recall_at(result, "pool", "KeywordRecall@1") == pytest.approx(0.5 + expected / 2)


def test_parallel_scoring_equals_serial_scoring():
    from benchmarks._synthetic import make_run

    run, evalset = make_run(4_500, seed=3)
    serial = score_run(run, evalset, workers=1)
    parallel = score_run(run, evalset, workers=2)  # three slices over two processes
    for name in ("scores", "points", "verdicts", "skipped", "recalls"):
        pd.testing.assert_frame_equal(getattr(serial, name), getattr(parallel, name))
    assert len(serial.scores) > 50_000


def test_rouge_uses_words_in_both_matching_modes(make_run):
    """cofe-rag's glued normal form must not leak into ROUGE's tokens."""
    record = SampleRecord(
        sample_id="q",
        pool=ranked("result"),
        context=ranked("result"),
        answer="The Denver Broncos won 24–10.",
    )
    strict = run_one(make_run, record)
    reference = run_one(make_run, record, config=ScoreConfig(top_k=2, mode="cofe-rag"))
    for step, measure in (
        ("context", "RougeLRecall@2"),
        ("answer", "RougeL"),
        ("answer", "BLEU"),
    ):
        assert recall_at(strict, step, measure) == recall_at(reference, step, measure) > 0.5


def test_an_empty_eval_set_is_reported_not_silently_scored(make_run):
    run = make_run([], CHUNKS, [])
    result = score_run(run)
    assert result.verdicts.empty and result.scores.empty
    assert any("holds no sample" in p.message for p in result.problems)
    assert result.to_dict()["samples"] == {
        "in_evalset": 0,
        "scored": 0,
        "unscorable": 0,
        "pipeline_error": 0,
    }
