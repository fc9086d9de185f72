"""The columns of every results table and their types: one definition for writing and reading."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from cofe.chain import POINT_COLUMNS, PointKind

if TYPE_CHECKING:
    import pandas as pd

ColumnKind: TypeAlias = Literal["object", "string", "boolean", "Int64", "float64", "int64"]
"""A column's pandas dtype, spelled as ``astype`` takes it."""

TEXT: Final = "object"  # never missing
MAYBE_TEXT: Final = "string"  # may be missing (<NA>)
FLAG: Final = "boolean"  # nullable: <NA> where the step was not judged
RANK: Final = "Int64"  # nullable integer: <NA> where the point was never complete
NUMBER: Final = "float64"
COUNT: Final = "int64"

_POINT_KINDS: dict[PointKind, ColumnKind] = {"flag": FLAG, "rank": RANK, "text": MAYBE_TEXT}

TABLES: dict[str, dict[str, ColumnKind]] = {
    "scores": {
        "sample_id": TEXT,
        "query_type": TEXT,
        "step": TEXT,
        "measure": TEXT,
        "value": NUMBER,
    },
    "points": {
        "sample_id": TEXT,
        "query_type": TEXT,
        "point": COUNT,
        "keywords": TEXT,
        # each step's own columns, as the chain declares them (parse, corpus, intact, ...,
        # pool_rank, context_rank, answer, answer_decision, answer_rule)
        **{name: _POINT_KINDS[kind] for name, kind in POINT_COLUMNS},
        "lost_at": MAYBE_TEXT,
    },
    "verdicts": {
        "sample_id": TEXT,
        "query_type": TEXT,
        "verdict": TEXT,
        "stage": MAYBE_TEXT,
        "points": COUNT,
        "explanation": TEXT,
        "source": MAYBE_TEXT,  # the eval set's source.doc: groups samples for clustered statistics
        "answered": FLAG,  # the record has an answer text (<NA>: no record)
        "refusal": MAYBE_TEXT,  # why the answer declines (cofe.diagnose.refusal_reason, or judge)
    },
    "skipped": {
        "sample_id": TEXT,
        "query_type": TEXT,
        "step": TEXT,
        "measure": TEXT,
        "reason": TEXT,
    },
    "recalls": {"sample_id": TEXT, "query_type": TEXT, "step": TEXT, "value": NUMBER},
    "latency": {"stage": TEXT, "mean": NUMBER, "p50": NUMBER, "p95": NUMBER, "n": COUNT},
}


# Text columns whose first character can come from a user's data (eval-set ids, keywords,
# file names); every other text column starts with cofe's own words (a step, a measure, a
# verdict, an explanation), so a spreadsheet formula can only start in these.
USER_TEXT = frozenset({"sample_id", "keywords", "cut_keywords", "dropped_keywords", "source"})


def typed(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """The frame with exactly the table's columns, in order, each of its declared type."""
    import pandas as pd

    empty = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return pd.DataFrame(
        {name: (frame.get(name, empty)).astype(kind) for name, kind in TABLES[table].items()}
    ).reset_index(drop=True)
