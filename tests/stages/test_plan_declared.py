"""The scoring plan is read from what each measure declares (its steps, TAKEN_AT, NEEDS,
CUTOFF), not kept as a second list beside them."""

from __future__ import annotations

import pytest

from cofe.measures import (
    GATED,
    OWN,
    ContextRecall,
    JudgedMeasure,
    KeywordAccuracy,
    Measure,
    RerankLoss,
    Step,
)
from cofe.stages._shape import RunShape


def _shape(**changes: object) -> RunShape:
    full: dict[str, object] = dict(
        has_docs=True,
        has_chunks=True,
        has_pool=True,
        reranker=True,
        generation=True,
        pool_cutoff=30,
        top_k=5,
        top_k_from="",
        feeds_context=True,
        judged=True,
    )
    return RunShape(**{**full, **changes})  # type: ignore[arg-type]


def test_every_measure_is_planned_where_it_declares_and_nowhere_else() -> None:
    plan = _shape().plan()
    for kind in OWN:
        where = {step for step, measures in plan.items() if any(type(m) is kind for m in measures)}
        assert where == set(kind.taken_at()) & set(plan), kind.NAME


def test_the_pool_lists_each_cutoffs_measures_cutoff_by_cutoff() -> None:
    names = [m.name for m in _shape().plan()[Step.POOL]]
    assert names[:4] == [
        "KeywordRecall@30",
        "KeywordAccuracy@30",
        "KeywordRecall@5",
        "KeywordAccuracy@5",
    ]
    assert "DocRecall@5" in names  # a top-K measure at the pool: at top-K


def test_a_declaration_changed_changes_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    unranked = _shape(reranker=False)
    assert RerankLoss(5) not in unranked.plan()[Step.CONTEXT]
    monkeypatch.setattr(RerankLoss, "NEEDS", frozenset())
    assert RerankLoss(5) in unranked.plan()[Step.CONTEXT]
    monkeypatch.setattr(KeywordAccuracy, "TAKEN_AT", frozenset({Step.ANSWER}))
    plan = _shape().plan()
    assert KeywordAccuracy() in plan[Step.ANSWER]
    assert not any(type(m) is KeywordAccuracy for m in plan[Step.POOL])


def test_needs_are_declared_not_inferred() -> None:
    no_k = _shape(top_k=None).plan()
    assert not any(type(m) is ContextRecall for m in no_k[Step.CONTEXT])  # Need.TOP_K
    unjudged = _shape(judged=False).plan()
    assert not any(isinstance(m, JudgedMeasure) for ms in unjudged.values() for m in ms)


def test_the_gated_measures_are_the_answers_judged_measures_reading_only_their_own() -> None:
    kinds = [type(m) for m in GATED]
    assert all(issubclass(k, JudgedMeasure) and not k.READS for k in kinds)
    others = [
        k for k in Measure.REGISTRY.values() if issubclass(k, JudgedMeasure) and k not in kinds
    ]
    assert all(k.READS or Step.ANSWER not in k.STEPS for k in others)
