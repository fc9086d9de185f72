"""The runner: resume after a real crash, refusal to mix runs, per-sample errors, concurrency."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from cofe import EvalSample, InputError, read_run, write_evalset
from cofe.adapters import ChunkRegistry, PipelineShape, PythonPipeline, Trace
from cofe.runlog import Stage
from cofe.runner import run_pipeline
from tests.conftest import REPO
from tests.runner._slow_pipeline import CHUNKS, build

N = 300


@pytest.fixture
def many_evalset(tmp_path: Path) -> Path:
    samples = [
        EvalSample(
            id=f"s{i:03d}",
            query=f"question {i}?",
            coarse_keywords=["fact"],
            fine_keywords=[[f"number {i % 50}"]],
        )
        for i in range(N)
    ]
    path = tmp_path / "many.jsonl"
    write_evalset(path, samples)
    return path


def _count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _cofe_run(evalset: Path, out: Path, **env: str) -> subprocess.Popen:
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
        "2",
    ]
    return subprocess.Popen(
        command, cwd=REPO, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.mark.slow
def test_kill_mid_run_then_rerun_gives_every_sample_exactly_once(tmp_path, many_evalset) -> None:
    out = tmp_path / "run"
    process = _cofe_run(many_evalset, out, COFE_TEST_DELAY="0.02")
    deadline = time.monotonic() + 60
    while _count_lines(out / "samples.jsonl") < 60 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)  # no cleanup, no flush: a real crash
    process.wait()
    recorded_before = _count_lines(out / "samples.jsonl")
    assert 60 <= recorded_before < N, "the kill should land mid-run"

    second = _cofe_run(many_evalset, out, COFE_TEST_DELAY="0")
    stdout, stderr = second.communicate(timeout=120)
    assert second.returncode == 0, stderr.decode()
    assert "resumed" in stdout.decode()
    lines = [line for line in (out / "samples.jsonl").read_text().splitlines() if line.strip()]
    ids = Counter(__import__("json").loads(line)["sample_id"] for line in lines)
    assert set(ids) == {f"s{i:03d}" for i in range(N)}  # none missing
    assert max(ids.values()) == 1  # none twice
    run = read_run(out)
    assert run.problems == [] and len(run.records) == N


def test_interrupt_keeps_what_was_answered_and_resume_finishes(tmp_path, many_evalset) -> None:
    calls = {"n": 0}
    pipeline = build()
    inner = pipeline.retrieve

    @functools.wraps(inner)  # same name, so the resumed run sees the same pipeline
    def interrupting(query: str):
        calls["n"] += 1
        if calls["n"] == 120:
            raise KeyboardInterrupt  # like Ctrl-C arriving in the middle of a query
        return inner(query)

    pipeline.retrieve = interrupting
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(pipeline, many_evalset, out, concurrency=1, progress=False)
    kept = len(read_run(out).records)
    assert 100 <= kept < N
    report = run_pipeline(build(), many_evalset, out, progress=False)
    assert report.resumed and report.already_done == kept and report.answered == N - kept
    assert len(read_run(out).records) == N


def test_a_changed_pipeline_or_evalset_is_refused_not_mixed(tmp_path, many_evalset) -> None:
    out = tmp_path / "run"
    run_pipeline(build(), many_evalset, out, progress=False)
    other = PythonPipeline(chunks=CHUNKS, retrieve=lambda q: [CHUNKS[0]], name="other")
    with pytest.raises(InputError, match=r"manifest.json: pipeline: .*differs in: name"):
        run_pipeline(other, many_evalset, out, progress=False)
    changed = tmp_path / "changed.jsonl"
    changed.write_text(many_evalset.read_text().replace("question 1?", "question one?"))
    with pytest.raises(InputError, match="evalset_sha256"):
        run_pipeline(build(), changed, out, progress=False)
    report = run_pipeline(other, many_evalset, out, fresh=True, progress=False)
    assert not report.resumed and report.answered == N
    assert read_run(out).manifest.pipeline["name"] == "other"


def test_bad_evalset_records_are_reported_and_the_rest_answered(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "ok1", "query": "q?", "fine_keywords": [["x"]]}\n'
        '{"id": "broken", "query": 5}\n'
        "not json\n"
        '{"id": "ok2", "query": "q2?", "fine_keywords": [["y"]]}\n'
    )
    report = run_pipeline(build(), path, tmp_path / "run", progress=False)
    assert report.samples == 2 and report.answered == 2
    where = [f"{Path(p.file).name}:{p.line}" for p in report.evalset_problems]
    assert where == ["bad.jsonl:2", "bad.jsonl:3"]
    assert report.evalset_problems[0].field == "query"


def test_an_evalset_with_no_valid_sample_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.raises(InputError, match=r"empty.jsonl: no valid sample"):
        run_pipeline(build(), path, tmp_path / "run", progress=False)


def test_concurrent_answers_land_on_their_own_samples(tmp_path, many_evalset) -> None:
    out = tmp_path / "run"
    run_pipeline(build(), many_evalset, out, concurrency=8, progress=False)
    run = read_run(out)
    for i in range(N):
        expected = sum(map(ord, f"question {i}?")) % 50
        assert run.records[f"s{i:03d}"].pool[0].chunk_id == f"c{expected}"


# --- the manifest records what the generator saw and which stages ran -------------------------


def test_the_default_pipeline_records_top_k_and_stages(tmp_path, small_docs, small_evalset):
    from cofe.pipeline import DefaultPipeline, PipelineConfig

    config = PipelineConfig(chunk_size=32, chunk_overlap=0, candidates=6, top_k=3)
    run_pipeline(
        DefaultPipeline(config), small_evalset, tmp_path / "run", docs=small_docs, progress=False
    )
    run = read_run(tmp_path / "run")
    assert run.manifest.schema_version == 3 and run.manifest.top_k == 3
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    assert all(r.context is None and 0 < len(r.pool) <= 6 for r in run.records.values())
    assert run.manifest.meta == {"parse_problems": []}


class _Described:
    """A pipeline of the user's own (no cofe base class): only describe, prepare, answer."""

    def __init__(self, described: dict, shape=None) -> None:
        self.described = described
        if shape is not None:
            self.shape = lambda: shape

    def describe(self) -> dict:
        return self.described

    def prepare(self, documents, cache) -> ChunkRegistry:
        self.registry = ChunkRegistry(CHUNKS)
        return self.registry

    def answer(self, query: str) -> Trace:
        return Trace(pool=self.registry.ranked(["c0", "c1"]), answer="fact")


