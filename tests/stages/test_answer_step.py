"""The answer step: a point is in the answer when the answer conveys it, and what decided."""

from pathlib import Path

import pytest

from cofe import score_run
from cofe.evalset import EvalSample, write_evalset
from cofe.matching import DecidedBy, Decision
from cofe.runlog import (
    Chunk,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunWriter,
    SampleRecord,
    read_run,
)
from cofe.stages import ScoreConfig
from cofe.stages._context import RunContext
from cofe.stages.generation import judge_answer

PARAGRAPH = (
    "The Daleks were created by the writer Terry Nation. The story was first broadcast on "
    "21 December 1963, and each episode ran 25 minutes. The programme's current annual budget "
    "is $155,756 per episode, and machines can't replicate its charm."
)
QUESTION = "Who created the Daleks and how long did each episode run?"
POINTS = [["Terry Nation"], ["each episode ran 25 minutes"]]


def make_run(folder: Path, answers: dict[str, str], points=POINTS) -> Path:
    samples = [
        EvalSample(
            id=sid,
            query=QUESTION,
            coarse_keywords=["Daleks"],
            fine_keywords=points[sid] if isinstance(points, dict) else points,
            source={"doc": "daleks.txt"},
        )
        for sid in answers
    ]
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(
            run_id="answers", top_k=1, stages=["parse", "chunking", "retrieval", "generation"]
        ),
        evalset,
    )
    writer.add_documents([ParsedDocument(doc_id="daleks", source="daleks.txt", text=PARAGRAPH)])
    writer.add_chunks([Chunk(chunk_id="c0", doc_id="daleks", text=PARAGRAPH)])
    writer.add_samples(
        SampleRecord(sample_id=sid, pool=[RankedChunk(chunk_id="c0", score=1.0)], answer=text)
        for sid, text in answers.items()
    )
    return folder


ANSWERS = {
    # a paraphrase conveying both points: nothing verbatim but the name
    "paraphrase": "Terry Nation wrote them; every episode lasted twenty-five minutes.",
    # one point conveyed, the other with no trace at all
    "lacks": "They were written by Terry Nation.",
    # the second point only partly there: the matcher cannot tell
    "open": "Terry Nation created them, and the episodes were short.",
    # another value for the same unit
    "wrong": "Terry Nation created them; each episode ran 45 minutes.",
    # an extractive answer: a sentence of its context, lacking the point as written
    "copied": "The story was first broadcast on 21 December 1963, and each episode ran 25 minutes.",
}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("answers") / "run", ANSWERS)
    return run, score_run(run)


def _decisions(result, sample_id):
    rows = result.points[result.points.sample_id == sample_id].sort_values("point")
    return list(zip(rows.answer_decision, rows.answer_rule, strict=True))


def test_a_paraphrase_conveys_its_points_and_passes(scored):
    _, result = scored
    assert _decisions(result, "paraphrase") == [("present", "verbatim"), ("present", "paraphrase")]
    verdicts = result.verdicts.set_index("sample_id")
    assert verdicts.loc["paraphrase", "verdict"] == "pass"
    answer = (
        result.scores[(result.scores.sample_id == "paraphrase") & (result.scores.step == "answer")]
        .set_index("measure")
        .value
    )
    assert answer["PointRecall"] == 1.0
    assert answer["KeywordRecall"] == 0.5  # the lexical measure stays what it was


def test_an_absent_point_is_blamed_with_the_rule_that_decided(scored):
    _, result = scored
    assert _decisions(result, "lacks")[1] == ("absent", "paraphrase")
    verdict = result.verdicts.set_index("sample_id").loc["lacks"]
    assert verdict.verdict == "not_in_answer" and verdict.stage == "generation"
    assert "paraphrase matching" in verdict.explanation


