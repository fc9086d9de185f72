"""LLM annotation: a folder of documents in, a checked eval set in the CoFE-RAG shape out.

``annotate(docs, out, client)`` cuts parsed documents into token-bounded
segments, asks an OpenAI-compatible model for up to one query of each type
(factual, analytical, comparative, tutorial) per segment with coarse and fine
keywords and a reference answer, checks every draft automatically
(``annotators._checks``), and writes the accepted samples; ``export_review``
and ``import_review`` take people's decisions in and out.
"""

from annotators._annotate import (
    TYPES,
    AnnotateConfig,
    AnnotationSummary,
    annotate,
    dry_run,
    load_documents,
    plan_segments,
    progress_path,
)
from annotators._checks import CHECKS, Checker, CheckStats, locate
from annotators._prompts import PROMPT_VERSION, build_messages, detect_language
from annotators._reply import DraftQuery, DraftReply
from annotators._review import ReviewResult, apply_review, export_review, import_review
from annotators._segment import Segment, segment_documents

__all__ = [
    "CHECKS",
    "PROMPT_VERSION",
    "TYPES",
    "AnnotateConfig",
    "AnnotationSummary",
    "CheckStats",
    "Checker",
    "DraftQuery",
    "DraftReply",
    "ReviewResult",
    "Segment",
    "annotate",
    "apply_review",
    "build_messages",
    "detect_language",
    "dry_run",
    "export_review",
    "import_review",
    "load_documents",
    "locate",
    "plan_segments",
    "progress_path",
    "segment_documents",
]
