import json
import shutil

import pytest
from pydantic import ValidationError

from cofe import Chunk, InputError, Manifest, RunWriter, SampleRecord, read_run
from cofe._jsonl import repair_torn_tail
from cofe.runlog import RUNLOG_SCHEMA_VERSION, Stage, read_manifest, runlog_json_schema
from tests.conftest import EXAMPLE_RUN, REPO, ranked


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
    (tmp_path / "manifest.json").write_text('{"run_id": "r",\n')
    with pytest.raises(InputError, match=r"manifest.json:2: not valid JSON"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("[]")
    with pytest.raises(InputError, match="a manifest is a JSON object"):
        read_manifest(tmp_path)


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
    manifest = files["manifest.json"]
    assert manifest["additionalProperties"] is False  # every field is in the schema
    assert {"top_k", "stages", "meta"} <= set(manifest["properties"])


# --- the manifest says what the scorer must not guess ------------------------------------------


def _manifest_file(root, **fields) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({"run_id": "r", **fields}), encoding="utf-8")


def test_top_k_and_stages_round_trip_in_pipeline_order(tmp_path):
    writer = RunWriter(tmp_path)
    writer.start(Manifest(run_id="r", top_k=10, stages=["generation", "retrieval", "chunking"]))
    manifest = read_run(tmp_path).manifest
    assert manifest.schema_version == RUNLOG_SCHEMA_VERSION == 3
    assert manifest.top_k == 10
    assert manifest.stages == [Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    assert Manifest(run_id="r").top_k is None and Manifest(run_id="r").stages is None


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"top_k": 0}, "top_k"),
        ({"stages": ["retrieval", "retrieval"]}, "stages"),
        ({"stages": ["rerank"]}, "stages.0"),
    ],
)
def test_a_bad_top_k_or_stages_names_the_field(tmp_path, fields, field):
    _manifest_file(tmp_path, **fields)
    with pytest.raises(InputError) as info:
        read_run(tmp_path)
    assert info.value.problem.field == field and info.value.problem.file.endswith("manifest.json")


def test_a_manifest_from_a_newer_cofe_is_refused(tmp_path):
    _manifest_file(tmp_path, schema_version=RUNLOG_SCHEMA_VERSION + 1, brand_new_field=1)
    with pytest.raises(InputError) as info:
        read_run(tmp_path)
    problem = info.value.problem
    assert problem.file == str(tmp_path / "manifest.json") and problem.field == "schema_version"
    assert f"schema_version {RUNLOG_SCHEMA_VERSION + 1}" in problem.message
    assert f"up to {RUNLOG_SCHEMA_VERSION}" in problem.message
    assert "written by a newer cofe" in problem.message and "upgrade" in problem.message


def test_an_unknown_manifest_field_is_refused_and_meta_holds_free_form_values(tmp_path):
    _manifest_file(tmp_path, parse_problems=["a.pdf: broken"])
    with pytest.raises(InputError) as info:
        read_run(tmp_path)
    problem = info.value.problem
    assert problem.file == str(tmp_path / "manifest.json") and problem.field == "parse_problems"
    assert "meta" in problem.message
    with pytest.raises(ValidationError):
        Manifest(run_id="r", parse_problems=[])
    _manifest_file(tmp_path, meta={"parse_problems": ["a.pdf: broken"], "team": "search"})
    assert read_run(tmp_path).manifest.meta["team"] == "search"


