"""Keyword matching: normalisation modes, bad-label checks, one-pass keyword index.

The answer matcher's names (``cofe.matching.answer``: some hundred rules and their tables)
load on first use, as ``cofe``'s do: a run without answers -- retrieval only, or the
CoFE-RAG setting -- is scored without loading them.
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names
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

if TYPE_CHECKING:
    from cofe.matching.answer import AnswerMatcher, DecidedBy, Decision, PointDecision, units

_HOMES = dict.fromkeys(
    ("AnswerMatcher", "Decision", "PointDecision", "DecidedBy", "units"), "cofe.matching.answer"
)

__all__ = [
    "STOPWORDS",
    "AnswerMatcher",
    "BadLabel",
    "CompiledPoint",
    "CompiledSample",
    "DecidedBy",
    "Decision",
    "KeywordCache",
    "KeywordIndex",
    "MatchMode",
    "PointDecision",
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

_lazy_getattr, __dir__ = lazy_names(__name__, _HOMES, __all__)


def __getattr__(name: str) -> object:
    """The public names on first use; ``Rule``, what decided a point before ``Rule`` meant
    one thing (cofe.rules), still resolves to ``DecidedBy``, with a warning."""
    if name == "Rule":
        import warnings

        warnings.warn(
            "cofe.matching.Rule is now cofe.matching.DecidedBy (cofe.rules.Rule is a rule as "
            "a rules file writes it)",
            DeprecationWarning,
            stacklevel=2,
        )
        name = "DecidedBy"
    return _lazy_getattr(name)
