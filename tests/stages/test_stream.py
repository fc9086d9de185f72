"""The streaming scorer (what ``cofe score`` runs) writes the same results, row for row, as
``score_run(...).write(...)``, batch after batch, on clean and on damaged runs."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest

from cofe import ScoreConfig, score_run
from cofe.stages._stream import score_to_folder
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "squad-bm25"
ROW_FILES = ["scores.csv", "points.csv", "skipped.csv", "recalls.csv", "latency.csv",
             "verdicts.jsonl"]  # fmt: skip


def _both(run: Path, tmp_path: Path, batch_size: int, config: ScoreConfig | None = None):
    whole = score_run(run, config=config).write(tmp_path / "whole")
    summary, streamed = score_to_folder(run, config=config, out=tmp_path / "streamed",
                                        batch_size=batch_size)  # fmt: skip
    return whole, streamed, summary


@pytest.mark.parametrize("batch_size", [1, 7, 100_000])
def test_batches_write_the_same_files_as_scoring_in_memory(tmp_path, batch_size) -> None:
    whole, streamed, _ = _both(EXAMPLE, tmp_path, batch_size)
    for name in [*ROW_FILES, "problems.jsonl", "problems.txt", "summary.json"]:
        assert filecmp.cmp(whole / name, streamed / name, shallow=False), name
    assert not list(streamed.glob(".*.tmp"))


def test_other_settings_stream_the_same_too(tmp_path) -> None:
    config = ScoreConfig(top_k=2, mode="cofe-rag")
    whole, streamed, summary = _both(EXAMPLE, tmp_path, 50, config)
    for name in ROW_FILES:
        assert filecmp.cmp(whole / name, streamed / name, shallow=False), name
    assert summary.to_dict() == json.loads((whole / "summary.json").read_text())


def test_a_damaged_run_streams_the_same_rows_and_problems(tmp_path) -> None:
    run = Path(shutil.copytree(EXAMPLE, tmp_path / "run"))
    samples = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(samples[0])
    again = {**first, "answer": "answered again after a resume"}  # the newest one counts
    stray = {**json.loads(samples[1]), "sample_id": "not-in-the-eval-set"}
    lines = [*samples, "{not json", json.dumps(again), json.dumps(stray)]
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    evalset = (run / "evalset.jsonl").read_text(encoding="utf-8").splitlines()
    (run / "evalset.jsonl").write_text("\n".join([*evalset, evalset[3], "[]"]) + "\n")
    whole, streamed, summary = _both(run, tmp_path, 5)
    for name in ROW_FILES:
        assert filecmp.cmp(whole / name, streamed / name, shallow=False), name
    expected = json.loads((whole / "summary.json").read_text())
    got = summary.to_dict()
    assert sorted(got["problems"].pop("first")) == sorted(expected["problems"].pop("first"))
    assert got == expected
    problems = sorted((streamed / "problems.txt").read_text().splitlines())
    assert problems == sorted((whole / "problems.txt").read_text().splitlines())
    text = "\n".join(problems)
    for expected_problem in ("invalid JSON", "duplicate sample_id", "'not-in-the-eval-set' is not in",
                             "duplicate id", "expected a JSON object"):  # fmt: skip
        assert expected_problem in text
    verdicts = [json.loads(x) for x in (streamed / "verdicts.jsonl").read_text().splitlines()]
    assert len(verdicts) == len(evalset)  # the repeated eval-set id is scored once


def test_a_run_without_records_or_samples_is_scored_with_reasons(tmp_path) -> None:
    run = Path(shutil.copytree(EXAMPLE, tmp_path / "run"))
    (run / "samples.jsonl").write_text("")
    whole, streamed, summary = _both(run, tmp_path, 10)
    for name in ROW_FILES:
        assert filecmp.cmp(whole / name, streamed / name, shallow=False), name
    evalset_lines = (run / "evalset.jsonl").read_text(encoding="utf-8").count("\n")
    assert summary.samples()["in_evalset"] == evalset_lines  # every sample has a verdict
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    summary, _ = score_to_folder(run, empty, out=tmp_path / "none")
    assert summary.samples()["in_evalset"] == 0
    assert any("holds no sample" in p for p in summary.to_dict()["problems"]["first"])
