"""Known-answer controls (cofe/judges/_controls.py): a judge that cannot tell a sample's
reference answer from another sample's is not allowed to print a number.

Runs are built from the labelled judging set (benchmarks/data/judge_validity: SQuAD
paragraphs, one document each) and judged through the loopback server: by the lexical
stand-in reading the reference as its passages (it tells right answers from another
document's), by the plain lexical stand-in (a word-overlap judge, which paraphrased right
answers defeat), and by a yes-sayer and a no-sayer (each agrees with itself perfectly and
measures nothing)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.judge_validity import DATA, build_run, choose, lexical_judge, measures_of
from cofe.evalset import EvalSample
from cofe.judges import (
    ControlGate,
    JudgeInputs,
    Judgement,
    PointLabel,
    control_gate,
    control_inputs,
    judge_inputs,
    judge_run,
    labels_for_scoring,
    labels_of,
    read_controls,
)
from cofe.judges._controls import MIN_PAIRS, POINTS, auc_error
from cofe.judges._prompts import reference_claims
from cofe.llm import Endpoint, LLMClient
from cofe.runlog import JUDGE_CONTROLS
from cofe.testing import ScriptedOpenAI


def rows(n: int, kinds: tuple[str, ...] = ("correct",)) -> list[dict]:
    every = [json.loads(x) for x in (DATA / "en.jsonl").read_text(encoding="utf-8").splitlines()]
    return choose(every, kinds, n, seed=5)


def yes_sayer(messages, request) -> str:
    """Every claim supported everywhere, every statement stated, every point conveyed."""
    system, user = messages[0]["content"], messages[1]["content"]
    if "fact checking" in system:
        answer = user.split("Answer: ", 1)[1]
        claims = reference_claims(answer)
        return json.dumps({"answer_claims": claims, "questions": claims[:1], "noncommittal": False})
    if "Claim: " in user:
        return json.dumps({"context": True, "source": True, "reference": True})
    if "Statement: " in user:
        return json.dumps({"answer": True, "context": True})
    claims = user.split("Answer claims: ", 1)[1].split("\n", 1)[0].count(". ")
    refs = (
        user.split("Reference claims: ", 1)[1].split("\n", 1)[0].count(". ")
        if ("Reference claims: " in user)
        else 0
    )
    return json.dumps(
        {
            "answer_claims": [
                {"claim": i, "context": True, "source": True, "reference": True}
                for i in range(max(claims, 1))
            ],
            "reference_claims": [
                {"claim": i, "answer": True, "context": True} for i in range(max(refs, 1))
            ],
            "useful_chunks": [1],
            "correctness": 4,
        }
    )


def reference_reader(messages, request) -> str:
    """The lexical stand-in reading the reference answer as its passages: it tells the
    sample's reference (gold) from another sample's (foreign), as a judge worth reading does."""
    user = messages[1]["content"]
    reference = next((x[11:] for x in user.split("\n") if x.startswith("Reference: ")), None)
    if reference is not None:
        lines = [
            f"{x.split(': ', 1)[0]}: {reference}" if x.startswith(("Context: ", "Source: ")) else x
            for x in user.split("\n")
        ]
        messages = [messages[0], {**messages[1], "content": "\n".join(lines)}]
    return lexical_judge(messages, request)


def expected(run) -> int:
    """How many control judgements the run calls for (10 samples, 2 or 3 each)."""
    return len(control_inputs(judge_inputs(run)[0], 10))


def judged(tmp_path, reply, n: int = 12, **kw):
    run = tmp_path / "run"
    build_run(rows(n), run)
    with ScriptedOpenAI(reply) as server:
        client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=10))
        report = judge_run(run, client, concurrency=2, **kw)
        calls = len(server.requests)
    return run, report, calls


def test_a_judge_that_separates_the_controls_keeps_its_measures(tmp_path):
    run, report, _ = judged(tmp_path, reference_reader)
    # 10 samples, each with its reference, its passage's closest sentences (where they
    # cover enough of it) and another document's reference, judged first, in their own file
    kinds = Counter(kind for _, kind in read_controls(run))
    assert kinds["gold"] == kinds["foreign"] == 10 and 8 <= kinds["gold_passage"] <= 10
    assert report.controls_judged == sum(kinds.values()) == expected(run)
    assert len((run / JUDGE_CONTROLS).read_text().splitlines()) == sum(kinds.values())
    assert report.judged == 12  # the samples themselves, counted apart
    # it reads the reference as its passages: the measures read against the passages keep
    # their numbers (the ones read against the reference meet the passage's sentences, which
    # a word-matching judge cannot tie to a reworded reference: gated, see the stand-in table
    # in benchmarks/README.md)
    for name in ("Faithfulness", "SourceFaithfulness"):
        assert report.controls[name].endswith(": scored"), report.controls
    values = measures_of(run)
    assert all(isinstance(v["Faithfulness"], float) for v in values.values())


def test_a_yes_sayer_fails_its_controls_and_prints_no_number(tmp_path):
    run, report, _ = judged(tmp_path, yes_sayer)
    for name in ("Faithfulness", "ClaimRecall", "CorrectnessScore"):
        assert report.controls[name].endswith("unscored"), report.controls
    for value in measures_of(run).values():
        reason = value["Faithfulness"]
        assert isinstance(reason, str) and "failed its controls on Faithfulness" in reason
        assert "AUC 0.50" in reason
        assert "failed its controls on ClaimRecall" in value["ClaimRecall"]
        assert "passages' sentences closest" in value["ClaimRecall"]  # its right answer


def test_controls_are_judged_once_and_resume(tmp_path):
    run, first, _ = judged(tmp_path, lexical_judge)
    with ScriptedOpenAI(lexical_judge) as server:
        client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=10))
        again = judge_run(run, client, concurrency=2)
        assert server.requests == []  # every sample and every control already judged
    assert again.controls_judged == 0 and again.controls == first.controls
    # a killed pass: the file cut after its first control -- the next pass judges the rest
    lines = (run / JUDGE_CONTROLS).read_text().splitlines()
    (run / JUDGE_CONTROLS).write_text(lines[0] + "\n")
    with ScriptedOpenAI(lexical_judge) as server:
        client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=10))
        resumed = judge_run(run, client, concurrency=2)
    assert resumed.controls_judged == expected(run) - 1 and resumed.judged == 0


def test_a_first_look_with_limit_does_not_wait_for_the_controls(tmp_path):
    run, report, calls = judged(tmp_path, lexical_judge, limit=2)
    assert (report.judged, report.left, report.controls_judged) == (2, 10, 0)
    assert calls == 4 and "not judged yet" in report.controls["controls"]
    with ScriptedOpenAI(lexical_judge) as server:  # the pass that reaches the last sample
        client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=10))
        rest = judge_run(run, client, concurrency=2, limit=10)
    assert (rest.judged, rest.left, rest.controls_judged) == (10, 0, expected(run))


def test_too_few_samples_for_controls_costs_no_call(tmp_path):
    run, report, calls = judged(tmp_path, lexical_judge, n=MIN_PAIRS - 1)
    assert report.controls_judged == 0 and not (run / JUDGE_CONTROLS).exists()
    assert calls == 2 * (MIN_PAIRS - 1)  # the samples' two calls each, nothing more
    assert "not gated" in report.controls["controls"]


def test_no_controls_when_asked_for_none(tmp_path):
    run, report, _ = judged(tmp_path, lexical_judge, controls=0)
    assert report.controls_judged == 0 and not (run / JUDGE_CONTROLS).exists()


def _inputs(i: int, doc: str, reference: str | None = "ref") -> JudgeInputs:
    sample = EvalSample(
        id=f"s{i}",
        query=f"question {i}?",
        reference_answer=reference,
        fine_keywords=[[f"fact{i}"]],
        source={"doc": doc},
    )
    passage = f"Passage {i} holds fact{i} and {reference}."
    return JudgeInputs(sample, f"answer {i}", (passage,), None, None, reference)


def test_control_pairs_take_another_documents_reference():
    items = [_inputs(i, doc=f"d{i % 3}", reference=f"reference {i}") for i in range(12)]
    controls = control_inputs(items, 10)
    assert len(controls) == 30
    for gold, passage, foreign in zip(controls[::3], controls[1::3], controls[2::3], strict=True):
        assert (gold.control, passage.control, foreign.control) == (
            "gold",
            "gold_passage",
            "foreign",
        )
        assert gold.answer == gold.reference and gold.sample is foreign.sample
        # the passage's sentence sharing most words with the reference, not the reference
        assert passage.answer == gold.chunks[0] and passage.answer != gold.reference
        assert foreign.answer != gold.reference and foreign.chunks == gold.chunks
        partner = next(i for i in items if i.reference == foreign.answer)
        assert partner.sample.source.doc != gold.sample.source.doc
    # an eval set on one document: the wrong answer is another question's of that document
    one = [_inputs(i, doc="d", reference=f"reference {i}") for i in range(12)]
    for gold, foreign in zip(
        control_inputs(one, 10)[::3], control_inputs(one, 10)[2::3], strict=True
    ):
        assert foreign.answer not in (gold.reference, "") and foreign.sample is gold.sample
    # samples without a reference cannot be controls; too few left: none at all
    few = [_inputs(i, f"d{i}", None if i % 2 else f"r{i}") for i in range(12)]
    assert control_inputs(few, 10) == []


def _control(sample: str, kind: str, supported: bool, points: str | None = None) -> Judgement:
    return Judgement(
        sample_id=sample,
        control=kind,
        model="m",
        prompt_version="v",
        inputs="k",
        status="judged",
        claims=[{"text": "a claim", "context": supported, "source": supported}],
        points=[PointLabel(point=0, answer=points)] if points else [],
    )


def test_the_gate_fails_point_labels_that_do_not_separate():
    controls = []
    for i in range(MIN_PAIRS):  # claims separate; every point "support" on both
        controls += [
            _control(f"s{i}", "gold", True, "support"),
            _control(f"s{i}", "foreign", False, "support"),
        ]
    gate = control_gate(controls, labels_of, model="m", versions=frozenset({"v"}))
    failed = dict(gate.failed)
    assert "Faithfulness" not in failed and gate.figures["Faithfulness"] == (1.0, MIN_PAIRS)
    assert "information-point labels" in failed[POINTS]
    # another model's controls say nothing about this one's labels
    other = control_gate(controls, labels_of, model="another", versions=frozenset({"v"}))
    assert other.failed == () and "not gated" in (other.note or "")
    assert isinstance(other, ControlGate)


def test_an_auc_that_only_reaches_the_bar_over_ten_pairs_does_not_pass():
    """Over ten pairs an AUC of 0.85 is as often a judge that separates at 0.75 (the local
    model's Chinese ClaimPrecision: controls 0.85, labelled answers 0.75): the gate takes one
    standard error off it."""
    assert auc_error(1.0, 10, 10) == 0.0
    assert auc_error(0.85, 10, 10) == pytest.approx(0.090, abs=0.001)
    assert auc_error(0.85, 40, 40) < auc_error(0.85, 10, 10)

    def gate_at(wrong_supported: int):
        # ten pairs: every gold control supported; ``wrong_supported`` foreign ones too
        controls = []
        for i in range(10):
            controls += [
                _control(f"s{i}", "gold", True),
                _control(f"s{i}", "foreign", i < wrong_supported),
            ]
        return control_gate(controls, labels_of, model="m", versions=frozenset({"v"}))

    reached = gate_at(3)  # AUC 0.85: the bar reached, not passed beyond its error
    assert reached.figures["Faithfulness"] == (pytest.approx(0.85), 10)
    reason = dict(reached.failed)["Faithfulness"]
    assert "AUC 0.85 ± 0.09 over 10 pairs, 0.85 needed beyond its error" in reason
    assert "Faithfulness" not in dict(gate_at(0).failed)  # AUC 1.00: no doubt left
    assert "Faithfulness" not in dict(gate_at(1).failed)  # AUC 0.95 - 0.053: 0.897, passes
    assert "Faithfulness" in dict(gate_at(2).failed)  # AUC 0.90 - 0.074: 0.826, fails


def test_cli_says_in_one_line_that_the_judge_failed(tmp_path, capsys, monkeypatch):
    from cofe.cli import main

    run = tmp_path / "run"
    build_run(rows(12), run)
    with ScriptedOpenAI(yes_sayer) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        code = main(
            ["judge", str(run), "--base-url", server.base_url, "--model", "m", "--no-embeddings"]
        )
    assert code == 0
    out, err = capsys.readouterr()
    assert "failed its known-answer controls on Faithfulness" in err
    assert json.loads(out)["controls"]["Faithfulness"].endswith("unscored")
    # --dry-run counts the controls beside the samples, and calls nothing
    assert main(["judge", str(run), "--model", "m", "--dry-run"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert (counted["samples_to_judge"], counted["controls_to_judge"]) == (12, expected(run))
    assert main(["judge", str(run), "--model", "m", "--dry-run", "--controls", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["controls_to_judge"] == 0


def no_sayer(messages, request) -> str:
    """The yes-sayer's mirror: no claim supported anywhere, no statement stated."""
    reply = json.loads(yes_sayer(messages, request))
    if "answer_claims" in reply and isinstance(reply["answer_claims"][0], str):
        return json.dumps(reply)  # the claims call: the answer's sentences, as they are

    def no(value):
        if isinstance(value, bool):
            return False
        if isinstance(value, list):
            return [no(v) for v in value]
        if isinstance(value, dict):
            return {k: v if k == "claim" else no(v) for k, v in value.items()}
        return value

    return json.dumps({**no(reply), "correctness": 1, "useful_chunks": []})


def test_no_verdict_rests_on_labels_that_failed_their_controls(tmp_path, monkeypatch):
    """A judge calling every claim unsupported would make every answer `unsupported_claims`
    (and every claim a hallucination); failing its controls, it decides nothing."""
    import benchmarks.judge_validity as jv
    from cofe import score_run

    chosen = rows(12)
    points = {r["id"]: r["points"] for r in chosen}
    made = jv.EvalSample
    monkeypatch.setattr(jv, "EvalSample", lambda **kw: made(**kw, fine_keywords=points[kw["id"]]))
    run = tmp_path / "run"
    build_run(chosen, run)
    with ScriptedOpenAI(no_sayer) as server:
        client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=10))
        report = judge_run(run, client, concurrency=2)
    assert report.controls["Faithfulness"].endswith("unscored")
    result = score_run(run, labels=labels_for_scoring)
    assert "unsupported_claims" not in set(result.verdicts.verdict)
    hallucination = result.scores[result.scores.measure == "Hallucination"]
    assert hallucination.value.isna().all()
    assert (
        result.skipped[result.skipped.measure == "Hallucination"]
        .reason.str.contains("failed its controls on Faithfulness")
        .all()
    )


