"""Stage judges (parse, chunking, retrieval/reranking, generation) and the run scorer."""

from cofe.results import SCORE_FILES, ScoreResult, read_scores
from cofe.stages._config import CoarseScope, ScoreConfig
from cofe.stages._context import RunContext
from cofe.stages._stream import score_run, score_to_folder

__all__ = [
    "SCORE_FILES",
    "CoarseScope",
    "RunContext",
    "ScoreConfig",
    "ScoreResult",
    "read_scores",
    "score_run",
    "score_to_folder",
]
