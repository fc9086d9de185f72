"""Canary rounds through a pipeline object: a full run each round, scored with every stage
measure and verdict, kept in the store round by round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.cli import main
from cofe.monitor import MonitorStore

pytestmark = pytest.mark.slow


def test_scheduled_rounds_of_the_builtin_pipeline_are_scored_and_stored(
    tmp_path: Path, small_docs: Path, small_evalset: Path, capsys
):
    db, runs = tmp_path / "monitor.db", tmp_path / "rounds"
    code = main(
        [
            "monitor",
            "canary",
            "--store",
            str(db),
            "--evalset",
            str(small_evalset),
            "--docs",
            str(small_docs),
            "--pipeline",
            "default",
            "--runs",
            str(runs),
            "--rounds",
            "2",
            "--every",
            "1s",
            "--cache",
            "none",
            "--chunk-size",
            "32",
            "--top-k",
            "2",
        ]
    )
    assert code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all("3/3 answered" in line for line in lines)
    rounds = sorted(p.name for p in runs.iterdir())
    assert len(rounds) == 2
    for name in rounds:  # each round is an ordinary run with its scores beside it
        summary = json.loads((runs / name / "scores" / "summary.json").read_text())
        assert summary["samples"]["scored"] == 3
    with MonitorStore(db) as store:
        recall = store.canaries.series(measure="KeywordRecall@2")
        contexts = [r for r in recall if r["step"] == "context"]
        assert [r["round_id"] for r in contexts] == rounds
        assert all(r["n"] == 3 and 0 <= r["value"] <= 1 for r in contexts)
        parse = store.canaries.series(stage="parse")
        assert parse and all(r["step"] == "parse" for r in parse)
        shares = [r for r in store.canaries.series() if r["step"] == "verdicts"]
        for name in rounds:  # the verdict shares of a round add up to one
            assert sum(r["value"] for r in shares if r["round_id"] == name) == pytest.approx(1.0)
        cases = store.db.execute(
            "SELECT round_id, sample_id, verdict, trace_id FROM "
            "canary_cases ORDER BY round_id, sample_id"
        )
        assert [(c[0], c[1]) for c in cases] == [(r, s) for r in rounds for s in ("q1", "q2", "q3")]
        trace = store.traces.get(cases[0][3])
        assert trace is not None and trace.query == "When was the Eiffel Tower finished?"
        assert trace.pool and all(d.text for d in trace.pool)  # what the case's stages produced
        assert store.windows.series(origin="traffic") == []  # canaries are not traffic


def test_a_canary_needs_exactly_one_way_to_the_pipeline(tmp_path: Path, small_evalset: Path):
    from cofe.monitor import run_canary

    with MonitorStore(tmp_path / "m.db") as store, pytest.raises(ValueError, match="either"):
        run_canary(store, small_evalset, tmp_path / "runs")
