"""Scoring results: one versioned artefact that reports, comparisons and monitors read.

``score_run`` returns a ``ScoreResult``; ``ScoreResult.write(dir)`` stores it;
``read_scores(dir)`` gives the same object back. Nothing downstream reads the
scorer's internals.
"""

from cofe.results._files import (
    RESULTS_SCHEMA_VERSION,
    SCORE_FILES,
    SUMMARY,
    ScoresWriter,
    read_scores,
    scores_folder,
    spreadsheet_safe,
)
from cofe.results._result import ScoreResult
from cofe.results._rows import Coded, Rows, ScoredRows
from cofe.results._summary import (
    ProblemTally,
    ScoreSummary,
    SummaryAccumulator,
    answered_only,
    latency_rows,
    latency_table,
)

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "SCORE_FILES",
    "SUMMARY",
    "Coded",
    "ProblemTally",
    "Rows",
    "ScoreResult",
    "ScoreSummary",
    "ScoredRows",
    "ScoresWriter",
    "SummaryAccumulator",
    "answered_only",
    "latency_rows",
    "latency_table",
    "read_scores",
    "scores_folder",
    "spreadsheet_safe",
]
