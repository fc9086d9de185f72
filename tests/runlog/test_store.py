import json

import pytest

from cofe import Chunk, InputError, Manifest, RunWriter, SampleRecord, read_run
from cofe._jsonl import repair_torn_tail
from cofe.runlog import read_manifest, runlog_json_schema
from tests.conftest import REPO, ranked


def test_round_trip_and_resume(tmp_path):
    writer = RunWriter(tmp_path / "run")
    writer.start(Manifest(run_id="r", pipeline={"retriever": "bm25"}))
    writer.add_chunks([Chunk(chunk_id="c1", doc_id="d", text="hello", start=0, end=5)])
    writer.add_samples([SampleRecord(sample_id="a", pool=ranked("c1"))])
    assert writer.done() == {"a"}
    # a crash mid-write leaves a torn line: it is not "done", and the next append repairs it
    with (tmp_path / "run" / "samples.jsonl").open("a") as handle:
        handle.write('{"sample_id": "b", "po')
    assert writer.done() == {"a"}
    writer.add_samples([SampleRecord(sample_id="b", answer="x")])
    run = read_run(tmp_path / "run")
    assert set(run.records) == {"a", "b"} and not run.problems
    assert run.manifest.pipeline == {"retriever": "bm25"} and run.chunks["c1"].end == 5


def test_a_resumed_sample_counts_once_newest_wins(tmp_path):
    writer = RunWriter(tmp_path)
    writer.start(Manifest(run_id="r"))
    writer.add_samples(
        [SampleRecord(sample_id="a", answer="old"), SampleRecord(sample_id="a", answer="new")]
    )
    run = read_run(tmp_path)
    assert run.records["a"].answer == "new"
    assert (
        len(run.problems) == 1
        and run.problems[0].line == 2
        and "duplicate sample_id" in run.problems[0].message
    )


def test_repair_torn_tail(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b"')
    assert repair_torn_tail(path) == 4 and path.read_bytes() == b'{"a": 1}\n'
    assert repair_torn_tail(path) == 0


def test_missing_or_broken_manifest_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="not a run directory"):
        read_run(tmp_path)
    (tmp_path / "manifest.json").write_text('{"run_id": ""}')
    with pytest.raises(InputError) as info:
        read_manifest(tmp_path)
    assert info.value.problem.field == "run_id" and "manifest.json" in info.value.problem.file


def test_committed_schema_matches_the_models():
    committed = json.loads((REPO / "docs" / "runlog.schema.json").read_text(encoding="utf-8"))
    assert committed == runlog_json_schema(), "run `cofe schema -o docs/runlog.schema.json`"


def test_schema_describes_every_file():
    files = runlog_json_schema()["files"]
    assert set(files) == {
        "manifest.json",
        "evalset.jsonl",
        "documents.jsonl",
        "chunks.jsonl",
        "samples.jsonl",
    }
    assert files["samples.jsonl"]["required"] == ["sample_id"]
