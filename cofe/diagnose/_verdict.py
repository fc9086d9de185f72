"""Per-sample verdicts: the first stage that lost an information point, with evidence."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from cofe.runlog import Stage, StageError


class Verdict(StrEnum):
    PARSE_LOST = "parse_lost"
    CHUNK_SPLIT = "chunk_split"
    NOT_RETRIEVED = "not_retrieved"
    CUT_BY_RERANK = "cut_by_rerank"
    NOT_IN_ANSWER = "not_in_answer"
    PASS = "pass"
    PIPELINE_ERROR = "pipeline_error"
    UNSCORABLE = "unscorable"


LOSS_VERDICT = {
    Stage.PARSE: Verdict.PARSE_LOST,
    Stage.CHUNKING: Verdict.CHUNK_SPLIT,
    Stage.RETRIEVAL: Verdict.NOT_RETRIEVED,
    Stage.RERANKING: Verdict.CUT_BY_RERANK,
    Stage.GENERATION: Verdict.NOT_IN_ANSWER,
}
STAGE_ORDER = {stage: position for position, stage in enumerate(Stage)}


@dataclass(frozen=True, slots=True)
class StageOutcome:
    """One judged stage of one sample: per point, present or not, and why not."""

    stage: Stage
    hits: tuple[bool, ...]
    why: Callable[[int], str]  # point index -> why it is absent; called only for the verdict


@dataclass(frozen=True, slots=True)
class Diagnosis:
    verdict: Verdict
    stage: Stage | None
    explanation: str
    lost_at: tuple[Stage | None, ...]  # per point: the first stage where it was absent


def diagnose(
    point_labels: tuple[str, ...], outcomes: list[StageOutcome], error: StageError | None
) -> Diagnosis:
    """Walk the stages in pipeline order; the verdict is the earliest stage losing any point."""
    outcomes = sorted(outcomes, key=lambda outcome: STAGE_ORDER[outcome.stage])
    lost_at: list[Stage | None] = []
    reasons: list[Callable[[int], str] | None] = []
    for p in range(len(point_labels)):
        first = next((o for o in outcomes if not o.hits[p]), None)
        lost_at.append(first.stage if first else None)
        reasons.append(first.why if first else None)
    losses = [stage for stage in lost_at if stage is not None]
    first_loss = min(losses, key=STAGE_ORDER.__getitem__) if losses else None
    if error is not None and (
        first_loss is None or STAGE_ORDER[error.stage] <= STAGE_ORDER[first_loss]
    ):
        return Diagnosis(
            Verdict.PIPELINE_ERROR,
            error.stage,
            f"{error.stage} raised {error.type}: {error.message}",
            tuple(lost_at),
        )
    if first_loss is None:
        return Diagnosis(
            Verdict.PASS,
            None,
            "every information point reached the last judged stage",
            tuple(lost_at),
        )
    details = [
        f"point {p} [{point_labels[p]}]: {reasons[p](p)}"  # type: ignore[misc]
        for p, stage in enumerate(lost_at)
        if stage is first_loss
    ]
    return Diagnosis(LOSS_VERDICT[first_loss], first_loss, "; ".join(details), tuple(lost_at))
