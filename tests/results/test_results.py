"""The results folder: written atomically, versioned, read back as the same object."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cofe import InputError, ScoreConfig, read_scores, score_run
from cofe.results import _files as files
from tests.conftest import EXAMPLE_RUN

TABLES = ("scores", "points", "verdicts", "skipped", "recalls", "latency")


@pytest.fixture(scope="module")
def example():
    return score_run(EXAMPLE_RUN, config=ScoreConfig())


def test_read_scores_round_trips_score_run(example, tmp_path):
    back = read_scores(example.write(tmp_path / "scores"))
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(back, name), getattr(example, name), obj=name)
    assert back.config == example.config
    assert back.shape == example.shape and back.run_id == example.run_id
    assert back.problems == example.problems
    assert back.to_dict() == example.to_dict()


def test_ranks_are_integers_on_disk(example, tmp_path):
    out = example.write(tmp_path / "scores")
    header, *rows = (out / "points.csv").read_text(encoding="utf-8").splitlines()
    column = header.split(",").index("pool_rank")
    values = {row.split(",")[column] for row in rows if row.count(",") == header.count(",")}
    assert values and not any("." in v for v in values)
    assert (out / "recalls.csv").exists()  # per-sample waterfall rows


def test_a_newer_results_version_is_refused(example, tmp_path):
    out = example.write(tmp_path / "scores")
    summary = json.loads((out / "summary.json").read_text())
    summary["results_schema_version"] = 99
    (out / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(InputError, match="newer cofe"):
        read_scores(out)


def test_an_interrupted_rewrite_leaves_no_mix_of_two_scorings(example, tmp_path, monkeypatch):
    out = example.write(tmp_path / "scores")
    calls = {"n": 0}
    real = files.csv_chunks

    def dies_on_the_third_table(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(files, "csv_chunks", dies_on_the_third_table)
    with pytest.raises(OSError):
        example.write(out)
    assert not (out / "summary.json").exists()
    assert not list(out.glob(".*.tmp"))
    with pytest.raises(InputError, match="did not finish"):
        read_scores(out)
