"""One scoring driver, two sinks: ``score_to_folder`` (what ``cofe score`` runs) writes the
same results, row for row, as ``score_run(...).write(...)``; and batches of any size give the
rows one batch gives -- on clean and on damaged runs, with fuzzy matching, with LLM
judgements."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest

from cofe import ScoreConfig, score_run
from cofe.judges import labels_for_scoring
from cofe.stages._stream import score_to_folder
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "squad-bm25"
ROW_FILES = [
    "scores.csv",
    "points.csv",
    "skipped.csv",
    "recalls.csv",
    "latency.csv",
    "verdicts.jsonl",
]


def _both(run: Path, tmp_path: Path, batch_size: int, config: ScoreConfig | None = None):
    """The run scored in memory in one batch, and into a folder in batches of ``batch_size``."""
    whole = score_run(run, config=config, labels=labels_for_scoring).write(tmp_path / "whole")
    summary, streamed = score_to_folder(
        run,
        config=config,
        out=tmp_path / "streamed",
        batch_size=batch_size,
        labels=labels_for_scoring,
    )
    return whole, streamed, summary


def _same_files(one: Path, other: Path, names: list[str]) -> None:
    for name in names:
        assert filecmp.cmp(one / name, other / name, shallow=False), name


@pytest.mark.parametrize("batch_size", [1, 7, 100_000])
def test_batches_write_the_same_files_as_scoring_in_memory(tmp_path, batch_size) -> None:
    whole, streamed, _ = _both(EXAMPLE, tmp_path, batch_size)
    _same_files(whole, streamed, [*ROW_FILES, "problems.jsonl", "problems.txt", "summary.json"])
    assert not list(streamed.glob(".*.tmp"))


def test_the_memory_sink_concatenates_batches_into_the_one_batch_result(tmp_path) -> None:
    whole = score_run(EXAMPLE).write(tmp_path / "whole")
    batched = score_run(EXAMPLE, batch_size=4)
    assert batched.scores.index.is_unique and batched.points.index.is_unique
    _same_files(
        whole, batched.write(tmp_path / "batched"), [*ROW_FILES, "problems.jsonl", "summary.json"]
    )
    with pytest.raises(ValueError, match="at least 1"):
        score_run(EXAMPLE, batch_size=0)


def test_fuzzy_matching_is_scored_a_batch_at_a_time(tmp_path) -> None:
    config = ScoreConfig(fuzzy=0.2, fuzzy_min_chars=4, same_source=True)
    whole, streamed, summary = _both(EXAMPLE, tmp_path, 3, config)
    _same_files(whole, streamed, [*ROW_FILES, "problems.jsonl", "summary.json"])
    assert summary.to_dict()["config"]["fuzzy"] == 0.2
    batched = score_run(EXAMPLE, config=config, batch_size=2)  # a context rebound per batch
    _same_files(whole, batched.write(tmp_path / "batched"), ROW_FILES)


def test_judged_runs_are_scored_a_batch_at_a_time(tmp_path) -> None:
    from cofe.judges import judge_run
    from cofe.testing import ScriptedOpenAI
    from tests.judges.test_sense import client, make_run
    from tests.judges.test_steps import CASES, scripted

    run = make_run(tmp_path / "run", CASES)
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server), steps=True)
    whole, streamed, summary = _both(run, tmp_path, 1)
    _same_files(whole, streamed, [*ROW_FILES, "problems.jsonl", "summary.json"])
    result = score_run(
        run, batch_size=1, labels=labels_for_scoring
    )  # s0, then s1: each batch reads its own labels
    scores, skipped = result.scores, result.skipped
    assert (
        scores[(scores.sample_id == "s0") & (scores.measure == "Faithfulness")].value.item() == 0.5
    )
    reason = skipped[(skipped.sample_id == "s1") & (skipped.measure == "Faithfulness")].reason
    assert reason.item().startswith("the judge gave no labels")
    assert summary.keyword_vs_judge() is not None  # the judge's labels were read per batch


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
    for expected_problem in (
        "invalid JSON",
        "duplicate sample_id",
        "'not-in-the-eval-set' is not in",
        "duplicate id",
        "expected a JSON object",
    ):
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
