"""The judge's agreement with itself: Krippendorff's alpha, checked by hand and by simulation."""

from __future__ import annotations

import json
from itertools import count

import numpy as np
import pytest

from cofe import score_run
from cofe.evalset import EvalSample, write_evalset
from cofe.judges import (
    judge_agreement,
    judge_run,
    krippendorff_alpha,
    labels_for_scoring,
    read_judgements,
)
from cofe.judges._alpha import MIN_UNITS, unreliable
from cofe.measures import ClaimLabels
from cofe.runlog import Chunk, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord
from cofe.testing import ScriptedOpenAI
from tests.judges.test_judge import CASES, CHUNKS, FINE, SOURCE, client, make_run, scripted


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
    first = read_judgements(run)["q0"]
    assert json.loads(first.model_dump_json())["repeat"] == 0
    assert score_run(run, labels=labels_for_scoring).scores.query(
        "sample_id == 'q0' and measure == 'Faithfulness'"
    ).value.iloc[0] in (0.5, 1.0)


# --- the agreement gate: a measure the judge disagrees with itself on is not scored ----------


def _labels(context: tuple[bool, ...]) -> ClaimLabels:
    return ClaimLabels(
        context=context,
        source=context,
        reference=context,
        reference_in_answer=(True,),
        texts=tuple("c" * len(context)),
    )


def test_a_judge_that_flips_its_labels_makes_its_measures_unreliable():
    rng = np.random.default_rng(3)
    flipping = {
        (f"s{i}", r): _labels(tuple(bool(b) for b in rng.integers(0, 2, 4)))
        for i in range(MIN_UNITS + 3)
        for r in range(3)
    }
    names = dict(unreliable(flipping))
    assert "Faithfulness" in names and "disagrees with itself" in names["Faithfulness"]
    assert "alpha" in names["Faithfulness"] and f"{MIN_UNITS + 3} samples" in names["Faithfulness"]
    # the same labels every time: the samples differ, the judge does not -- kept
    steady = {(f"s{i}", r): flipping[(f"s{i}", 0)] for i in range(MIN_UNITS + 3) for r in range(3)}
    assert unreliable(steady) == ()
    # too few samples judged twice to overrule a measure on alpha alone
    few = {key: value for key, value in flipping.items() if int(key[0][1:]) < MIN_UNITS - 1}
    assert unreliable(few) == ()


def _copies_run(folder, copies: int):
    """A run of ``copies`` samples, each the first case's question and answer."""
    question, (answer, chunk, reference, _claims, _checks) = next(iter(CASES.items()))
    samples = [
        EvalSample(
            id=f"q{i}",
            query=question,
            coarse_keywords=["Super Bowl 50"],
            fine_keywords=[[FINE[question]]],
            reference_answer=reference,
            source={"doc": "sb.txt"},
        )
        for i in range(copies)
    ]
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(run_id="copies", top_k=1, stages=["parse", "chunking", "retrieval", "generation"]),
        evalset,
    )
    writer.add_documents([ParsedDocument(doc_id="sb", source="sb.txt", text=SOURCE)])
    writer.add_chunks([Chunk(chunk_id=c, doc_id="sb", text=t) for c, t in CHUNKS.items()])
    writer.add_samples(
        SampleRecord(
            sample_id=f"q{i}", answer=answer, pool=[RankedChunk(chunk_id=chunk, score=1.0)]
        )
        for i in range(copies)
    )
    return folder


@pytest.mark.parametrize("steady", [True, False])
def test_cofe_score_leaves_a_measure_the_judge_disagrees_on_unscored(tmp_path, steady):
    run = _copies_run(tmp_path / "run", MIN_UNITS + 2)
    coin = np.random.default_rng(7)

    def judge(messages, request):
        reply = scripted(messages, request)
        if not steady and '"claim": 1, "context": false' in reply and coin.random() < 0.5:
            reply = reply.replace('"claim": 0, "context": true', '"claim": 0, "context": false')
        return reply

    with ScriptedOpenAI(judge) as server:
        judge_run(run, client(server), repeats=3)
    result = score_run(run, labels=labels_for_scoring)
    faithfulness = result.scores.query("measure == 'Faithfulness'")
    why = result.skipped.query("measure == 'Faithfulness'").reason
    if steady:
        assert len(faithfulness) == MIN_UNITS + 2 and why.empty
    else:
        assert faithfulness.empty  # not one noisy number
        assert len(why) == MIN_UNITS + 2 and why.str.contains("disagrees with itself").all()
        # what the judge does agree on is still scored (the reference's claim, every time)
        assert len(result.scores.query("measure == 'ClaimRecall'")) == MIN_UNITS + 2
