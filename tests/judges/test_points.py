"""The judge's nugget assignment: each information point labelled in the checks call.

Every sample's two replies are scripted below (the loopback server answers
them by the sample's answer, which both prompts carry); the tests read what
``judgements.jsonl`` kept, what the scorer is handed (``labels_for_scoring``)
and what the server was asked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe import Chunk, EvalSample, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord
from cofe.evalset import AnyOf, SourceRef, write_evalset
from cofe.judges import JUDGEMENTS, PROMPT_VERSION, judge_run, labels_for_scoring, read_judgements
from cofe.judges._judge import judge_inputs, labels_of
from cofe.judges._prompts import _CHECKS_EN_NO_POINTS, _CHECKS_ZH, checks_messages
from cofe.judges._replies import PointCheck
from cofe.llm import Endpoint, LLMClient
from cofe.measures import ClaimLabels, Unscored
from cofe.runlog import read_compact
from cofe.testing import ScriptedOpenAI

SOURCE = (
    "Super Bowl 50 was played at Levi's Stadium in Santa Clara. "
    "The Denver Broncos beat the Carolina Panthers 24-10. Tickets cost $5,000. "
    "丹佛野马队以24比10赢得了比赛。"
)
CHUNKS = {
    "c1": "The Denver Broncos beat the Carolina Panthers 24-10.",
    "c2": "Super Bowl 50 was played at Levi's Stadium in Santa Clara.",
    "c3": "丹佛野马队以24比10赢得了比赛。",
    "c4": "Tickets cost $5,000.",
}
BAD = "not json at all"


def point(i: int, answer: str, context: str | None = None) -> dict:
    label = {"point": i, "answer": answer}
    return label if context is None else {**label, "context": context}


def claim(i: int) -> dict:
    return {"claim": i, "context": True, "source": True, "reference": True}


# sample id -> the sample, its record's context (None: the pool's first chunk), its answer,
# the claims reply, and the checks reply (a list: one per call, the last one repeated)
CASES = {
    "p0": (  # three points labelled out of order: kept in fine_keywords order
        EvalSample(
            id="p0",
            query="Who won Super Bowl 50, and by what score?",
            fine_keywords=[
                ["Denver Broncos"],
                [AnyOf(any_of=["24-10", "24–10"]), "Carolina Panthers"],
                ["Levi's Stadium"],
            ],
            reference_answer="The Denver Broncos beat the Carolina Panthers 24-10.",
        ),
        ["c1"],
        "The Denver Broncos won, 24 to 10.",
        {
            "answer_claims": ["The Denver Broncos won Super Bowl 50 24 to 10."],
            "reference_claims": ["The Denver Broncos beat the Carolina Panthers 24-10."],
        },
        [
            {
                "answer_claims": [claim(0)],
                "reference_claims": [{"claim": 0, "answer": True}],
                "points": [
                    point(2, "not_support", "not_support"),
                    point(0, "support", "support"),
                    point(1, "partial", "support"),
                ],
            }
        ],
    ),
    "p1": (  # a label for point 7 (there are two) and a second label for point 0: dropped
        EvalSample(
            id="p1",
            query="Where was Super Bowl 50 played?",
            fine_keywords=[["Levi's Stadium"], ["Santa Clara"]],
            reference_answer="At Levi's Stadium in Santa Clara.",
        ),
        ["c2"],
        "At Levi's Stadium.",
        {
            "answer_claims": ["Super Bowl 50 was played at Levi's Stadium."],
            "reference_claims": ["Super Bowl 50 was played at Levi's Stadium in Santa Clara."],
        },
        [
            {
                "answer_claims": [claim(0)],
                "reference_claims": [{"claim": 0, "answer": False}],
                "points": [
                    point(0, "support"),
                    point(7, "support", "support"),
                    point(0, "not_support", "not_support"),
                ],
            }
        ],
    ),
    "p2": (  # Chinese: the Chinese prompt, listing the points
        EvalSample(
            id="p2",
            query="第50届超级碗谁赢了？比分是多少？",
            fine_keywords=[["丹佛野马队"], [AnyOf(any_of=["24比10", "24:10"])]],
            reference_answer="丹佛野马队以24比10获胜。",
        ),
        ["c3"],
        "丹佛野马队赢了。",
        {
            "answer_claims": ["丹佛野马队赢得了第50届超级碗。"],
            "reference_claims": ["丹佛野马队以24比10赢得了第50届超级碗。"],
        },
        [
            {
                "answer_claims": [claim(0)],
                "reference_claims": [{"claim": 0, "answer": False}],
                "points": [point(0, "support", "support"), point(1, "not_support", "support")],
            }
        ],
    ),
    "p3": (  # no fine keywords: no points asked, none kept
        EvalSample(id="p3", query="What did tickets cost?", reference_answer="$5,000"),
        ["c4"],
        "Tickets cost $5,000.",
        {"answer_claims": ["Tickets cost $5,000."], "reference_claims": ["Tickets cost $5,000."]},
        [{"answer_claims": [claim(0)], "reference_claims": [{"claim": 0, "answer": True}]}],
    ),
    "p4": (  # a label outside the three values: repaired once
        EvalSample(
            id="p4",
            query="Who lost Super Bowl 50?",
            fine_keywords=[["Carolina Panthers"]],
            reference_answer="Carolina Panthers",
        ),
        ["c1"],
        "The Carolina Panthers lost.",
        {
            "answer_claims": ["The Carolina Panthers lost Super Bowl 50."],
            "reference_claims": ["The Carolina Panthers lost Super Bowl 50."],
        },
        [
            {
                "answer_claims": [claim(0)],
                "reference_claims": [{"claim": 0, "answer": True}],
                "points": [point(0, "maybe", "support")],
            },
            {
                "answer_claims": [claim(0)],
                "reference_claims": [{"claim": 0, "answer": True}],
                "points": [point(0, "support", "support")],
            },
        ],
    ),
    "p5": (  # invalid JSON, then an invalid repair: unscored with the reason
        EvalSample(
            id="p5",
            query="Who was the home team?",
            fine_keywords=[["Denver Broncos"]],
            reference_answer="The Denver Broncos",
        ),
        ["c1"],
        "The Broncos played at home.",
        {
            "answer_claims": ["The Broncos were the home team."],
            "reference_claims": ["The Denver Broncos were the home team."],
        },
        [BAD],
    ),
    "p6": (  # a refusal without a reference: no claim, but its point is still labelled
        EvalSample(
            id="p6",
            query="In which city was Super Bowl 50 played?",
            fine_keywords=[["Santa Clara"]],
        ),
        ["c2"],
        "I don't know.",
        {"answer_claims": [], "noncommittal": True},
        [{"answer_claims": [], "points": [point(0, "not_support", "support")]}],
    ),
    "p7": (  # the generator saw no context: no point is in it, whatever the judge says
        EvalSample(
            id="p7",
            query="Which city hosted Super Bowl 50?",
            fine_keywords=[["Santa Clara"]],
            reference_answer="Santa Clara",
        ),
        [],
        "Santa Clara hosted it.",
        {
            "answer_claims": ["Santa Clara hosted Super Bowl 50."],
            "reference_claims": ["Santa Clara hosted Super Bowl 50."],
        },
        [
            {
                "answer_claims": [{"claim": 0, "context": True, "source": True, "reference": True}],
                "reference_claims": [{"claim": 0, "answer": True, "context": True}],
                "points": [point(0, "support", "support")],
            }
        ],
    ),
}


def scripted(messages, request) -> str:
    """The claims call or the checks call of the sample whose answer the prompt carries; a
    repair turn (the conversation, then "not valid") gets the checks call's next reply."""
    system = messages[0]["content"]
    user = messages[1]["content"]
    repairs = sum(1 for m in messages[2:] if m["role"] == "assistant")
    for _sample, _context, answer, claims, checks in CASES.values():
        if f"Answer: {answer}\n" in user + "\n" or f"回答: {answer}\n" in user + "\n":
            if "fact checking" in system or "事实核查" in system:
                return json.dumps(claims, ensure_ascii=False)
            reply = checks[min(repairs, len(checks) - 1)]
            return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
    raise AssertionError(f"unexpected prompt: {user[:200]}")