def test_the_closest_sentence_covers_the_reference_and_is_not_a_paragraph():
    from cofe.judges._controls import _closest_sentences

    passage = (
        "Super Bowl 50 was an American football game. The Denver Broncos defeated the "
        "Carolina Panthers 24-10 to win the title. It was played at Levi's Stadium."
    )
    got = _closest_sentences([passage], "Denver beat Carolina 24-10 to win it.")
    assert got == "The Denver Broncos defeated the Carolina Panthers 24-10 to win the title."
    assert _closest_sentences([passage], "Nothing alike here.") is None  # under half covered
    # the reference itself is no paraphrase of it; a passage with no sentence end is too long
    assert _closest_sentences(["The Broncos won."], "The Broncos won.") is None
    assert _closest_sentences(["word " * 200], "word") is None
    # Chinese: pairs of characters, not single ones shared by unrelated sentences
    chinese = "公园在1980年向公众开放。这座城市的人们在节日里一起去看一场很长的比赛和表演。"
    assert _closest_sentences([chinese], "乍都节公园是在一九八〇年向公众开放的") == (
        "公园在1980年向公众开放。"
    )
    # a reference drawn from two sentences gets both, in the passage's order
    two = _closest_sentences([passage], "At Levi's Stadium, Denver defeated Carolina.")
    assert two == (
        "The Denver Broncos defeated the Carolina Panthers 24-10 to win the title. "
        "It was played at Levi's Stadium."
    )


