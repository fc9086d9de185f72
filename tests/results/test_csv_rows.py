"""The fast CSV writer writes what pandas' to_csv writes, cell for cell."""

from __future__ import annotations

import io
import random

import numpy as np
import pandas as pd
import pytest

from cofe.results import Rows
from cofe.results._columns import TABLES, typed
from cofe.results._files import EOL, csv_chunks

TRICKY_TEXT = [
    "",
    " ",
    "plain",
    "a,b",
    'say "hi"',
    "line\nbreak",
    "cr\rhere",
    "'=1+1",
    "中文,逗号",
    "\t",
    '"',
    "trailing ",
    None,
]
TRICKY_NUMBERS = [0.0, -0.0, 0.1, 1 / 3, 1e-05, 1e16, 123456789.125, float("nan"), float("inf")]


def _pandas(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False, lineterminator=EOL)
    return buffer.getvalue()


def csv_rows(frame: pd.DataFrame, table: str, chunk: int = 100_000) -> str:
    return "".join(csv_chunks(Rows.of_frame(frame, table), chunk))


def _random_table(table: str, rows: int, rng: random.Random) -> pd.DataFrame:
    values: dict[str, list[object]] = {}
    for column, kind in TABLES[table].items():
        if kind == "float64":
            values[column] = [rng.choice(TRICKY_NUMBERS) for _ in range(rows)]
        elif kind in ("int64",):
            values[column] = [rng.randrange(-5, 10**12) for _ in range(rows)]
        elif kind == "Int64":
            values[column] = [rng.choice([None, 0, 7, 10**15]) for _ in range(rows)]
        elif kind == "boolean":
            values[column] = [rng.choice([None, True, False]) for _ in range(rows)]
        elif kind == "object":
            values[column] = [
                rng.choice([t for t in TRICKY_TEXT if t is not None]) for _ in range(rows)
            ]
        else:
            values[column] = [rng.choice(TRICKY_TEXT) for _ in range(rows)]
    return typed(pd.DataFrame(values), table)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_table_is_written_as_pandas_writes_it(table: str) -> None:
    rng = random.Random(table)
    for rows in (1, 3, 200):
        frame = _random_table(table, rows, rng)
        assert csv_rows(frame, table) == _pandas(frame)
        assert csv_rows(frame, table, chunk=2) == _pandas(frame)  # a chunk at a time


def test_an_empty_frame_writes_nothing() -> None:
    assert csv_rows(typed(pd.DataFrame(), "scores"), "scores") == ""


def test_a_wrong_cell_would_be_seen() -> None:
    # the comparison above can fail: a value pandas writes differently is caught
    frame = typed(
        pd.DataFrame(
            {
                "sample_id": ["a"],
                "query_type": ["b"],
                "step": ["c"],
                "measure": ["d"],
                "value": [np.float64(0.5)],
            }
        ),
        "scores",
    )
    assert csv_rows(frame, "scores") == "a,b,c,d,0.5" + EOL
    assert csv_rows(frame, "scores") != _pandas(frame.assign(value=[0.25]))
