"""Stage judges (parse, chunking, retrieval/reranking, generation) and the run scorer."""

from cofe.stages._config import ScoreConfig
from cofe.stages._context import RunContext
from cofe.stages._result import SCORE_FILES, ScoreResult
from cofe.stages._scorer import score_run

__all__ = ["SCORE_FILES", "RunContext", "ScoreConfig", "ScoreResult", "score_run"]