def test_an_undecided_point_is_never_blamed(scored):
    _, result = scored
    assert _decisions(result, "open")[1] == ("undecided", "paraphrase")
    verdict = result.verdicts.set_index("sample_id").loc["open"]
    assert verdict.verdict == "pass_to_context" and pd_na(verdict.stage)
    assert "undecided" in verdict.explanation and "cofe judge" in verdict.explanation
    # PointRecall counts only the settled point; the waterfall's answer row likewise
    scores = result.scores[(result.scores.sample_id == "open") & (result.scores.step == "answer")]
    assert scores.set_index("measure").value["PointRecall"] == 1.0
    recall = result.recalls[
        (result.recalls.sample_id == "open") & (result.recalls.step == "answer")
    ]
    assert recall.value.tolist() == [1.0]
    lost = result.points[result.points.sample_id == "open"].lost_at
    assert lost.isna().all()


def pd_na(value) -> bool:
    import pandas as pd

    return value is None or pd.isna(value)


def test_another_value_is_absent_and_says_so(scored):
    _, result = scored
    assert _decisions(result, "wrong")[1] == ("absent", "paraphrase")
    verdict = result.verdicts.set_index("sample_id").loc["wrong"]
    assert verdict.verdict == "not_in_answer" and "45 minutes" in verdict.explanation


def test_an_answer_copying_its_context_is_judged_as_written(scored):
    _, result = scored
    # "Terry Nation" is not in the copied sentence; it did not paraphrase, so it lacks it
    assert _decisions(result, "copied")[0] == ("absent", "verbatim")
    verdict = result.verdicts.set_index("sample_id").loc["copied"]
    assert (
        verdict.verdict == "not_in_answer"
        and "copies its context or source sentence for sentence" in verdict.explanation
    )


def test_every_point_undecided_leaves_point_recall_unscored_with_the_reason(tmp_path):
    run = make_run(
        tmp_path / "run",
        {"open": "The episodes were short."},
        points=[["each episode ran 25 minutes"]],
    )
    result = score_run(run)
    skipped = result.skipped[
        (result.skipped.step == "answer") & (result.skipped.measure == "PointRecall")
    ]
    assert len(skipped) == 1 and "cofe judge" in skipped.reason.iloc[0]
    assert result.recalls[result.recalls.step == "answer"].empty


def test_verbatim_matching_is_the_old_rule(scored):
    run, _ = scored
    result = score_run(run, config=ScoreConfig(answer_match="verbatim"))
    verdicts = result.verdicts.set_index("sample_id").verdict
    assert (verdicts[list(ANSWERS)] == "not_in_answer").all()
    assert _decisions(result, "paraphrase")[1] == ("absent", "verbatim")


def test_judge_labels_settle_what_the_words_did_not_show_conveyed(tmp_path):
    run = make_run(tmp_path / "run", ANSWERS)
    log = read_run(run)
    from cofe.evalset import read_evalset

    samples = read_evalset(log.evalset_path).samples
    ctx = RunContext(log, samples, ScoreConfig())
    context = lambda: [ctx.chunks.text(ctx.chunk_pos["c0"])]  # noqa: E731

    def decide(sample_id, labels):
        cs = ctx.compiled[sample_id]
        return judge_answer(ctx, cs, ANSWERS[sample_id], QUESTION, labels, context)

    # a present point (verbatim, or shown by the matcher) never needs the judge, and a
    # judge saying otherwise does not talk it away
    hits = decide("paraphrase", ("not_support", "not_support"))
    assert [d.decision for d in hits.decisions] == [Decision.PRESENT, Decision.PRESENT]
    assert [d.rule for d in hits.decisions] == [DecidedBy.VERBATIM, DecidedBy.PARAPHRASE]
    # the judge settles an undecided point either way, and a partial label is partial
    for label, conveyed in (("support", True), ("not_support", False), ("partial", False)):
        hits = decide("open", (None, label))
        assert hits.decisions[1].rule is DecidedBy.JUDGE and hits.conveyed[1] is conveyed
    assert decide("open", (None, "partial")).decisions[1].decision is Decision.PARTIAL
    # it overrides the matcher's absent (another value, or no trace) too
    assert decide("wrong", (None, "support")).conveyed == (True, True)
    assert decide("lacks", (None, "support")).decisions[1].rule is DecidedBy.JUDGE
    # and the copied-answer rule
    assert decide("copied", ("support", None)).decisions[0].rule is DecidedBy.JUDGE
