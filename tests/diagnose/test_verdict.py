import pandas as pd

from cofe.diagnose import StageOutcome, Step, Verdict, diagnose, waterfall
from cofe.runlog import Stage, StageError

STEP_OF = {
    Stage.PARSE: Step.PARSE,
    Stage.CHUNKING: Step.CORPUS,
    Stage.RETRIEVAL: Step.POOL,
    Stage.RERANKING: Step.CONTEXT,
    Stage.GENERATION: Step.ANSWER,
}


def outcome(stage, *hits):
    return StageOutcome(STEP_OF[stage], stage, tuple(hits), lambda p: f"lost at {stage}")


def unjudged(stage, reason):
    return StageOutcome(STEP_OF[stage], stage, None, unjudged=reason)


def test_the_earliest_losing_stage_wins_whatever_the_order_given():
    d = diagnose(
        ("a", "b"),
        [
            outcome(Stage.GENERATION, False, False),
            outcome(Stage.RETRIEVAL, True, False),
            outcome(Stage.CHUNKING, True, True),
        ],
        None,
    )
    assert d.verdict is Verdict.NOT_RETRIEVED and d.stage is Stage.RETRIEVAL
    assert d.lost_at == (Stage.GENERATION, Stage.RETRIEVAL)
    assert d.explanation == "point 1 [b]: lost at retrieval"


def test_pass_needs_a_judged_answer():
    """A sample judged only up to the context passes *to the context*, never a bare pass."""
    assert diagnose(("a",), [outcome(Stage.GENERATION, True)], None).verdict is Verdict.PASS
    upto = diagnose(("a",), [outcome(Stage.PARSE, True), outcome(Stage.RERANKING, True)], None)
    assert upto.verdict is Verdict.PASS_TO_CONTEXT and not upto.verdict.stage
    assert diagnose(("a",), [outcome(Stage.RETRIEVAL, True)], None).verdict is Verdict.PASS_TO_POOL
    no_answer = diagnose(
        ("a",), [outcome(Stage.RERANKING, True), unjudged(Stage.GENERATION, "no answer")], None
    )
    assert no_answer.verdict is Verdict.PASS_TO_CONTEXT and "no answer" in no_answer.explanation


def test_a_step_not_judged_before_the_loss_makes_the_verdict_unscorable():
    d = diagnose(
        ("a",),
        [
            unjudged(Stage.RETRIEVAL, "2 chunk id(s) not in the corpus"),
            outcome(Stage.GENERATION, False),
        ],
        None,
    )
    assert d.verdict is Verdict.UNSCORABLE and "not in the corpus" in d.explanation
    after = diagnose(
        ("a",), [outcome(Stage.RETRIEVAL, False), unjudged(Stage.GENERATION, "no answer")], None
    )
    assert after.verdict is Verdict.NOT_RETRIEVED


def test_a_verdict_is_a_stage_and_a_code():
    assert Verdict.CHUNK_SPLIT.stage is Verdict.CHUNK_DROPPED.stage is Stage.CHUNKING
    assert Verdict.CUT_BY_RERANK.stage is Stage.RERANKING
    assert Verdict.PASS.stage is None and Verdict.PASS.is_pass


def test_pass_and_errors():
    assert diagnose(("a",), [outcome(Stage.GENERATION, True)], None).verdict is Verdict.PASS
    error = StageError(stage=Stage.RERANKING, type="ValueError", message="boom")
    assert (
        diagnose(("a",), [outcome(Stage.RETRIEVAL, True)], error).verdict is Verdict.PIPELINE_ERROR
    )
    assert (
        diagnose(("a",), [outcome(Stage.RETRIEVAL, False)], error).verdict is Verdict.NOT_RETRIEVED
    )


def test_waterfall_orders_steps_and_counts_samples():
    recalls = pd.DataFrame(
        [
            ("s1", "factual", "pool", 1.0),
            ("s1", "factual", "corpus", 1.0),
            ("s2", "tutorial", "pool", 0.0),
        ],
        columns=["sample_id", "query_type", "step", "value"],
    )
    overall = waterfall(recalls)
    assert overall.step.astype(str).tolist() == ["corpus", "pool"]
    assert overall.set_index("step").loc["pool", "recall"] == 0.5
    assert len(waterfall(recalls, by_query_type=True)) == 3


