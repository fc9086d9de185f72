"""Measure value objects. ``parse_measure("KeywordRecall@4")`` reads the CLI spelling."""

from cofe.measures._base import Measure, Unscored, parse_measure
from cofe.measures._view import Step, StepView
from cofe.measures.bleu import BLEU
from cofe.measures.chunk_integrity import ChunkIntegrity
from cofe.measures.coarse_precision import CoarsePrecision
from cofe.measures.doc_precision import DocPrecision
from cofe.measures.doc_recall import DocRecall
from cofe.measures.entity_anchoring import EntityAnchoring
from cofe.measures.keyword_accuracy import KeywordAccuracy
from cofe.measures.keyword_recall import KeywordRecall
from cofe.measures.ndcg import NDCG
from cofe.measures.rerank_gain import RerankGain
from cofe.measures.rerank_loss import RerankLoss
from cofe.measures.rouge_l import RougeL, RougeLRecall

__all__ = [
    "BLEU",
    "NDCG",
    "ChunkIntegrity",
    "CoarsePrecision",
    "DocPrecision",
    "DocRecall",
    "EntityAnchoring",
    "KeywordAccuracy",
    "KeywordRecall",
    "Measure",
    "RerankGain",
    "RerankLoss",
    "RougeL",
    "RougeLRecall",
    "Step",
    "StepView",
    "Unscored",
    "parse_measure",
]
