"""Issue 10, items 1, 7 and 12: --fresh deletes only cofe's files, edited documents are not
mixed into a resumed run, and one writer per run folder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from cofe import EvalSample, InputError, write_evalset
from cofe.adapters import PythonPipeline
from cofe.runlog import ParsedDocument
from cofe.runlog._lock import RunFolderBusy, run_folder_lock
from cofe.runner import run_pipeline
from tests.conftest import REPO
from tests.runner._slow_pipeline import build

SAMPLES = [
    EvalSample(
        id=f"s{i}",
        query=f"question {i}?",
        coarse_keywords=["fact"],
        fine_keywords=[[f"number {i}"]],
    )
    for i in range(40)
]


@pytest.fixture
def evalset(tmp_path: Path) -> Path:
    path = tmp_path / "evalset.jsonl"
    write_evalset(path, SAMPLES)
    return path


def _ids(run: Path) -> Counter:
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return Counter(json.loads(line)["sample_id"] for line in lines if line.strip())


# item 1 ----------------------------------------------------------------------


def test_fresh_keeps_the_eval_set_stored_in_the_run_folder(tmp_path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    inside = out / "evalset.jsonl"
    write_evalset(inside, SAMPLES)
    run_pipeline(build(), inside, out, progress=False)
    (out / "scores").mkdir()
    (out / "scores" / "summary.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    report = run_pipeline(build(), inside, out, fresh=True, progress=False)
    assert report.answered == len(SAMPLES) and not report.resumed
    assert inside.read_bytes().count(b"\n") == len(SAMPLES)  # the user's eval set, intact
    assert not (out / "scores").exists()  # a scoring of the discarded run is gone with it
    assert (out / "notes.txt").read_text() == "mine"  # not cofe's: left alone


def test_fresh_refuses_a_folder_cofe_did_not_write(tmp_path, evalset) -> None:
    theirs = tmp_path / "data"
    theirs.mkdir()
    (theirs / "samples.jsonl").write_text("precious\n")
    with pytest.raises(InputError, match=r"data: --fresh deletes a run cofe wrote.*holds none"):
        run_pipeline(build(), evalset, theirs, fresh=True, progress=False)
    with pytest.raises(InputError, match=r"holds samples.jsonl, which cofe did not write"):
        run_pipeline(build(), evalset, theirs, progress=False)
    assert (theirs / "samples.jsonl").read_text() == "precious\n"
    assert sorted(p.name for p in theirs.iterdir()) == ["samples.jsonl"]


def test_a_new_run_may_share_a_folder_with_unrelated_files(tmp_path, evalset) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "README").write_text("my notes")
    assert run_pipeline(build(), evalset, out, progress=False).answered == len(SAMPLES)
    assert (out / "README").read_text() == "my notes"


# item 7 ----------------------------------------------------------------------


def _doc_pipeline() -> PythonPipeline:
    def chunk(doc: ParsedDocument) -> list[str]:
        return [part for part in doc.text.split(". ") if part]

    return PythonPipeline(chunk=chunk, retrieve=lambda q: [], name="docs")


def test_resuming_after_a_document_changed_is_refused_naming_it(tmp_path, evalset) -> None:
    docs = [
        ParsedDocument(doc_id=f"d{i}", source=f"d{i}.txt", text=f"fact number {i}. more.")
        for i in range(8)
    ]
    out = tmp_path / "run"
    run_pipeline(_doc_pipeline(), evalset, out, documents=docs, progress=False)
    edited = [
        d.model_copy(update={"text": "fact number 99. more."}) if d.doc_id == "d3" else d
        for d in docs[:-1]
    ] + [ParsedDocument(doc_id="new", source="n.txt", text="x")]
    with pytest.raises(
        InputError, match=r"document_sha256: .*changed: d3; new: new; gone: d7.*--fresh"
    ):
        run_pipeline(_doc_pipeline(), evalset, out, documents=edited, progress=False)
    same = run_pipeline(_doc_pipeline(), evalset, out, documents=docs, progress=False)
    assert same.resumed and same.answered == 0
    again = run_pipeline(
        _doc_pipeline(), evalset, out, documents=edited, fresh=True, progress=False
    )
    assert again.answered == len(SAMPLES)


# item 12 ---------------------------------------------------------------------


def test_a_second_writer_is_refused_naming_the_holder(tmp_path) -> None:
    with (
        run_folder_lock(tmp_path / "run", purpose="cofe run"),
        pytest.raises(RunFolderBusy, match=rf"process {os.getpid()} is writing"),
        run_folder_lock(tmp_path / "run", purpose="cofe score"),
    ):
        pass
    with run_folder_lock(tmp_path / "run", purpose="cofe score"):  # released: free again
        pass


def _cofe_run(evalset: Path, out: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "cofe",
        "run",
        "--pipeline",
        "tests.runner._slow_pipeline:build",
        "--evalset",
        str(evalset),
        "--out",
        str(out),
        "--no-score",
        "--concurrency",
        "1",
    ]
    return subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "COFE_TEST_DELAY": "0.2"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_two_runs_on_one_folder_one_refuses_and_a_killed_holder_is_resumed(
    tmp_path, evalset
) -> None:
    out = tmp_path / "run"
    holder = _cofe_run(evalset, out)
    deadline = time.monotonic() + 60
    while not (out / "samples.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = _cofe_run(evalset, out)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2
    assert f"process {holder.pid} is writing to this run folder" in err
    assert err.count("\n") == 1  # one line, no traceback
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert sum(_ids(out).values()) < len(SAMPLES)  # killed part-way
    third = _cofe_run(evalset, out)
    _, err = third.communicate(timeout=120)
    assert third.returncode == 0, err
    ids = _ids(out)
    assert set(ids) == {s.id for s in SAMPLES} and max(ids.values()) == 1


def test_scoring_elsewhere_leaves_no_file_in_the_run_folder(tmp_path) -> None:
    run = Path(shutil.copytree(REPO / "examples" / "squad-bm25", tmp_path / "run"))
    before = sorted(p.name for p in run.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "cofe", "score", str(run), "--out", str(tmp_path / "scores")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in run.iterdir()) == before