def make_run(folder: Path, samples: list[EvalSample] | None = None) -> Path:
    samples = samples or [case[0] for case in CASES.values()]
    samples = [s.model_copy(update={"source": SourceRef(doc="sb.txt")}) for s in samples]
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(run_id="points", top_k=1, stages=["parse", "chunking", "retrieval", "generation"]),
        evalset,
    )
    writer.add_documents([ParsedDocument(doc_id="sb", source="sb.txt", text=SOURCE)])
    writer.add_chunks([Chunk(chunk_id=c, doc_id="sb", text=t) for c, t in CHUNKS.items()])
    writer.add_samples(
        SampleRecord(
            sample_id=sid,
            pool=[RankedChunk(chunk_id="c1", score=1.0)],
            context=[RankedChunk(chunk_id=c, score=1.0) for c in context],
            answer=answer,
        )
        for sid, (_s, context, answer, _cl, _ch) in CASES.items()
    )
    return folder


def client(server) -> LLMClient:
    return LLMClient(Endpoint(server.base_url, "judge-model", "secret", timeout=5, max_retries=1))


def scoring_labels(run: Path, samples: list[EvalSample] | None = None) -> dict:
    log, records = read_compact(run)
    return labels_for_scoring(run, log, records, samples or read_evalset_samples(run))


