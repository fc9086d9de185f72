"""A judged value missing as a whole is the Unscored saying why: one spelling, no x/no_x pair."""

from __future__ import annotations

import dataclasses

from cofe.measures import (
    ClaimLabels,
    ClaimPrecision,
    Faithfulness,
    Hallucination,
    SourceFaithfulness,
    Step,
    StepView,
    Unscored,
)

NO_SOURCE = Unscored("the sample names no source document")
NO_REFERENCE = Unscored("the sample has no reference answer")


def _view(labels: ClaimLabels) -> StepView:
    return StepView(Step.ANSWER, (), claims=labels)


def test_no_reason_field_beside_a_value() -> None:
    names = {f.name for f in dataclasses.fields(ClaimLabels)}
    assert not {n for n in names if n.startswith("no_")}


def test_labels_missing_as_a_whole_pass_their_reason_on() -> None:
    labels = ClaimLabels(
        context=(True, False),
        source=NO_SOURCE,
        reference=NO_REFERENCE,
        reference_in_answer=(),
        texts=("a", "b"),
    )
    assert SourceFaithfulness().evaluate(_view(labels)) == NO_SOURCE
    assert ClaimPrecision().evaluate(_view(labels)) == NO_REFERENCE
    assert Hallucination().evaluate(_view(labels)) == NO_REFERENCE
    assert Faithfulness().evaluate(_view(labels)) == 0.5  # the context labels stand
    assert labels.unsupported() == ()  # without a source, no claim is called invented


def test_labels_present_are_read() -> None:
    labels = ClaimLabels(
        context=(True, False),
        source=(True, False),
        reference=(True, None),
        reference_in_answer=(True,),
        texts=("a", "b"),
    )
    assert SourceFaithfulness().evaluate(_view(labels)) == 0.5
    assert ClaimPrecision().evaluate(_view(labels)) == Unscored(
        "the claims were not checked against the reference answer"
    )
    assert labels.unsupported() == ("b",)
