"""Replies checked for sense, not only for JSON: each defect a small model showed (issue 28),
replayed by the loopback server, ends in a recorded repair or an unscored reason.

Each sample's two replies are scripted below by its answer (both prompts carry it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cofe import (
    Chunk,
    EvalSample,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunWriter,
    SampleRecord,
    score_run,
)
from cofe.evalset import SourceRef, read_evalset, write_evalset
from cofe.judges import judge_run, labels_for_scoring, read_judgements
from cofe.judges._prompts import EXAMPLE_CORRECTNESS, reference_claims
from cofe.judges._sense import (
    ECHO_MIN_SAMPLES,
    context_inside_source,
    correctness_echo,
    keep_answer_claims,
)
from cofe.llm import Endpoint, LLMClient
from cofe.measures import ClaimLabels, Unscored
from cofe.runlog import read_compact
from cofe.testing import ScriptedOpenAI

SOURCE = (
    "Super Bowl 50 was played at Levi's Stadium in Santa Clara. "
    "The Denver Broncos beat the Carolina Panthers 24-10. Tickets cost $5,000."
)
CHUNKS = {
    "c1": "The Denver Broncos beat the Carolina Panthers 24-10.",
    "c2": "Super Bowl 50 was played at Levi's Stadium in Santa Clara.",
    "other": "Compound steam engines expand steam in several stages.",  # not in the source
}


def label(i: int, context: bool, source: bool = True, reference: bool = True) -> dict:
    return {"claim": i, "context": context, "source": source, "reference": reference}


def ref(i: int, answer: bool = True) -> dict:
    return {"claim": i, "answer": answer, "context": True}


# sample id -> question, context chunk, answer, reference, fine keywords, claims reply, checks
CASES: dict[str, tuple] = {
    # the claims reply copies the worked example's claims: dropped, the answer's own kept
    "copied": (
        "Who won Super Bowl 50?",
        "c1",
        "The Denver Broncos won.",
        "Denver Broncos",
        [],
        {
            "answer_claims": [
                "The Denver Broncos won Super Bowl 50.",
                "The Quillon Bridge opened in 1732.",
            ],
            "questions": ["Who won Super Bowl 50?", "Who designed the Quillon Bridge?"],
        },
        {"answer_claims": [label(0, True)], "reference_claims": [ref(0)], "correctness": 5},
    ),
    # every claim is the example's or answers the question from elsewhere: unscored
    "all_copied": (
        "Which engines expand steam in stages?",
        "other",
        "Compound engines expand steam in several stages.",
        None,
        [],
        {
            "answer_claims": [
                "Normandy is located in France.",
                "Marta Ostrel designed the Quillon Bridge.",
            ]
        },
        None,
    ),
    # a label for claim 1 when the answer has none (judge-5's example had claims 0 and 1)
    "no_such": (
        "Where was Super Bowl 50 played?",
        "c2",
        "I don't know.",
        "Levi's Stadium",
        [["Levi's Stadium"]],
        {"answer_claims": [], "noncommittal": True},
        {
            "answer_claims": [label(1, False, False, False)],
            "reference_claims": [ref(0, False), ref(0, True)],
            "points": [
                {"point": 0, "answer": "not_support", "context": "support"},
                {"point": 3, "answer": "support", "context": "support"},  # no point 3
            ],
        },
    ),
    # the labels repeat the example's three for an answer of one claim: unscored, the points kept
    "echo_labels": (
        "Who lost Super Bowl 50?",
        "c1",
        "The Carolina Panthers lost.",
        "Carolina Panthers",
        [["Carolina Panthers"]],
        {"answer_claims": ["The Carolina Panthers lost Super Bowl 50."]},
        {
            "answer_claims": [
                label(0, False, False, False),
                label(1, True),
                label(2, False, False, False),
            ],
            "reference_claims": [ref(0)],
            "points": [{"point": 0, "answer": "support", "context": "support"}],
        },
    ),
    # supported by the context, not by the source holding it: the source label repaired
    "inside": (
        "What was the score of Super Bowl 50?",
        "c1",
        "It ended 24-10.",
        "24-10",
        [],
        {"answer_claims": ["Super Bowl 50 ended 24-10."]},
        {"answer_claims": [label(0, True, source=False)], "reference_claims": [ref(0)]},
    ),
    # the same labels when the context is not in the source: nothing to repair
    "outside": (
        "How do compound engines work?",
        "other",
        "They expand steam in stages.",
        None,
        [],
        {"answer_claims": ["Compound engines expand steam in stages."]},
        {"answer_claims": [label(0, True, source=False, reference=False)]},
    ),
    # one reference claim unlabelled, twice: unscored, but its information point labels survive
    "unlabelled_ref": (
        "Who won, and where was it played?",
        "c1",
        "The Broncos won at Levi's Stadium.",
        "The Denver Broncos won. It was played at Levi's Stadium.",
        [["Denver Broncos"], ["Levi's Stadium"]],
        {"answer_claims": ["The Broncos won Super Bowl 50 at Levi's Stadium."]},
        [
            {
                "answer_claims": [label(0, True)],
                "reference_claims": [ref(0)],
                "points": [
                    {"point": 0, "answer": "support", "context": "support"},
                    {"point": 1, "answer": "support", "context": "not_support"},
                ],
            },
            {"answer_claims": [], "reference_claims": []},
        ],
    ),
    # claim 1 of 2 unlabelled (the small model labelled as many claims as its example has):
    # asked again alone, labelled as claim 0 of the follow-up, and put back as claim 1
    "asked_again": (
        "Who lost Super Bowl 50, and by what score?",
        "c1",
        "The Panthers lost. The score was 24-10.",
        "Carolina Panthers",
        [],
        {
            "answer_claims": [
                "The Panthers lost Super Bowl 50.",
                "The score of Super Bowl 50 was 24-10.",
            ]
        },
        [
            {"answer_claims": [label(0, True)], "reference_claims": [ref(0)]},
            {"answer_claims": [label(0, True, reference=False)]},
        ],
    ),
    # the claims leave out the answer's second sentence -- the false one after a right one:
    # it is added as a claim, as written, and judged
    "left_out": (
        "Who won Super Bowl 50?",
        "c1",
        "The Broncos beat the Panthers 24-10. Their quarterback was Joe Montana.",
        "Denver Broncos",
        [],
        {"answer_claims": ["The Broncos beat the Panthers 24-10 in Super Bowl 50."]},
        {
            "answer_claims": [label(0, True), label(1, False, False, False)],
            "reference_claims": [ref(0)],
        },
    ),
}


ASKED: dict[str, int] = {}  # checks calls so far, per answer


def scripted(messages, request) -> str:
    """The sample's claims reply; its checks reply, or (a list) the n-th checks call's reply,
    the last one repeated -- a follow-up for claims left unlabelled is the second."""
    system, user = messages[0]["content"], messages[1]["content"]
    for _q, _c, answer, _r, _f, claims, checks in CASES.values():
        if f"Answer: {answer}\n" in user + "\n":
            if "fact checking" in system:
                return json.dumps(claims)
            assert checks is not None, f"no checks call expected for {answer!r}"
            if isinstance(checks, list):
                n = ASKED[answer] = ASKED.get(answer, -1) + 1
                return json.dumps(checks[min(n, len(checks) - 1)])
            return json.dumps(checks)
    raise AssertionError(f"unexpected prompt: {user[:200]}")


def make_run(folder: Path, cases: dict[str, tuple]) -> Path:
    samples = [
        EvalSample(
            id=sid,
            query=q,
            fine_keywords=fine,
            reference_answer=reference,
            source=SourceRef(doc="sb.txt"),
        )
        for sid, (q, _c, _a, reference, fine, _cl, _ch) in cases.items()
    ]
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(run_id="sense", top_k=1, stages=["parse", "chunking", "retrieval", "generation"]),
        evalset,
    )
    writer.add_documents([ParsedDocument(doc_id="sb", source="sb.txt", text=SOURCE)])
    writer.add_chunks([Chunk(chunk_id=c, doc_id="sb", text=t) for c, t in CHUNKS.items()])
    writer.add_samples(
        SampleRecord(
            sample_id=sid,
            pool=[RankedChunk(chunk_id=chunk, score=1.0)],
            context=[RankedChunk(chunk_id=chunk, score=1.0)],
            answer=answer,
        )
        for sid, (_q, chunk, answer, *_rest) in cases.items()
    )
    return folder


def judge_cases(tmp_path: Path, cases: dict[str, tuple]) -> tuple[Path, Any]:
    """A run of ``cases`` judged by the scripted server, which reads the module's CASES:
    they are these cases for the length of the pass."""
    global CASES
    saved, CASES = CASES, cases
    try:
        run = make_run(tmp_path / "run", cases)
        with ScriptedOpenAI(scripted) as server:
            return run, judge_run(run, client(server), concurrency=2)
    finally:
        CASES = saved


def client(server) -> LLMClient:
    return LLMClient(Endpoint(server.base_url, "judge-model", "secret", timeout=5, max_retries=1))


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("sense") / "run", CASES)
    ASKED.clear()
    with ScriptedOpenAI(scripted) as server:
        report = judge_run(run, client(server), concurrency=2)
    return run, report, read_judgements(run), server


def scoring(run: Path) -> dict:
    log, records = read_compact(run)
    return labels_for_scoring(run, log, records, read_evalset(run / "evalset.jsonl").samples)


def test_claims_copied_from_the_example_are_dropped_and_recorded(judged):
    _run, _report, judgements, _server = judged
    copied = judgements["copied"]
    assert copied.status == "judged"
    assert [c.text for c in copied.claims] == ["The Denver Broncos won Super Bowl 50."]
    assert copied.questions == ["Who won Super Bowl 50?"]  # the example's question dropped
    assert sorted(r.split(":")[0] for r in copied.repairs) == ["copied_example"] * 2
    assert "The Quillon Bridge opened in 1732." in copied.repairs[0]


def test_a_reply_with_no_claim_of_the_answer_is_unscored_without_a_checks_call(judged):
    _run, report, judgements, _server = judged
    bad = judgements["all_copied"]
    assert bad.status == "unscored" and bad.calls == 1
    assert bad.reason.startswith("claims: no claim the judge listed is the answer's")
    codes = sorted(r.split(":")[0] for r in bad.repairs)
    assert codes == ["copied_example", "not_in_answer"]  # "Normandy..." answers nothing asked
    assert report.reasons["claims: no claim the judge listed is the answer's (2 dropped"] == 1


def test_labels_for_claims_that_do_not_exist_are_dropped_and_recorded(judged):
    run, _report, judgements, _server = judged
    refusal = judgements["no_such"]
    assert refusal.status == "judged" and refusal.claims == []
    assert refusal.repairs == [
        "no_such_claim: a label for answer claim 1; there are 0",
        "second_label: a second label for reference claim 0",
    ]
    assert [c.answer for c in refusal.reference_claims] == [False]  # the first label is kept
    labels = scoring(run)["no_such"]
    assert labels.points == ("not_support",)


def test_labels_copying_the_example_are_unscored_and_keep_the_point_labels(judged):
    run, _report, judgements, _server = judged
    echo = judgements["echo_labels"]
    assert echo.status == "unscored"
    assert (
        echo.reason == "checks: the labels copy the worked example's (3 claims; the answer has 1)"
    )
    assert [(p.answer, p.context) for p in echo.points] == [("support", "support")]
    labels = scoring(run)["echo_labels"]
    assert isinstance(labels, ClaimLabels) and labels.failed and labels.points == ("support",)


def test_context_supported_but_source_unsupported_is_repaired_when_the_context_is_inside(judged):
    _run, _report, judgements, _server = judged
    inside, outside = judgements["inside"], judgements["outside"]
    assert (inside.claims[0].context, inside.claims[0].source) == (True, True)
    assert [r.split(":")[0] for r in inside.repairs] == ["context_in_source"]
    assert (outside.claims[0].context, outside.claims[0].source) == (True, False)
    assert outside.repairs == []
    assert context_inside_source(
        [" The  Denver Broncos beat\nthe Carolina Panthers 24-10. "], SOURCE
    )
    assert not context_inside_source([CHUNKS["c1"], CHUNKS["other"]], SOURCE)
    assert not context_inside_source([CHUNKS["c1"]], None)


def test_an_unlabelled_reference_claim_leaves_the_point_labels_to_the_answer_step(judged):
    run, _report, judgements, server = judged
    judgement = judgements["unlabelled_ref"]
    assert judgement.status == "unscored" and "1 reference claim(s) unlabelled" in judgement.reason
    assert [p.answer for p in judgement.points] == ["support", "support"]
    # the reference's two sentences were its claims, with no call
    checks, _again = [
        r
        for r in server.requests
        if "fact checking" not in r["messages"][0]["content"]
        and "The Broncos won at Levi's Stadium." in r["messages"][1]["content"]
    ]
    assert (
        "Reference claims: 0. The Denver Broncos won. 1. It was played at Levi's Stadium."
        in checks["messages"][1]["content"]
    )
    result = score_run(run, labels=labels_for_scoring)
    points = result.points.set_index(["sample_id", "point"])
    # "Denver Broncos" is not in the answer's words: the judge's label decides it ("Levi's
    # Stadium" is, verbatim); before, an unscored judgement lost its point labels
    first = points.loc[("unlabelled_ref", 0)]
    assert (first.answer_rule, first.answer_decision) == ("judge", "present")
    skipped = {(r.sample_id, r.measure): r.reason for r in result.skipped.itertuples()}
    assert "unlabelled" in skipped[("unlabelled_ref", "Faithfulness")]


def test_the_claims_call_sees_the_question_and_the_answer_only(judged):
    _run, _report, _judgements, server = judged
    claims_calls = [r for r in server.requests if "fact checking" in r["messages"][0]["content"]]
    assert claims_calls
    for request in claims_calls:
        user = request["messages"][1]["content"]
        assert user.startswith("Question: ") and "Reference" not in user
        assert len(user.splitlines()) == 2


def test_claims_left_unlabelled_are_asked_again_alone(judged):
    _run, _report, judgements, server = judged
    judgement = judgements["asked_again"]
    assert judgement.status == "judged" and judgement.calls == 3
    assert [(c.context, c.reference) for c in judgement.claims] == [(True, True), (True, False)]
    assert judgement.repairs == [
        "asked_again: 1 of 1 answer and 0 of 0 reference claim(s) the "
        "checks reply left unlabelled, labelled by a second call"
    ]
    follow = [
        r
        for r in server.requests
        if "fact checking" not in r["messages"][0]["content"]
        and "The Panthers lost. The score was 24-10." in r["messages"][1]["content"]
    ][1]
    user = follow["messages"][1]["content"]
    assert "Answer claims: 0. The score of Super Bowl 50 was 24-10." in user
    assert "The Panthers lost Super Bowl 50." not in user and "Reference claims" not in user
    # asked again and still unlabelled: unscored
    assert judgements["unlabelled_ref"].calls == 3
    assert "asked_again: 0 of 0 answer and 0 of 1" in judgements["unlabelled_ref"].repairs[0]


def test_the_report_counts_repairs_per_code_and_unscored_reasons_by_their_head(judged):
    _run, report, _judgements, _server = judged
    assert report.repairs == {
        "copied_example": 2,
        "not_in_answer": 1,
        "no_such_claim": 1,
        "second_label": 1,
        "context_in_source": 1,
        "asked_again": 2,
        "uncovered_sentence": 1,
        "dropped_point_label": 1,
    }
    assert report.unscored == 3 and report.correctness_echo is None


def test_an_answer_sentence_the_claims_leave_out_is_judged_as_written(judged):
    _run, _report, judgements, _server = judged
    left = judgements["left_out"]
    assert left.status == "judged"
    assert [c.text for c in left.claims] == [
        "The Broncos beat the Panthers 24-10 in Super Bowl 50.",
        "Their quarterback was Joe Montana.",
    ]
    assert [c.context for c in left.claims] == [True, False]  # Faithfulness 0.5, not 1.0
    assert left.repairs == [
        "uncovered_sentence: answer sentence 'Their quarterback was Joe Montana.' is in no "
        "claim: judged as written"
    ]
    # a split of the answer into claims of its own words covers every sentence: nothing added
    assert not any(r.startswith("uncovered") for r in judgements["asked_again"].repairs)


def test_a_claim_answering_the_question_leaves_the_answers_sentences_to_judge():
    # the local model's reply on a wrong answer (benchmarks, en-001/wrong): a claim from the
    # question's topic, none from the answer
    question = "When did Doctor Who first air on BBC TV?"
    answer = (
        "Pharmacists are regulated separately from physicians. "
        "About 7-10% of American physicians' practices dispense drugs."
    )
    kept, _questions, repairs = keep_answer_claims(
        ["Doctor Who first aired on BBC TV in 1963."], [], question, answer
    )
    assert kept[1:] == reference_claims(answer)
    assert [r.split(":")[0] for r in repairs] == ["uncovered_sentence"] * 2
    # in Chinese, characters are the words
    kept, _q, repairs = keep_answer_claims(
        ["乍都节公园由首钢集团收购。"],
        [],
        "首钢集团收购了哪座公园？",
        "乍都节公园坐落在泰国首都曼谷的乍都节县，占地面积约0.304平方公里。",
    )
    assert len(kept) == 2 and repairs[0].startswith("uncovered_sentence")


def test_reference_claims_are_the_references_sentences_verbatim():
    assert reference_claims("Denver Broncos") == ["Denver Broncos"]
    assert reference_claims("Dr. Who aired on Feb. 7. It ran 25 min.") == [
        "Dr. Who aired on Feb. 7.",
        "It ran 25 min.",
    ]
    assert reference_claims("丹佛野马队赢了。比分是24比10。") == [
        "丹佛野马队赢了。",
        "比分是24比10。",
    ]
    assert reference_claims("It measures 1.5 m.") == ["It measures 1.5 m."]
    assert reference_claims("  ") == [] and reference_claims(None) == []


def echo_cases(values: list[int]) -> dict[str, tuple]:
    """Samples answered alike, judged with the given correctness scores."""
    cases = {}
    for i, value in enumerate(values):
        answer = f"The Denver Broncos won, answer number {i}."
        cases[f"e{i}"] = (
            "Who won Super Bowl 50?",
            "c1",
            answer,
            "Denver Broncos",
            [["Denver Broncos"]],
            {"answer_claims": ["The Denver Broncos won Super Bowl 50."]},
            {"answer_claims": [label(0, True)], "reference_claims": [ref(0)], "correctness": value},
        )
    return cases


@pytest.mark.parametrize(
    ("values", "echoed"),
    [
        ([EXAMPLE_CORRECTNESS] * ECHO_MIN_SAMPLES, True),
        ([EXAMPLE_CORRECTNESS] * 6 + [5, 4], True),  # 6 of 8: three quarters
        ([EXAMPLE_CORRECTNESS] * 5 + [5, 4, 5], False),
        ([EXAMPLE_CORRECTNESS] * (ECHO_MIN_SAMPLES - 1), False),
    ],  # too few to tell
)
def test_the_examples_correctness_on_most_samples_is_not_used(tmp_path, values, echoed):
    run, report = judge_cases(tmp_path, echo_cases(values))
    assert (report.correctness_echo is not None) == echoed
    result = score_run(run, labels=labels_for_scoring)
    answer = result.scores[result.scores.step == "answer"]
    scored = answer[answer.measure == "CorrectnessScore"]
    faithfulness = answer[answer.measure == "Faithfulness"]
    assert len(faithfulness) == len(values)  # the judge's other labels are used either way
    if echoed:
        assert scored.empty
        assert (
            f"to {values.count(EXAMPLE_CORRECTNESS)} of {len(values)} samples"
            in report.correctness_echo
        )
        assert all(isinstance(labels.correctness, Unscored) for labels in scoring(run).values())
        # each sample says why its correctness is unscored: the echo, not a missing score
        reasons = set(result.skipped[result.skipped.measure == "CorrectnessScore"].reason)
        assert reasons == {report.correctness_echo}
    else:
        assert sorted(scored.value) == sorted(float(v) for v in values)


def test_correctness_echo_rule():
    assert correctness_echo([EXAMPLE_CORRECTNESS] * 10) is not None
    assert correctness_echo([3] * 10) is None  # the same value, not the example's
    assert correctness_echo([]) is None


def test_cofe_judge_prints_the_repairs_and_the_echo(tmp_path, capsys, monkeypatch):
    from cofe.cli import main

    global CASES
    run = make_run(tmp_path / "run", CASES)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    ASKED.clear()
    with ScriptedOpenAI(scripted) as server:
        code = main(
            [
                "judge",
                str(run),
                "--base-url",
                server.base_url,
                "--model",
                "judge-model",
                "--cache",
                "none",
                "--no-embeddings",
                "--no-probe",
            ]
        )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["repairs"]["context_in_source"] == 1 and summary["unscored"] == 3
    assert "correctness_echo" in summary


def pattern_cases(patterns: list[tuple[bool, ...]]) -> dict[str, tuple]:
    """Two- or three-claim answers, each labelled with the given context labels."""
    cases = {}
    for i, pattern in enumerate(patterns):
        answer = " ".join(f"Fact {k} of answer {i} about the Broncos." for k in range(len(pattern)))
        cases[f"l{i}"] = (
            "What did the Broncos do?",
            "c1",
            answer,
            "Denver Broncos",
            [["Denver Broncos"]],
            {
                "answer_claims": [
                    f"Fact {k} of answer {i} about the Broncos." for k in range(len(pattern))
                ]
            },
            {
                "answer_claims": [
                    label(k, context, source=context) for k, context in enumerate(pattern)
                ],
                "reference_claims": [ref(0)],
                "correctness": 4,
            },
        )
    return cases


ECHO, OTHER = (False, True), (True, True)


@pytest.mark.parametrize(
    ("patterns", "echoed"),
    [
        ([ECHO] * 4 + [(False, True, False)] * 4, True),  # the example's pattern, or its start
        ([ECHO] * 6 + [OTHER] * 2, True),  # 6 of 8: three quarters
        ([ECHO] * 5 + [OTHER] * 3, False),
        ([OTHER] * 8, False),
        ([ECHO] * 7 + [(True,)], False),
    ],  # one claim shows no pattern: 7 eligible are too few
)
def test_context_labels_following_the_examples_pattern_are_not_used(tmp_path, patterns, echoed):
    run, report = judge_cases(tmp_path, pattern_cases(patterns))
    assert (report.label_echo is not None) == echoed
    result = score_run(run, labels=labels_for_scoring)
    answer = result.scores[result.scores.step == "answer"]
    faithfulness = answer[answer.measure == "Faithfulness"]
    verdicts = set(result.verdicts.verdict)
    if echoed:
        assert faithfulness.empty and "unsupported_claims" not in verdicts
        skipped = result.skipped[result.skipped.measure == "Faithfulness"]
        assert skipped.reason.str.contains("worked example's pattern").all()
        assert len(skipped) == len(patterns)  # every sample says why
    else:
        assert len(faithfulness) == len(patterns)
        if ECHO in patterns:
            assert "unsupported_claims" in verdicts  # the labels are used as given


def test_questions_sharing_no_word_with_the_answer_count_zero_for_relevancy():
    """A small model asked for questions the answer answers often restates the user's question
    whatever the answer says (en-029 in the judge benchmark: a Doctor Who answer to a Tesla
    question gave "Where did Tesla work before moving to the US?"). Such a question shares no
    word with an off-topic answer and counts 0; a terse answer (a date) is not held to it."""
    from cofe.evalset import EvalSample
    from cofe.judges import JudgeInputs, judge_one
    from cofe.judges._sense import from_answer

    question = "Where did Tesla work before moving to the US?"
    off_topic = "The script was written by Terry Nation and rejected by Newman and Wilson."
    on_topic = "Tesla worked for Continental Edison in France before moving in 1884."
    assert not from_answer(question, off_topic) and from_answer(question, on_topic)
    assert from_answer(question, "In 1884.")  # too short to share a word with anything

    def claims_only(messages, request) -> str:
        answer = messages[1]["content"].split("Answer: ", 1)[1]
        return json.dumps(
            {"answer_claims": [answer], "questions": [question], "noncommittal": False}
        )

    class Same:
        def encode(self, texts):
            import numpy as np

            return np.array([(1.0, 0.0) for _ in texts])  # every cosine 1: only the rule acts

    sample = EvalSample(id="s", query=question)
    with ScriptedOpenAI(claims_only) as server:
        llm = LLMClient(Endpoint(server.base_url, "m", "x", timeout=10))
        for answer, expected in ((off_topic, 0.0), (on_topic, 1.0)):
            item = JudgeInputs(sample, answer, ("a passage",), None, None, None)
            judgement = judge_one(llm, item, Same())
            assert judgement.answer_relevancy == expected, answer
            assert any(r.startswith("question_not_from_answer") for r in judgement.repairs) == (
                expected == 0.0
            )


def test_judgements_read_by_older_sense_checks_are_read_again_from_the_cache(tmp_path):
    global CASES
    from cofe._cache import Cache
    from cofe.judges._sense import SENSE_REVISION

    cases = {sid: CASES[sid] for sid in ("copied", "inside")}
    run = make_run(tmp_path / "run", cases)
    saved, CASES = CASES, cases
    try:
        with ScriptedOpenAI(scripted) as server:
            cached = LLMClient(
                Endpoint(server.base_url, "judge-model", "secret", timeout=5),
                cache=Cache(tmp_path / "cache"),
            )
            first = judge_run(run, cached, concurrency=1)
            asked = len(server.requests)
            path = run / "judgements.jsonl"
            lines = [json.loads(x) for x in path.read_text().splitlines()]
            assert {line["sense"] for line in lines} == {SENSE_REVISION}
            path.write_text("".join(json.dumps({**x, "sense": 1}) + "\n" for x in lines))
            again = judge_run(run, cached, concurrency=1)
            assert (first.judged, again.judged, again.skipped) == (2, 2, 0)  # read again
            assert len(server.requests) == asked  # from the cache: no call
            assert judge_run(run, cached, concurrency=1).skipped == 2  # current now
    finally:
        CASES = saved
