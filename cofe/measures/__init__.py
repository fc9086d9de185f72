"""Measure value objects. ``parse_measure("KeywordRecall@4")`` reads the CLI spelling."""

from cofe.measures._base import (
    ENTRY_POINTS,
    Cutoff,
    Measure,
    Need,
    load_plugins,
    parse_measure,
    parse_measures,
    register,
    spell_measures,
)
from cofe.measures._judged_measure import JudgedMeasure
from cofe.measures._unscored import Unscored, value_or
from cofe.measures._view import (
    NO_CORRECTNESS,
    NO_RELEVANCY,
    NO_SIMILARITY,
    NOT_JUDGED,
    ClaimLabels,
    Docs,
    Step,
    StepView,
)
from cofe.measures.answer_correctness import (
    AnswerCorrectness,
    ClaimPrecision,
    ClaimRecall,
    CorrectnessScore,
)
from cofe.measures.answer_relevancy import AnswerRelevancy, AnswerSimilarity
from cofe.measures.bleu import BLEU
from cofe.measures.chunk_integrity import ChunkIntegrity
from cofe.measures.coarse_precision import CoarsePrecision
from cofe.measures.context_llm import ContextPrecision, ContextRecall
from cofe.measures.doc_precision import DocPrecision
from cofe.measures.doc_recall import DocRecall
from cofe.measures.entity_anchoring import EntityAnchoring
from cofe.measures.faithfulness import Faithfulness, Hallucination, SelfKnowledge
from cofe.measures.keyword_accuracy import KeywordAccuracy
from cofe.measures.keyword_recall import KeywordRecall
from cofe.measures.ndcg import NDCG
from cofe.measures.point_recall import PointRecall
from cofe.measures.rerank_gain import RerankGain
from cofe.measures.rerank_loss import RerankLoss
from cofe.measures.rouge_l import RougeL, RougeLRecall
from cofe.measures.source_faithfulness import SourceFaithfulness

OWN: tuple[type[Measure], ...] = (
    PointRecall,
    KeywordRecall,
    KeywordAccuracy,
    ChunkIntegrity,
    EntityAnchoring,
    CoarsePrecision,
    DocRecall,
    DocPrecision,
    NDCG,
    RougeLRecall,
    RerankLoss,
    RerankGain,
    ContextRecall,
    ContextPrecision,
    BLEU,
    RougeL,
    Faithfulness,
    SourceFaithfulness,
    ClaimPrecision,
    ClaimRecall,
    AnswerCorrectness,
    CorrectnessScore,
    Hallucination,
    SelfKnowledge,
    AnswerRelevancy,
    AnswerSimilarity,
)
"""cofe's own measures, each taken by every scoring whose run has what it declares (its
steps, ``TAKEN_AT``, ``NEEDS``, ``CUTOFF``), in the order a step's measures are reported."""

__all__ = [
    "BLEU",
    "ENTRY_POINTS",
    "GATED",
    "NDCG",
    "NOT_JUDGED",
    "NO_CORRECTNESS",
    "NO_RELEVANCY",
    "NO_SIMILARITY",
    "OWN",
    "AnswerCorrectness",
    "AnswerRelevancy",
    "AnswerSimilarity",
    "ChunkIntegrity",
    "ClaimLabels",
    "ClaimPrecision",
    "ClaimRecall",
    "CoarsePrecision",
    "ContextPrecision",
    "ContextRecall",
    "CorrectnessScore",
    "Cutoff",
    "DocPrecision",
    "DocRecall",
    "Docs",
    "EntityAnchoring",
    "Faithfulness",
    "Hallucination",
    "JudgedMeasure",
    "KeywordAccuracy",
    "KeywordRecall",
    "Measure",
    "Need",
    "PointRecall",
    "RerankGain",
    "RerankLoss",
    "RougeL",
    "RougeLRecall",
    "SelfKnowledge",
    "SourceFaithfulness",
    "Step",
    "StepView",
    "Unscored",
    "load_plugins",
    "parse_measure",
    "parse_measures",
    "register",
    "spell_measures",
    "value_or",
]


GATED: tuple[JudgedMeasure, ...] = tuple(
    kind()
    for kind in OWN
    if issubclass(kind, JudgedMeasure) and Step.ANSWER in kind.STEPS and not kind.READS
)
"""The judged measures of the answer whose labels the judge's gates test (its agreement with
itself, its known-answer controls), read from their declarations: a measure that reads
other measures' labels (``READS``) is gated through them."""
