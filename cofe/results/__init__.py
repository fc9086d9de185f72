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
    csv_rows,
    read_scores,
    scores_folder,
    spreadsheet_safe,
)
from cofe.results._result import ScoreResult
from cofe.results._summary import (
    ProblemTally,
    ScoreSummary,
    SummaryAccumulator,
    answered_only,
    latency_table,
)

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "SCORE_FILES",
    "SUMMARY",
    "ProblemTally",
    "ScoreResult",
    "ScoreSummary",
    "ScoresWriter",
    "SummaryAccumulator",
    "answered_only",
    "csv_rows",
    "latency_table",
    "read_scores",
    "scores_folder",
    "spreadsheet_safe",
]
