"""Measure value objects. ``parse_measure("KeywordRecall@4")`` reads the CLI spelling."""

from cofe.measures._base import (
    ENTRY_POINTS,
    Measure,
    Need,
    load_plugins,
    parse_measure,
    parse_measures,
    register,
    spell_measures,
)
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

__all__ = [
    "BLEU",
    "ENTRY_POINTS",
    "NDCG",
    "NOT_JUDGED",
    "NO_CORRECTNESS",
    "NO_RELEVANCY",
    "NO_SIMILARITY",
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
    "DocPrecision",
    "DocRecall",
    "Docs",
    "EntityAnchoring",
    "Faithfulness",
    "Hallucination",
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