def test_a_version_1_manifest_is_migrated_on_read(tmp_path):
    _manifest_file(
        tmp_path / "staged",
        schema_version=1,
        pipeline={
            "name": "python",
            "top_k": 6,
            "stages": {"chunk": None, "retrieve": "m.r", "rerank": None, "generate": "m.g"},
        },
        parse_problems=["a.pdf: broken"],
        team="search",
    )
    manifest = read_run(tmp_path / "staged").manifest
    assert manifest.schema_version == 1  # what the file says: a reader can tell it was migrated
    assert manifest.top_k == 6
    assert manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    assert manifest.meta == {"parse_problems": ["a.pdf: broken"], "team": "search"}
    assert manifest.pipeline["top_k"] == 6  # the configuration itself is left as it was

    _manifest_file(
        tmp_path / "listed",
        schema_version=1,
        pipeline={"stages": ["retrieval", "reranking", "generation"]},
    )
    manifest = read_run(tmp_path / "listed").manifest
    assert manifest.top_k is None and manifest.stages == ["retrieval", "reranking", "generation"]

    _manifest_file(tmp_path / "bare", schema_version=1, pipeline={"top_k": "four"})
    manifest = read_run(tmp_path / "bare").manifest
    assert manifest.top_k is None and manifest.stages is None and manifest.meta == {}


# the shipped example's manifest as cofe 0.1 wrote it (schema version 1)
VERSION_1_MANIFEST = {
    "schema_version": 1,
    "run_id": "example-squad-bm25",
    "created_at": "2026-11-22T01:52:01.505367Z",
    "pipeline": {
        "parser": "plain text (SQuAD/CMRC paragraphs)",
        "chunker": "word windows of 120 words / 200 CJK characters, no overlap",
        "retriever": "bm25s over strict tokens",
        "candidates": 30,
        "reranker": "query-term coverage (example)",
        "top_k": 4,
        "generator": "extractive best sentence (not an LLM)",
    },
    "versions": {"cofe": "0.1.0", "bm25s": "0.3.16"},
}


def test_a_version_1_run_still_reads(tmp_path):
    run_dir = tmp_path / "v1"
    shutil.copytree(EXAMPLE_RUN, run_dir, ignore=shutil.ignore_patterns("scores"))
    (run_dir / "manifest.json").write_text(json.dumps(VERSION_1_MANIFEST))
    run = read_run(run_dir)
    assert run.manifest.schema_version == 1 and run.manifest.top_k == 4
    assert run.manifest.stages is None  # it never said: unknown, not guessed
    assert run.records and not run.problems


def test_the_shipped_example_run_is_version_2_and_read_as_the_current_layout():
    manifest = read_run(EXAMPLE_RUN).manifest
    assert manifest.schema_version == 2 and RUNLOG_SCHEMA_VERSION == 3  # 2 -> 3: same manifest
    assert manifest.top_k == 4 and manifest.stages[-2:] == ["reranking", "generation"]


def test_cofe_schema_prints_the_current_schema(capsys):
    from cofe.cli import main

    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == runlog_json_schema()
    assert printed["runlog_schema_version"] == RUNLOG_SCHEMA_VERSION
    assert "top_k" in printed["files"]["manifest.json"]["properties"]


def test_a_version_2_derived_chunk_is_read_with_typed_fields(tmp_path):
    """Version 2 marked a sentence window with meta.derived_from (one id) and derived_by."""
    _manifest_file(tmp_path, schema_version=2)
    line = {
        "chunk_id": "a~w",
        "doc_id": "d1",
        "text": "window",
        "meta": {"derived_from": "a", "derived_by": "replaced", "other": 1},
    }
    (tmp_path / "chunks.jsonl").write_text(json.dumps(line) + "\n")
    chunk = read_run(tmp_path).chunks["a~w"]
    assert (chunk.kind, chunk.derived_from, chunk.meta) == ("replaced", ["a"], {"other": 1})
    assert chunk.is_derived


def test_a_derived_item_needs_a_kind_other_than_chunk():
    with pytest.raises(ValidationError, match="give it a kind"):
        Chunk(chunk_id="s", doc_id="d", text="t", derived_from=["a"], kind="chunk")
    summary = Chunk(chunk_id="s", doc_id="d", text="t", derived_from=["a"])
    assert summary.kind == "derived" and summary.is_derived
    assert not Chunk(chunk_id="a", doc_id="d", text="t").is_derived
