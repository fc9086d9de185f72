"""Scoring results: one versioned artefact that reports, comparisons and monitors read.

``score_run`` returns a ``ScoreResult``; ``ScoreResult.write(dir)`` stores it;
``read_scores(dir)`` gives the same object back. Nothing downstream reads the
scorer's internals.
"""

from cofe.results._files import (
    RESULTS_SCHEMA_VERSION,
    SCORE_FILES,
    read_scores,
    scores_folder,
    spreadsheet_safe,
)
from cofe.results._result import ScoreResult
from cofe.results._summary import ScoreSummary, answered_only

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "SCORE_FILES",
    "ScoreResult",
    "ScoreSummary",
    "answered_only",
    "read_scores",
    "scores_folder",
    "spreadsheet_safe",
]