def read_evalset_samples(run: Path) -> list[EvalSample]:
    from cofe.evalset import read_evalset

    return read_evalset(run / "evalset.jsonl").samples


def checks_requests(server, answer: str) -> list[dict]:
    """The checks calls (with repairs) the server received for the sample with ``answer``."""
    return [
        r
        for r in server.requests
        if "fact checking" not in r["messages"][0]["content"]
        and "事实核查" not in r["messages"][0]["content"]
        and (
            f"Answer: {answer}\n" in r["messages"][1]["content"] + "\n"
            or f"回答: {answer}\n" in r["messages"][1]["content"] + "\n"
        )
    ]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("points") / "run")
    with ScriptedOpenAI(scripted) as server:
        report = judge_run(run, client(server), concurrency=3)
    return run, report, server


def test_point_labels_round_trip_in_fine_keywords_order(judged):
    run, report, _server = judged
    assert (report.judged, report.unscored) == (7, 1)
    lines = {
        json.loads(line)["sample_id"]: json.loads(line)
        for line in (run / JUDGEMENTS).read_text().splitlines()
    }
    assert lines["p0"]["prompt_version"] == PROMPT_VERSION == "judge-7"
    assert lines["p0"]["points"] == [
        {"point": 0, "answer": "support", "context": "support"},
        {"point": 1, "answer": "partial", "context": "support"},
        {"point": 2, "answer": "not_support", "context": "not_support"},
    ]
    assert lines["p0"]["dropped_labels"] == 0
    labels = scoring_labels(run)
    p0 = labels["p0"]
    assert isinstance(p0, ClaimLabels)
    assert p0.points == ("support", "partial", "not_support")
    assert p0.points_in_context == ("support", "support", "not_support")
    # the claim labels are as before
    assert p0.context == (True,) and p0.reference_in_answer == (True,)
    # Chinese, and a repaired reply
    assert labels["p2"].points == ("support", "not_support")
    assert labels["p2"].points_in_context == ("support", "support")
    assert labels["p4"].points == ("support",) and labels["p4"].points_in_context == ("support",)


def test_a_label_for_no_such_point_is_dropped_and_counted_and_a_missing_one_is_none(judged):
    run, _report, _server = judged
    p1 = read_judgements(run)["p1"]
    assert p1.status == "judged"
    assert p1.dropped_labels == 2  # point 7 of 2, and a second label for point 0
    labels = scoring_labels(run)["p1"]
    assert labels.points == ("support", None)  # the first label of point 0 is kept
    assert labels.points_in_context == (None, None)  # the judge left "context" out


