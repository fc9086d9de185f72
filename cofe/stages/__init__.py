"""Stage judges (parse, chunking, retrieval/reranking, generation) and the run scorer.

Names load on first use (as ``cofe``'s do): the results, the judges and the report import
the scoring settings and the compact record from here without loading the scorer, which
imports them -- no cycle, and no function-level import to hide one.
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names

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

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
