"""Stage judges (parse, chunking, retrieval/reranking, generation) and the run scorer.

Names load on first use (as ``cofe``'s do): importing the scoring settings does not load
the scorer. ``Outputs`` and ``read_compact`` live in ``cofe.runlog`` (run-log reading) and
``ScoreConfig`` in ``cofe.config``; they are re-exported here under their old path.
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names

if TYPE_CHECKING:
    from cofe.config import CoarseScope, ScoreConfig  # their old path
    from cofe.results import SCORE_FILES, ScoreResult, read_scores
    from cofe.runlog import ChunkRef, CompactRecord, Outputs, compact, read_compact  # old home
    from cofe.stages._context import RunContext
    from cofe.stages._stream import LabelReader, score_run, score_to_folder

_HOMES = {
    **dict.fromkeys(("SCORE_FILES", "ScoreResult", "read_scores"), "cofe.results"),
    **dict.fromkeys(("CoarseScope", "ScoreConfig"), "cofe.config"),
    "RunContext": "cofe.stages._context",
    **dict.fromkeys(
        ("ChunkRef", "CompactRecord", "Outputs", "compact", "read_compact"), "cofe.runlog"
    ),
    **dict.fromkeys(("LabelReader", "score_run", "score_to_folder"), "cofe.stages._stream"),
}


__all__ = [
    "SCORE_FILES",
    "ChunkRef",
    "CoarseScope",
    "CompactRecord",
    "LabelReader",
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
