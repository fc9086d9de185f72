import pandas as pd

from cofe.diagnose import StageOutcome, Verdict, diagnose, waterfall
from cofe.runlog import Stage, StageError


def outcome(stage, *hits):
    return StageOutcome(stage, tuple(hits), lambda p: f"lost at {stage}")


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


def test_pass_and_errors():
    assert diagnose(("a",), [outcome(Stage.PARSE, True)], None).verdict is Verdict.PASS
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