def test_a_sample_without_fine_keywords_is_asked_no_points(judged):
    run, _report, server = judged
    (request,) = checks_requests(server, "Tickets cost $5,000.")
    system, user = (m["content"] for m in request["messages"])
    assert system == _CHECKS_EN_NO_POINTS
    assert '"points"' not in system and "Information points" not in user
    assert read_judgements(run)["p3"].points == []
    labels = scoring_labels(run)["p3"]
    assert labels.points == () and labels.points_in_context == ()


def test_the_english_prompt_lists_the_points_with_their_alternatives(judged):
    _run, _report, server = judged
    (request,) = checks_requests(server, "The Denver Broncos won, 24 to 10.")
    system, user = (m["content"] for m in request["messages"])
    assert '"points"' in system and '"not_support"' in system and '"partial"' in system
    assert user.endswith(
        "Information points:\n0. Denver Broncos\n1. 24-10 / 24–10; Carolina Panthers\n"
        "2. Levi's Stadium"
    )


def test_a_chinese_sample_gets_the_chinese_prompt_listing_its_points(judged):
    _run, _report, server = judged
    (request,) = checks_requests(server, "丹佛野马队赢了。")
    system, user = (m["content"] for m in request["messages"])
    assert system == _CHECKS_ZH
    assert "信息点" in system and "Information points" not in system
    assert user.endswith("信息点:\n0. 丹佛野马队\n1. 24比10 / 24:10")


def test_an_invalid_label_is_repaired_once_and_invalid_twice_is_unscored(judged):
    run, _report, server = judged
    judgements = read_judgements(run)
    assert len(checks_requests(server, "The Carolina Panthers lost.")) == 2  # call + repair
    assert judgements["p4"].status == "judged" and judgements["p4"].calls == 3
    p5 = judgements["p5"]
    assert p5.status == "unscored" and p5.points == []
    assert p5.reason.startswith("checks: invalid reply after one repair")
    assert len(checks_requests(server, "The Broncos played at home.")) == 2
    unscored = scoring_labels(run)["p5"]
    assert isinstance(unscored, Unscored) and "invalid reply after one repair" in unscored.reason


def test_a_refusal_still_gets_its_points_labelled_in_the_checks_call(judged):
    run, _report, server = judged
    p6 = read_judgements(run)["p6"]
    assert p6.status == "judged" and p6.claims == [] and p6.calls == 2
    (request,) = checks_requests(server, "I don't know.")
    assert "Information points:\n0. Santa Clara" in request["messages"][1]["content"]
    labels = scoring_labels(run)["p6"]
    assert labels.points == ("not_support",) and labels.points_in_context == ("support",)


def test_an_empty_context_conveys_no_point(judged):
    run, _report, _server = judged
    labels = scoring_labels(run)["p7"]
    assert labels.points == ("support",)  # the answer conveys it
    assert labels.points_in_context == ("not_support",)  # the context was empty


def test_labels_of_without_the_point_count_reads_what_was_labelled(judged):
    run, _report, _server = judged
    judgement = read_judgements(run)["p0"]
    assert labels_of(judgement).points == ("support", "partial", "not_support")
    assert labels_of(judgement, 4).points == ("support", "partial", "not_support", None)
    assert labels_of(read_judgements(run)["p3"]).points == ()


def test_a_changed_information_point_makes_the_judgement_judged_on_other_inputs(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server), concurrency=3)
        samples = read_evalset_samples(run)
        changed = [
            s.model_copy(update={"fine_keywords": [["Denver Broncos"], ["24-10"]]})
            if s.id == "p0"
            else s
            for s in samples
        ]
        labels = scoring_labels(run, changed)
        assert isinstance(labels["p0"], Unscored) and "other inputs" in labels["p0"].reason
        assert isinstance(labels["p1"], ClaimLabels)  # the others are unchanged
        # the eval set the run holds changed: that sample alone is judged again
        write_evalset_in_run(run, changed)
        before = len(server.requests)
        report = judge_run(run, client(server), concurrency=1)
        asked = server.requests[before:]
    assert (report.skipped, report.judged, report.unscored) == (6, 1, 1)  # p0; p5 (unscored)
    questions = {
        r["messages"][1]["content"].split("\n")[0]
        for r in asked
        if r["messages"][1]["content"].startswith("Question:")
    }
    assert questions == {
        "Question: Who won Super Bowl 50, and by what score?",
        "Question: Who was the home team?",
    }
    assert read_judgements(run)["p0"].points[1].point == 1
    assert isinstance(scoring_labels(run)["p0"], ClaimLabels)


