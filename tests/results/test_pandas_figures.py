"""The summary's figures, computed without pandas, are pandas' to the last bit: its grouped
sums (compensated), its latency mean, median and 95th percentile, and the 10-decimal floats
its ``to_json`` wrote into summary.json (the files must not change with the code)."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd

from cofe.results import latency_rows
from cofe.results._summary import _compensated_sum, _json_value


def test_floats_are_rounded_as_pandas_to_json_rounded_them() -> None:
    rng = random.Random(1)
    values = [rng.random() * 10 ** rng.randint(-17, 17) for _ in range(5000)]
    values += [k / 3 for k in range(100)] + [k / 7 for k in range(100)]
    values += [0.5, 2.5, 0.05, 0.15, 1e-15, 9.99999999995e-11, 0.99999999995, -1 / 3, -0.0]
    written = json.loads(pd.DataFrame({"v": values}).to_json(orient="records"))
    assert [repr(_json_value(v)) for v in values] == [repr(row["v"]) for row in written]
    assert _json_value(float("nan")) is None
    assert _json_value(3) == 3  # counts stay integers


def test_sums_are_pandas_grouped_sums() -> None:
    rng = random.Random(2)
    for trial in range(60):
        choices = [0.0, 1.0, 0.5] if trial % 2 else [0.0, 1.0, 1 / 3, 2 / 3, rng.random()]
        values = np.array([rng.choice(choices) for _ in range(rng.randint(1, 2000))])
        theirs = pd.DataFrame({"k": 0, "value": values}).groupby("k")["value"].sum().iloc[0]
        assert repr(_compensated_sum(values)) == repr(float(theirs))


def test_latency_figures_are_pandas_grouped_figures() -> None:
    rng = random.Random(3)
    for _ in range(40):
        seconds = [rng.random() * rng.choice([0.01, 1, 10]) for _ in range(rng.randint(1, 300))]
        grouped = pd.DataFrame({"stage": 0, "seconds": seconds}).groupby("stage")["seconds"]
        theirs = [grouped.mean(), grouped.median(), grouped.quantile(0.95)]
        (row,) = latency_rows({"generation": seconds})
        assert [repr(v) for v in row[1:4]] == [repr(float(s.iloc[0])) for s in theirs]
        assert row[4] == len(seconds)
