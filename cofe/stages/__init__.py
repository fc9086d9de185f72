"""Stage judges (parse, chunking, retrieval/reranking, generation) and the run scorer.

Names load on first use (as ``cofe``'s do): the results, the judges and the report import
the scoring settings and the compact record from here without loading the scorer, which
imports them -- no cycle, and no function-level import to hide one.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cofe.results import SCORE_FILES, ScoreResult, read_scores
    from cofe.stages._config import CoarseScope, ScoreConfig
    from cofe.stages._context import RunContext
    from cofe.stages._records import ChunkRef, Outputs, compact, read_compact
    from cofe.stages._stream import score_run, score_to_folder

_HOMES = {
    **dict.fromkeys(("SCORE_FILES", "ScoreResult", "read_scores"), "cofe.results"),
    **dict.fromkeys(("CoarseScope", "ScoreConfig"), "cofe.stages._config"),
    "RunContext": "cofe.stages._context",
    **dict.fromkeys(("ChunkRef", "Outputs", "compact", "read_compact"), "cofe.stages._records"),
    **dict.fromkeys(("score_run", "score_to_folder"), "cofe.stages._stream"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cofe.stages' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "SCORE_FILES",
    "ChunkRef",
    "CoarseScope",
    "Outputs",
    "RunContext",
    "ScoreConfig",
    "ScoreResult",
    "compact",
    "read_compact",
    "read_scores",
    "score_run",
    "score_to_folder",
]
