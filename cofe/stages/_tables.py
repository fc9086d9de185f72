"""The rows scoring produces, kept compact until they become a batch's columns (``ScoredRows``)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cofe.results import Coded, Rows


class LongForm:
    """Rows of (sample index, key, value) in typed arrays.

    Millions of score rows are cheap to append, to send back from a worker
    process (arrays pickle as bytes) and to turn into coded columns (``cofe.results.Rows``).
    """

    def __init__(self) -> None:
        self.sample = array("q")
        self.key = array("q")
        self.value = array("d")
        self.keys: dict[tuple[str, ...], int] = {}

    def add(self, sample: int, key: tuple[str, ...], value: float) -> None:
        code = self.keys.get(key)
        if code is None:
            code = self.keys[key] = len(self.keys)
        self.sample.append(sample)
        self.key.append(code)
        self.value.append(value)

    def rows(
        self, table: str, by_sample: dict[str, Coded], key_columns: list[str], first: int = 0
    ) -> Rows:
        """The table's columns, none of them expanded: ``by_sample``'s columns (each coded per
        sample index, from sample ``first`` on) picked by each row's sample, each key column
        coded by key, the values as they are."""
        index = (
            np.frombuffer(self.sample, dtype=np.int64) - first
            if self.sample
            else np.zeros(0, np.int64)
        )
        codes = np.frombuffer(self.key, dtype=np.int64) if self.key else np.zeros(0, np.int64)
        ordered = sorted(self.keys, key=self.keys.__getitem__)
        columns: dict[str, Coded | np.ndarray] = {
            name: Coded(of_sample.codes[index], of_sample.labels)
            for name, of_sample in by_sample.items()
        }
        for position, name in enumerate(key_columns):
            columns[name] = Coded(codes, [key[position] for key in ordered])
        columns["value"] = (
            np.frombuffer(self.value, dtype=np.float64) if self.value else np.zeros(0)
        )
        return Rows(table, len(index), columns)


@dataclass
class Tables:
    """Everything scoring produces for a slice of a batch, turned into its columns (``batch_result``)
    as soon as the slice is back."""

    scores: LongForm = field(default_factory=LongForm)
    recalls: LongForm = field(default_factory=LongForm)
    points: list[tuple[Any, ...]] = field(default_factory=list)
    verdicts: list[tuple[Any, ...]] = field(default_factory=list)
    skipped: list[tuple[Any, ...]] = field(default_factory=list)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # sample id, field, text
