"""Keyword matching: normalisation modes, bad-label checks, one-pass keyword index."""

from cofe.matching._compile import (
    BadLabel,
    CompiledPoint,
    CompiledSample,
    KeywordCache,
    compile_sample,
    inflections,
    keyword_texts,
    register_keywords,
)
from cofe.matching._index import KeywordIndex, UnitIndex, fuzzy_in
from cofe.matching._labels import STOPWORDS, label_problem
from cofe.matching._normalize import (
    MatchMode,
    is_cjk,
    normalize_cofe_rag,
    normalize_strict,
    normalizer,
    strict_tokens,
    surface,
)
from cofe.matching.answer import AnswerMatcher, Decision, PointDecision, Rule, units

__all__ = [
    "STOPWORDS",
    "AnswerMatcher",
    "BadLabel",
    "CompiledPoint",
    "CompiledSample",
    "Decision",
    "KeywordCache",
    "KeywordIndex",
    "MatchMode",
    "PointDecision",
    "Rule",
    "UnitIndex",
    "compile_sample",
    "fuzzy_in",
    "inflections",
    "is_cjk",
    "keyword_texts",
    "label_problem",
    "normalize_cofe_rag",
    "normalize_strict",
    "normalizer",
    "register_keywords",
    "strict_tokens",
    "surface",
    "units",
]
