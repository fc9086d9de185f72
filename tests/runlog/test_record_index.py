"""A large samples.jsonl is read in parts on every core: the same index as one reading."""

from __future__ import annotations

import ctypes
import json
import multiprocessing
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from cofe.runlog import RecordIndex, _index
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "squad-bm25"


def _damaged(tmp_path: Path) -> Path:
    """The example's records with what a crash, a resume and a bad writer leave behind."""
    samples = (EXAMPLE / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(samples[0])
    again = {**first, "answer": "answered again after a resume"}
    lines = [*samples[:20], "{not json", "", *samples[20:], json.dumps(again), '{"sample_id": 3}']
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + '\n{"sample_id": "torn', encoding="utf-8")
    return path


def _read(path: Path, keep_up_to: int) -> tuple[RecordIndex, list[str]]:
    problems: list = []
    index = RecordIndex.build(path, problems, progress=False, keep_up_to=keep_up_to)
    return index, [str(p) for p in problems]


@pytest.mark.parametrize("keep_up_to", [0, 10_000, 5])
def test_parts_read_on_several_cores_give_the_index_of_one_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_up_to: int
) -> None:
    path = _damaged(tmp_path)
    whole, whole_problems = _read(path, keep_up_to)
    monkeypatch.setattr(_index, "_PART_BYTES", 1_500)  # dozens of parts, cut mid-line
    monkeypatch.setattr(_index, "PARALLEL_BYTES", 0)  # read in worker processes
    assert len(_index._parts(path, path.stat().st_size)) > 10
    parts, parts_problems = _read(path, keep_up_to)

    assert parts_problems == whole_problems
    for expected in ("invalid JSON", "duplicate sample_id", "sample_id", "last line cut short"):
        assert any(expected in problem for problem in parts_problems), expected
    # the lines named are those of the whole file
    assert any(f"{path}:21:" in problem for problem in parts_problems)
    assert np.array_equal(parts.hashes, whole.hashes)
    assert np.array_equal(parts.offsets, whole.offsets)
    assert parts.facts == whole.facts
    assert parts.errors == whole.errors
    assert (parts.kept is None) == (whole.kept is None) == (keep_up_to in (0, 5))
    if whole.kept is not None and parts.kept is not None:
        assert parts.kept == whole.kept
        assert list(parts.kept) == list(whole.kept)  # first-seen order, newest record
        assert parts.kept[json.loads(_first_line())["sample_id"]].answer == (
            "answered again after a resume"
        )


def _first_line() -> str:
    return (EXAMPLE / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0]


def test_the_file_is_cut_after_newlines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_index, "_PART_BYTES", 1_000)
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"".join(b"x" * (i % 37) + b"\n" for i in range(2_000)))
    size = path.stat().st_size
    bounds = _index._parts(path, size)
    data = path.read_bytes()
    assert len(bounds) > 30 and bounds[0][0] == 0 and bounds[-1][1] == size
    for (_, end), (start, _) in pairwise(bounds):
        assert end == start and data[end - 1 : end] == b"\n"


def test_a_part_stops_keeping_records_once_the_run_is_known_too_large(tmp_path: Path) -> None:
    path = _damaged(tmp_path)
    bounds = [(0, path.stat().st_size)]
    for flag in (True, False):
        keeping = multiprocessing.get_context("fork").RawValue(ctypes.c_bool, flag)
        part = _index._read_part((path, bounds, 10_000, keeping), (0, 1))
        assert (part.kept is not None) is flag
        assert len(part.hashes) > 20  # the index is built either way


@pytest.mark.parametrize("content", [None, b""])
def test_a_missing_or_empty_records_file_is_a_run_that_answered_nothing(
    tmp_path: Path, content: bytes | None
) -> None:
    path = tmp_path / "samples.jsonl"
    if content is not None:
        path.write_bytes(content)
    index, problems = _read(path, keep_up_to=10)
    assert index.count == 0 and index.kept == {} and problems == []
