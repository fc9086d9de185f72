"""The chain, declared once: what each stage and each step is, in pipeline order.

Everything that walks the chain -- the scorer's step-to-stage map, ``diagnose``'s order
and verdicts, the summary's and the report's step order, ``cofe check``'s default rules,
the monitor's canary series -- reads these two tuples instead of spelling the chain out
again. ``Stage`` (written in run logs) and ``Step`` (in results) are defined here too, so
this module imports nothing of cofe: the run log and the measures import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


# The stages of a RAG pipeline, in pipeline order. (No docstring: it would become the
# run-log JSON Schema's description of every stage field.)
class Stage(StrEnum):
    PARSE = "parse"
    CHUNKING = "chunking"
    RETRIEVAL = "retrieval"
    RERANKING = "reranking"
    GENERATION = "generation"


class Step(StrEnum):
    """Points of the chain where information is checked (and waterfall rows)."""

    PARSE = "parse"  # the parsed text of the documents
    CORPUS = "corpus"  # the chunk corpus
    CHUNK_INTACT = "chunk-intact"  # a single chunk holds the whole point (waterfall only)
    POOL = "pool"  # the retriever's candidate pool
    CONTEXT = "context"  # what the generator received (after reranking, or the pool's top-K)
    ANSWER = "answer"  # the generated answer


@dataclass(frozen=True, slots=True)
class StageSpec:
    """One stage of a RAG pipeline."""

    stage: Stage
    title: str
    loss: str  # the verdict of a point this stage lost (a ``cofe.diagnose.Verdict`` value)
    losses: tuple[str, ...]  # every verdict that blames this stage


@dataclass(frozen=True, slots=True)
class StepSpec:
    """One point of the chain where information is checked."""

    step: Step
    title: str
    # whose output this step holds; None: the context, the reranker's output when the run
    # has one and its pool was recorded, else the retriever's top-K (``RunShape.context_stage``)
    stage: Stage | None
    # the verdict of a sample holding every point up to here (None: a waterfall row only)
    passes: str | None
    # the measure ``cofe check`` guards at this step with no rule given (None: none)
    headline: str | None


STAGES: tuple[StageSpec, ...] = (
    StageSpec(Stage.PARSE, "Parsing", "parse_lost", ("parse_lost",)),
    StageSpec(Stage.CHUNKING, "Chunking", "chunk_split",
              ("chunk_split", "chunk_dropped", "not_in_corpus")),
    StageSpec(Stage.RETRIEVAL, "Retrieval", "not_retrieved", ("not_retrieved", "derivation_lost")),
    StageSpec(Stage.RERANKING, "Reranking", "cut_by_rerank", ("cut_by_rerank",)),
    StageSpec(Stage.GENERATION, "Generation", "not_in_answer",
              ("refused", "not_in_answer", "unsupported_claims")),
)  # fmt: skip

STEPS: tuple[StepSpec, ...] = (
    StepSpec(Step.PARSE, "Parsed text", Stage.PARSE, "pass_to_parse", "KeywordRecall"),
    StepSpec(Step.CORPUS, "Chunk corpus", Stage.CHUNKING, "pass_to_corpus", "KeywordRecall"),
    StepSpec(Step.CHUNK_INTACT, "One chunk holds it", Stage.CHUNKING, None, None),
    StepSpec(Step.POOL, "Candidate pool", Stage.RETRIEVAL, "pass_to_pool", "KeywordRecall"),
    StepSpec(Step.CONTEXT, "Context", None, "pass_to_context", "KeywordRecall"),
    StepSpec(Step.ANSWER, "Answer", Stage.GENERATION, "pass", "PointRecall"),
)  # fmt: skip

_STAGES = {spec.stage: spec for spec in STAGES}
_STEPS = {spec.step: spec for spec in STEPS}
STAGE_ORDER: dict[Stage, int] = {spec.stage: i for i, spec in enumerate(STAGES)}
STEP_ORDER: dict[Step, int] = {spec.step: i for i, spec in enumerate(STEPS)}
STEP_STAGE: dict[Step, Stage] = {s.step: s.stage for s in STEPS if s.stage is not None}
PASSES: frozenset[str] = frozenset(s.passes for s in STEPS if s.passes is not None)
"""Every pass verdict: a sample holding every point as far as it was judged."""
"""The stage whose output each step holds (the context's depends on the run)."""


def stage_spec(stage: Stage | str) -> StageSpec:
    return _STAGES[Stage(stage)]


def step_spec(step: Step | str) -> StepSpec:
    return _STEPS[Step(step)]


def _check() -> None:
    """The declarations cover each enum member once, in the enums' order."""
    assert [s.stage for s in STAGES] == list(Stage), "STAGES must list every Stage in order"
    assert [s.step for s in STEPS] == list(Step), "STEPS must list every Step in order"


_check()