@pytest.mark.parametrize(
    ("described", "top_k", "stages"),
    [
        (
            {"name": "mine", "top_k": 2, "stages": ["retrieval", "generation"]},
            2,
            [Stage.RETRIEVAL, Stage.GENERATION],
        ),
        ({"name": "mine", "top_k": "two", "stages": "some"}, None, None),
        ({"name": "mine"}, None, None),
    ],
)
def test_a_pipeline_without_shape_is_read_from_its_description_or_unknown(
    tmp_path, many_evalset, described, top_k, stages
) -> None:
    run_pipeline(_Described(described), many_evalset, tmp_path / "run", progress=False)
    manifest = read_run(tmp_path / "run").manifest
    assert manifest.top_k == top_k and manifest.stages == stages


def test_a_run_is_not_resumed_with_another_shape(tmp_path, many_evalset) -> None:
    out = tmp_path / "run"
    shape = PipelineShape(top_k=2, stages=(Stage.RETRIEVAL, Stage.GENERATION))
    run_pipeline(_Described({"name": "mine"}, shape), many_evalset, out, progress=False)
    other = PipelineShape(top_k=5, stages=shape.stages)
    with pytest.raises(InputError, match=r"manifest.json: top_k: .*recorded top_k 2.* gives 5"):
        run_pipeline(_Described({"name": "mine"}, other), many_evalset, out, progress=False)
    report = run_pipeline(_Described({"name": "mine"}, shape), many_evalset, out, progress=False)
    assert report.resumed and report.answered == 0


def test_a_version_1_run_is_read_but_not_resumed(tmp_path, many_evalset) -> None:
    out = tmp_path / "run"
    run_pipeline(build(), many_evalset, out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    for name in ("top_k", "stages", "meta", "document_sha256", "corpus"):  # not in version 1
        del manifest[name]
    manifest.update(schema_version=1, parse_problems=[])  # as an older cofe wrote it
    (out / "manifest.json").write_text(json.dumps(manifest))
    run = read_run(out)
    assert run.manifest.top_k == 4 and run.manifest.meta == {"parse_problems": []}
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    with pytest.raises(InputError, match=r"manifest.json: schema_version: .*older cofe"):
        run_pipeline(build(), many_evalset, out, progress=False)
    assert not run_pipeline(build(), many_evalset, out, fresh=True, progress=False).resumed
    assert read_run(out).manifest.schema_version == 3