def test_stale_controls_do_not_gate_a_changed_run(tmp_path):
    """A control whose sample left the run, or whose inputs changed, is dropped by the next
    pass and never counted; --controls 0 drops them all."""
    run, report, _ = judged(tmp_path, yes_sayer)
    assert report.controls["Faithfulness"].endswith("unscored")
    with ScriptedOpenAI(lexical_judge) as server:
        client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=10))
        off = judge_run(run, client, concurrency=2, controls=0)
    assert not (run / JUDGE_CONTROLS).read_text().strip()
    assert "not gated" in off.controls["controls"]
    assert all(isinstance(v["Faithfulness"], float) for v in measures_of(run).values())


def test_point_labels_that_fail_are_dropped_and_a_failed_judgement_keeps_no_gated_value():
    from dataclasses import replace as swap

    from cofe.measures import AnswerRelevancy, ClaimLabels, Step, StepView, Unscored

    labels = ClaimLabels(
        context=(),
        source=(),
        reference=(),
        reference_in_answer=(),
        relevancy=0.7,
        failed="the judge gave no labels: checks: invalid reply",
    )
    view = StepView(Step.ANSWER, (), claims=labels)
    assert AnswerRelevancy().evaluate(view) == 0.7  # the claims call alone gave it
    gated = swap(labels, unreliable=(("AnswerRelevancy", "failed its controls"),))
    value = AnswerRelevancy().evaluate(StepView(Step.ANSWER, (), claims=gated))
    assert isinstance(value, Unscored) and "controls" in value.reason