def test_unsupported_claims_follow_lost_points_and_replace_a_pass():
    claims = ("Super Bowl 50 was played in Miami.",)
    complete = [outcome(Stage.RETRIEVAL, True), outcome(Stage.GENERATION, True)]
    d = diagnose(("a",), complete, None, claims)
    assert d.verdict is Verdict.UNSUPPORTED_CLAIMS and d.stage is Stage.GENERATION
    assert claims[0] in d.explanation
    # a lost point is the first finding, whatever the answer invents
    lossy = [outcome(Stage.RETRIEVAL, True), outcome(Stage.GENERATION, False)]
    assert diagnose(("a",), lossy, None, claims).verdict is Verdict.NOT_IN_ANSWER
    # judged only to the context: the answer's claims cannot make a verdict
    partial = [outcome(Stage.RETRIEVAL, True)]
    assert diagnose(("a",), partial, None, claims).verdict is Verdict.PASS_TO_POOL


def test_a_refusal_is_the_generators_verdict_never_an_earlier_stages_or_an_error():
    lost_at_answer = [outcome(Stage.RETRIEVAL, True), outcome(Stage.GENERATION, False)]
    d = diagnose(("a",), lost_at_answer, None, refusal='opens with a decline: "i don\'t know"')
    assert (d.verdict, d.stage) == (Verdict.REFUSED, Stage.GENERATION)
    assert d.explanation.startswith("the answer declines: opens with a decline")
    passed = diagnose(("a",), [outcome(Stage.GENERATION, True)], None, refusal="declines")
    assert passed.verdict is Verdict.REFUSED  # the points are there, but it declined
    earlier = [outcome(Stage.RETRIEVAL, False), outcome(Stage.GENERATION, False)]
    assert diagnose(("a",), earlier, None, refusal="declines").verdict is Verdict.NOT_RETRIEVED
    error = StageError(stage=Stage.GENERATION, type="Timeout", message="slow")
    assert diagnose(("a",), [], error, refusal="declines").verdict is Verdict.PIPELINE_ERROR


def answered(*conveyed):
    """The answer step with per-point decisions: True, False, or None (undecided)."""
    return StageOutcome(
        Step.ANSWER,
        Stage.GENERATION,
        tuple(c is not False for c in conveyed),
        lambda p: f"decided at the answer ({conveyed[p]})",
        undecided=tuple(c is None for c in conveyed),
        settle="run cofe judge",
    )


def test_an_undecided_point_is_never_blamed():
    context = outcome(Stage.RETRIEVAL, True, True)
    d = diagnose(("a", "b"), [context, answered(True, None)], None)
    assert d.verdict is Verdict.PASS_TO_POOL and d.stage is None
    assert d.lost_at == (None, None)
    assert "undecided for 1 point(s) (run cofe judge): point 1 [b]" in d.explanation
    # another point absent: that one is blamed, the undecided one is not named
    d = diagnose(("a", "b"), [context, answered(False, None)], None)
    assert d.verdict is Verdict.NOT_IN_ANSWER and d.lost_at == (Stage.GENERATION, None)
    assert "point 0 [a]" in d.explanation and "point 1" not in d.explanation
    # a loss before the answer still comes first
    d = diagnose(("a", "b"), [outcome(Stage.RETRIEVAL, True, False), answered(None, None)], None)
    assert d.verdict is Verdict.NOT_RETRIEVED


def test_an_answer_alone_undecided_is_unscorable_not_a_pass():
    d = diagnose(("a",), [answered(None)], None)
    assert d.verdict is Verdict.UNSCORABLE and "undecided" in d.explanation


def test_a_point_held_only_in_pieces_is_lost_where_it_was_split():
    """``split``: found at the corpus (its recall counts it) but in no one chunk, and no later
    step held it whole -- the corpus step lost it, whatever a later step says."""
    corpus = StageOutcome(
        Step.CORPUS,
        Stage.CHUNKING,
        (True, True),
        lambda p: "in pieces",
        lambda p: Verdict.CHUNK_SPLIT,
        split=(False, True),
    )
    d = diagnose(
        ("a", "b"),
        [corpus, outcome(Stage.RETRIEVAL, True, False), outcome(Stage.GENERATION, False, False)],
        None,
    )
    assert (d.verdict, d.stage) == (Verdict.CHUNK_SPLIT, Stage.CHUNKING)
    assert d.explanation == "point 1 [b]: in pieces"
    assert d.lost_at == (Stage.GENERATION, Stage.CHUNKING)
    whole = StageOutcome(Step.CORPUS, Stage.CHUNKING, (True, True), lambda p: "")
    assert (
        diagnose(("a", "b"), [whole, outcome(Stage.RETRIEVAL, True, False)], None).verdict
        is Verdict.NOT_RETRIEVED
    )
