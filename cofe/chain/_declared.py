"""The chain, declared once: what each stage and each step is, in pipeline order.

Everything that walks the chain -- the scorer (which step it judges, how it reads a step's
output from a sample record, the per-point columns it fills), ``diagnose``'s order and
verdicts, the results' columns, the summary's and the report's step order, ``cofe check``'s
default rules, the monitor's canary series -- reads these two tuples instead of spelling the
chain out again. ``Stage`` (written in run logs) and ``Step`` (in results) are defined here
too, so this module imports nothing of cofe: the run log and the measures import them from
here. Adding a stage or a step: docs/DESIGN.md, "The chain".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, TypeAlias


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


Reads: TypeAlias = Literal["documents", "corpus", "ranked", "text"]
"""What a step's output is, for the scorer: the run's parsed documents, its chunk corpus, a
ranked list of chunk ids in each sample record, or a text in each sample record."""

PointKind: TypeAlias = Literal["flag", "rank", "text"]
"""A per-point column: found or not (``flag``), the rank where the point became complete
(``rank``; empty: never), or words (``text``)."""


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
    # what the step's output is (None: nothing of its own -- a row another step's judge fills)
    reads: Reads | None = None
    # the ``SampleRecord`` field holding it, for a "ranked" or a "text" step. A step whose
    # field is none of the pool, the context and the answer is judged by the scorer's generic
    # reader of its kind: a new step needs no scorer code
    field: str | None = None
    # its columns of the points table (one value per information point), in table order; a
    # step read generically fills its first: the point's rank in the list, or found in the text
    columns: tuple[tuple[str, PointKind], ...] = ()


STAGE_SPECS: tuple[StageSpec, ...] = (
    StageSpec(Stage.PARSE, "Parsing", "parse_lost", ("parse_lost",)),
    StageSpec(Stage.CHUNKING, "Chunking", "chunk_split",
              ("chunk_split", "chunk_dropped", "chunk_unanchored", "not_in_corpus")),
    StageSpec(Stage.RETRIEVAL, "Retrieval", "not_retrieved", ("not_retrieved", "derivation_lost")),
    StageSpec(Stage.RERANKING, "Reranking", "cut_by_rerank", ("cut_by_rerank",)),
    StageSpec(Stage.GENERATION, "Generation", "not_in_answer",
              ("refused", "not_in_answer", "unsupported_claims")),
)  # fmt: skip

STEP_SPECS: tuple[StepSpec, ...] = (
    StepSpec(Step.PARSE, "Parsed text", Stage.PARSE, "pass_to_parse", "KeywordRecall",
             reads="documents", columns=(("parse", "flag"),)),
    StepSpec(Step.CORPUS, "Chunk corpus", Stage.CHUNKING, "pass_to_corpus", "KeywordRecall",
             reads="corpus", columns=(
                 ("corpus", "flag"),
                 ("intact", "flag"),  # one chunk holds the whole point (the chunk-intact row)
                 ("anchored", "flag"),  # a chunk holding it whole names the entity
                 ("cut_keywords", "text"),  # keywords a chunk boundary cut
                 ("dropped_keywords", "text"),  # keywords in text no chunk covers
             )),
    StepSpec(Step.CHUNK_INTACT, "One chunk holds it", Stage.CHUNKING, None, None),
    StepSpec(Step.POOL, "Candidate pool", Stage.RETRIEVAL, "pass_to_pool", "KeywordRecall",
             reads="ranked", field="pool", columns=(("pool_rank", "rank"),)),
    StepSpec(Step.CONTEXT, "Context", None, "pass_to_context", "KeywordRecall",
             reads="ranked", field="context", columns=(("context_rank", "rank"),)),
    StepSpec(Step.ANSWER, "Answer", Stage.GENERATION, "pass", "PointRecall",
             reads="text", field="answer", columns=(
                 ("answer", "flag"),  # every keyword found verbatim (answer/KeywordRecall)
                 ("answer_decision", "text"),  # present / partial / absent / undecided
                 ("answer_rule", "text"),  # what decided: verbatim / judge / paraphrase
             )),
)  # fmt: skip

_STAGES = {spec.stage: spec for spec in STAGE_SPECS}
_STEPS = {spec.step: spec for spec in STEP_SPECS}
STAGE_ORDER: dict[Stage, int] = {spec.stage: i for i, spec in enumerate(STAGE_SPECS)}
STEP_ORDER: dict[Step, int] = {spec.step: i for i, spec in enumerate(STEP_SPECS)}
STEP_STAGE: dict[Step, Stage] = {s.step: s.stage for s in STEP_SPECS if s.stage is not None}
"""The stage whose output each step holds (the context's depends on the run)."""
PASSES: frozenset[str] = frozenset(s.passes for s in STEP_SPECS if s.passes is not None)
"""Every pass verdict: a sample holding every point as far as it was judged."""
POINT_COLUMNS: tuple[tuple[str, PointKind], ...] = tuple(
    column for spec in STEP_SPECS for column in spec.columns
)
"""The per-point columns of every step, in step order (the points table between a point's
keywords and ``lost_at``)."""

# the old names of the two declarations (kept for code written against them)
STAGES = STAGE_SPECS
STEPS = STEP_SPECS


def stage_spec(stage: Stage | str) -> StageSpec:
    return _STAGES[Stage(stage)]


def step_spec(step: Step | str) -> StepSpec:
    return _STEPS[Step(step)]


def _check() -> None:
    """The declarations cover each enum member once, in the enums' order, and each step's
    record field, pass verdict and first column agree with what it holds."""
    assert [s.stage for s in STAGE_SPECS] == list(Stage), (
        "STAGE_SPECS must list every Stage in order"
    )
    assert [s.step for s in STEP_SPECS] == list(Step), "STEP_SPECS must list every Step in order"
    for spec in STEP_SPECS:
        assert (spec.field is not None) == (spec.reads in ("ranked", "text")), (
            f"step {spec.step}: a ranked or text step names its SampleRecord field, no other"
        )
        assert (spec.passes is not None) == (spec.reads is not None), (
            f"step {spec.step}: a step the scorer judges has a pass verdict, no other"
        )
        first = {"ranked": "rank", "text": "flag"}.get(spec.reads or "")
        assert first is None or not spec.columns or spec.columns[0][1] == first, (
            f"step {spec.step}: the first column of a {spec.reads} step holds a {first}"
        )
    names = [name for name, _ in POINT_COLUMNS]
    assert len(set(names)) == len(names), "a per-point column is declared twice"


_check()