def write_evalset_in_run(run: Path, samples: list[EvalSample]) -> None:
    write_evalset(run / "evalset.jsonl", samples)


def test_a_finished_sample_in_judgements_jsonl_is_not_asked_again(tmp_path):
    """Resume: a judgements.jsonl holding one finished sample (as a killed pass leaves it)."""
    first, second = make_run(tmp_path / "first"), make_run(tmp_path / "second")
    with ScriptedOpenAI(scripted) as server:
        judge_run(first, client(server), concurrency=3)
        kept = [
            line
            for line in (first / JUDGEMENTS).read_text().splitlines()
            if json.loads(line)["sample_id"] == "p0"
        ]
        (second / JUDGEMENTS).write_text(kept[0] + "\n")
        before = len(server.requests)
        report = judge_run(second, client(server), concurrency=3)
        asked = server.requests[before:]
    assert report.skipped == 1 and report.judged + report.unscored == 7
    assert not any(
        "Who won Super Bowl 50, and by what score?" in r["messages"][1]["content"] for r in asked
    )
    labels = scoring_labels(second)
    assert labels["p0"].points == ("support", "partial", "not_support")
    assert labels["p2"].points == ("support", "not_support")


def test_the_dry_run_counts_the_points_in_its_token_estimate(tmp_path, capsys):
    from cofe.cli import main

    with_points = make_run(tmp_path / "with")
    without = make_run(
        tmp_path / "without",
        [case[0].model_copy(update={"fine_keywords": []}) for case in CASES.values()],
    )

    def estimate(run: Path) -> dict:
        assert main(["judge", str(run), "--dry-run"]) == 0
        return json.loads(capsys.readouterr().out)

    got, plain = estimate(with_points), estimate(without)
    assert got["samples_to_judge"] == plain["samples_to_judge"] == 8
    assert got["calls_at_most"] == 24  # claims, checks, a follow-up for unlabelled claims
    assert got["prompt_tokens_estimate"] > plain["prompt_tokens_estimate"]
    # the estimate is the real checks prompt's: the points section and the points rules
    from cofe.llm import estimate_tokens

    items, _ = judge_inputs(with_points)
    item = next(i for i in items if i.sample.id == "p0")
    real = checks_messages(
        item.sample.query,
        item.answer,
        item.context,
        item.source,
        item.reference,
        [item.answer],
        [item.reference],
        item.points,
    )
    bare = checks_messages(
        item.sample.query,
        item.answer,
        item.context,
        item.source,
        item.reference,
        [item.answer],
        [item.reference],
    )
    extra = sum(estimate_tokens(m["content"]) for m in real) - sum(
        estimate_tokens(m["content"]) for m in bare
    )
    assert extra > 0 and got["prompt_tokens_estimate"] - plain["prompt_tokens_estimate"] >= extra


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("support", "support"),
        ("Supported", "support"),
        ("partially supported", "partial"),
        ("PARTIAL", "partial"),
        ("not supported", "not_support"),
        ("not-support", "not_support"),
        ("unsupported", "not_support"),
    ],
)
def test_a_labels_spelling_is_read_as_one_of_the_three(written, label):
    check = PointCheck.model_validate({"point": 0, "answer": written, "context": written})
    assert (check.answer, check.context) == (label, label)


@pytest.mark.parametrize(
    "bad", [{"point": -1, "answer": "support"}, {"point": 0, "answer": "maybe"}, {"point": 0}]
)
def test_a_bad_point_check_is_refused(bad):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        PointCheck.model_validate(bad)
