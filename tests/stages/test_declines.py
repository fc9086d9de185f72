"""Refusals read with the points: whole, partial (per point declined), answered anyway, and
the two cases a team acts on differently -- declined although the context held the point
(the generator over-cautious) and declined what never reached the context (it behaved)."""

from __future__ import annotations

import pytest

from cofe import score_run
from tests.stages.test_answer_step import _decisions, make_run

ANSWERS = {
    # declines the second point, conveys the first: a partial refusal
    "partial": "Terry Nation created them. The provided context does not say how long episodes ran.",
    # a preamble, then the decline; conveys nothing: a refusal whole
    "preamble": (
        "The question asks about the Daleks' creator and episode length. I'm sorry, but the "
        "information provided does not include either."
    ),
    # says it cannot, then answers anyway (wrongly): an answer, not a refusal
    "anyway": (
        "The context does not state the episode length; however, each episode probably ran "
        "45 minutes. Terry Nation created them."
    ),
    # declines with a figure of its own: it attempted an answer, so not a refusal whole
    "attempt": "I cannot confirm who created them. Episodes were 30 minutes long in 1970.",
    # shows its working (figures read from the context), then concludes by declining both
    # points: the working does not answer, so it is a refusal whole
    "working": (
        "Step 1: the story was first broadcast on 21 December 1963. Step 2: the budget is "
        "$155,756 per episode. Therefore, based on the given context, I cannot determine who "
        "created them or how long each episode ran."
    ),
    # opens by declining both points, then says what the context holds instead, with figures
    # of its own that convey or contradict no point: a refusal whole
    "instead": (
        "The context does not say who created them or how long each episode ran. It only "
        "gives the budget of $155,756 per story, which is a different figure."
    ),
    # a figure point stated in no form in an answer that declines part of the question: the
    # figure was declined, not reworded ("25 minutes" would need its digits or its words)
    "no-figure": (
        "Terry Nation created them, and each episode ran for one standard slot. The context "
        "does not give the exact length."
    ),
}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    run = make_run(tmp_path_factory.mktemp("declines") / "run", ANSWERS)
    result = score_run(run)
    return result, result.verdicts.set_index("sample_id")


def test_a_partial_refusal_declines_only_the_point_it_lacks(scored):
    result, verdicts = scored
    assert _decisions(result, "partial") == [("present", "verbatim"), ("declined", "refusal")]
    row = verdicts.loc["partial"]
    assert row.verdict == "refused" and row.stage == "generation"
    assert "source-lacks" in row.explanation
    assert not isinstance(row.refusal, str)  # not a refusal whole: one point was conveyed


def test_a_preamble_then_a_decline_is_a_refusal_whole(scored):
    result, verdicts = scored
    assert {d for d, _ in _decisions(result, "preamble")} == {"declined"}
    row = verdicts.loc["preamble"]
    assert row.verdict == "refused" and "source-lacks" in row.refusal


def test_says_it_cannot_then_answers_is_judged_as_an_answer(scored):
    result, verdicts = scored
    assert _decisions(result, "anyway")[1][0] == "absent"  # 45 minutes is another value
    assert verdicts.loc["anyway", "verdict"] == "not_in_answer"
    assert not isinstance(verdicts.loc["anyway", "refusal"], str)


def test_a_decline_beside_a_figure_of_its_own_is_no_refusal_whole(scored):
    _, verdicts = scored
    assert not isinstance(verdicts.loc["attempt", "refusal"], str)


def test_working_shown_then_a_concluding_decline_is_a_refusal_whole(scored):
    result, verdicts = scored
    assert {d for d, _ in _decisions(result, "working")} == {"declined"}
    row = verdicts.loc["working"]
    assert row.verdict == "refused" and "cannot-verb" in row.refusal


def test_a_decline_that_opens_then_says_what_the_context_holds_instead_is_a_refusal_whole(
    scored,
):
    result, verdicts = scored
    assert {d for d, _ in _decisions(result, "instead")} == {"declined"}
    row = verdicts.loc["instead"]
    assert row.verdict == "refused" and "source-lacks" in row.refusal


def test_a_value_only_an_explaining_sentence_states_does_not_contradict_a_declined_point(
    tmp_path,
):
    # opens by declining, then says what the context holds instead with a value of the same
    # kind as a point's ("82 minutes" beside "25 minutes"), and answers the other point: the
    # explaining sentence states nothing in the point's place, so the length is declined;
    # the same value stated as the answer is another value
    answers = {
        "elsewhere": (
            "The context does not say how long each episode ran. It only gives the running "
            "time of the 1965 film, 82 minutes. Terry Nation created them."
        ),
        "stated": (
            "The context does not say who created them. Each episode ran 82 minutes in 1965."
        ),
    }
    points = [["Terry Nation"], ["25 minutes"]]
    result = score_run(make_run(tmp_path / "run", answers, {key: points for key in answers}))
    verdicts = result.verdicts.set_index("sample_id")
    assert [d for d, _ in _decisions(result, "elsewhere")] == ["present", "declined"]
    assert verdicts.loc["elsewhere", "verdict"] == "refused"
    # (it declines the creator, so it is still a partial refusal -- but not of the length)
    assert [d for d, _ in _decisions(result, "stated")] == ["declined", "absent"]


def test_a_figure_in_no_form_beside_a_decline_is_declined_not_undecided(scored):
    result, verdicts = scored
    assert _decisions(result, "no-figure") == [("present", "verbatim"), ("declined", "refusal")]
    assert not isinstance(verdicts.loc["no-figure", "refusal"], str)  # one point conveyed


def test_declining_what_never_reached_the_context_blames_the_stage_that_lost_it(tmp_path):
    run = make_run(
        tmp_path / "run",
        {"lost": "I'm sorry, but the context does not mention who created the Daleks."},
        points=[["Terry Nation"], ["created by Sydney Newman"]],  # the second is in no chunk
    )
    row = score_run(run).verdicts.set_index("sample_id").loc["lost"]
    assert row.verdict != "refused" and row.stage != "generation"
    assert "declines" in row.explanation and "rightly" in row.explanation


def test_refusal_rates_split_over_cautious_from_declined_rightly(tmp_path):
    declines = "I'm sorry, but the context does not mention who created the Daleks."
    run = make_run(
        tmp_path / "run",
        {"held": declines, "lost": declines, "answer": "Terry Nation created them."},
        # "lost" asks for a point no chunk holds: its refusal was right
        points={
            "held": [["Terry Nation"]],
            "lost": [["created by Sydney Newman"]],
            "answer": [["Terry Nation"]],
        },
    )
    rates = score_run(run).view().refusal_rates()
    assert rates["refused"] == 2 and rates["context_held"] == 1 and rates["context_lacked"] == 1


def test_a_sample_whose_record_is_invalid_is_unscorable_for_that(tmp_path):
    """Issue 44, defect 2: an invalid samples.jsonl record is named by line, and its sample
    is unscorable because the record was invalid -- not "the pipeline did not answer it"."""
    run = make_run(tmp_path / "run", {"ok": "Terry Nation created them.", "bad": "x"})
    samples = run / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"bad"' in line)
    lines[at] = lines[at].replace('"pool":[', '"pool":7,"x":[')  # no longer a record
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = score_run(run)
    row = result.verdicts.set_index("sample_id").loc["bad"]
    assert row.verdict == "unscorable"
    assert f"line {at + 1}" in row.explanation and "invalid" in row.explanation
    assert "did not answer" not in row.explanation
