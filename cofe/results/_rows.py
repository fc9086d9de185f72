"""A scoring's tables as plain columns: how a batch's rows travel from the scorer to the
results folder and the summary without pandas (``cofe score`` never loads it).

A column is a float array (a measure's values; NaN: missing) or a ``Coded`` one: every
row's code into a short list of values. Millions of score rows repeat a few thousand ids and
a few dozen step and measure names, so each distinct value is formatted, checked or
compared once, and a row costs an 8-byte code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from cofe.results._columns import COUNT, FLAG, MAYBE_TEXT, NUMBER, RANK, TABLES

if TYPE_CHECKING:
    import pandas as pd


def is_missing(value: object) -> bool:
    """None, or a NaN: what pandas counts as missing in an object column."""
    return value is None or (isinstance(value, float) and value != value)


@dataclass(frozen=True)
class Coded:
    """A column of repeated values: each row's code, and the value of each code (``None``:
    missing). A value may appear under several codes (one code per sample, say)."""

    codes: np.ndarray  # int64, one per row
    labels: list[Any]

    @classmethod
    def of(cls, values: Sequence[Any]) -> Coded:
        """Each distinct value once (dict lookups run in C: no per-row Python code)."""
        labels = list(dict.fromkeys(values))
        code_of = {value: code for code, value in enumerate(labels)}
        codes = np.fromiter(map(code_of.__getitem__, values), np.int64, count=len(values))
        return cls(codes, labels)

    def label_array(self) -> np.ndarray:
        """The labels as an object array, to pick a value per row with ``[codes]``."""
        array = np.empty(len(self.labels), dtype=object)
        array[:] = self.labels
        return array

    def rows_where(self, of_label: Sequence[bool]) -> np.ndarray:
        """Per row: ``of_label`` (a flag per label) of its label."""
        flags = np.array(of_label, dtype=bool)
        return flags[self.codes] if len(flags) else np.zeros(len(self.codes), dtype=bool)

    def distinct(self) -> Coded:
        """The same column with one code per distinct value (codes in first-label order)."""
        unique = list(dict.fromkeys(self.labels))
        code_of = {value: code for code, value in enumerate(unique)}
        remap = np.fromiter(map(code_of.__getitem__, self.labels), np.int64, len(self.labels))
        return Coded(remap[self.codes] if len(remap) else self.codes, unique)


Column: TypeAlias = "Coded | np.ndarray"


def typed_label(value: Any, kind: str) -> Any:
    """A value as its column's declared type holds it (``_columns.typed``): text that may be
    missing is a string, flags booleans, counts and ranks integers; missing: ``None``."""
    if is_missing(value):
        return None
    if kind == MAYBE_TEXT:
        return str(value)
    if kind == FLAG:
        return bool(value)
    if kind in (RANK, COUNT):
        return int(value)
    return value  # text never missing: kept as it is


@dataclass
class Rows:
    """One table's rows: its columns by name (a declared column absent: missing in every
    row) and how many rows there are."""

    table: str
    length: int = 0
    columns: dict[str, Column] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.length

    @classmethod
    def of_tuples(cls, table: str, rows: Sequence[Sequence[Any]], names: Sequence[str]) -> Rows:
        """Rows given as tuples of ``names``' values, each column coded by its distinct values."""
        if not rows:
            return cls(table)
        kinds = TABLES[table]
        columns: dict[str, Column] = {}
        for name, values in zip(names, zip(*rows, strict=True), strict=True):
            if kinds[name] == NUMBER:
                columns[name] = np.array(values, dtype=np.float64)
            else:
                coded = Coded.of(values)
                labels = [typed_label(label, kinds[name]) for label in coded.labels]
                columns[name] = Coded(coded.codes, labels)
        return cls(table, len(rows), columns)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, table: str) -> Rows:
        """A table held as a DataFrame (a ``ScoreResult``'s), as columns: what the writer and
        the summary read."""
        import pandas as pd

        columns: dict[str, Column] = {}
        for name, kind in TABLES[table].items():
            if name not in frame:
                continue
            values = frame[name]
            if kind == NUMBER:
                columns[name] = values.to_numpy(dtype=np.float64, na_value=np.nan)
                continue
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
            labels = [typed_label(v, kind) for v in np.asarray(uniques, dtype=object)]
            codes = codes.astype(np.int64)
            codes[codes < 0] = len(labels)  # missing: the trailing None
            columns[name] = Coded(codes, [*labels, None])
        return cls(table, len(frame), columns)

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame with the table's declared columns and types."""
        import pandas as pd

        from cofe.results._columns import typed

        data: dict[str, Any] = {}
        for name, column in self.columns.items():
            data[name] = column.label_array()[column.codes] if isinstance(column, Coded) else column
        return typed(pd.DataFrame(data, index=range(self.length)), self.table)

    def text(self, name: str) -> Coded:
        """A coded column (absent: every row missing)."""
        column = self.columns.get(name)
        if column is None:
            return Coded(np.zeros(self.length, dtype=np.int64), [None])
        assert isinstance(column, Coded), f"{self.table}.{name} is not a coded column"
        return column

    def numbers(self, name: str) -> np.ndarray:
        column = self.columns.get(name)
        if column is None:
            return np.full(self.length, np.nan)
        assert isinstance(column, np.ndarray), f"{self.table}.{name} is not a number column"
        return column

    def present(self, name: str) -> np.ndarray:
        """Per row: the column holds a value."""
        column = self.text(name)
        return column.rows_where([not is_missing(label) for label in column.labels])


@dataclass
class ScoredRows:
    """The tables of one batch (or of a whole ``ScoreResult``) as columns."""

    scores: Rows
    points: Rows
    verdicts: Rows
    skipped: Rows
    recalls: Rows

    @classmethod
    def of_result(cls, result: Any) -> ScoredRows:
        """A ``ScoreResult``'s DataFrames as columns."""
        names = ("scores", "points", "verdicts", "skipped", "recalls")
        return cls(*(Rows.of_frame(getattr(result, name), name) for name in names))
