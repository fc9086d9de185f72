"""The verdict-validity benchmark's LangChain and Haystack pipelines (``--pipeline``) record, over
two tiny documents, chunks with offsets into the recorded documents, a pool of up to 30, the 4
chunks the prompt held as the context and an extractive answer -- and the run scores, and its
gold (from answer offsets) is computed as for the built-in pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

TEXTS = {
    "harbour.txt": " ".join(
        f"The harbour log entry {i} records that ship number {100 + i} left at dawn."
        for i in range(10)
    ),
    "garden.txt": "花园笔记记录了玫瑰花坛在春天种下。" * 12,
}


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in TEXTS.items():
        (docs / name).write_text(text, encoding="utf-8")
    return docs


def _evalset(path: Path) -> Path:
    from cofe import EvalSample, write_evalset

    samples = [
        EvalSample(
            id=f"q{i}",
            query=f"When did ship number {100 + i} leave the harbour?",
            coarse_keywords=["harbour log"],
            fine_keywords=[["dawn"]],
            reference_answer="At dawn.",
            source={"doc": "harbour.txt"},
        )
        for i in range(3)
    ]
    write_evalset(path, samples)
    return path


@pytest.mark.parametrize("kind", ["langchain", "haystack"])
def test_a_framework_pipeline_records_chunks_with_offsets_and_scores(tmp_path: Path, kind: str):
    pytest.importorskip({"langchain": "langchain_community", "haystack": "haystack"}[kind])
    pytest.importorskip(f"openinference.instrumentation.{kind}")
    from benchmarks._framework_pipelines import TOP_K, build
    from benchmarks.verdict_validity import ChunkSpan, gold_facts
    from cofe import ScoreConfig, read_run, score_run
    from cofe.runner import run_pipeline

    pipeline = build(kind, _docs(tmp_path), 32)
    run_pipeline(
        pipeline,
        _evalset(tmp_path / "evalset.jsonl"),
        tmp_path / "run",
        progress=False,
        concurrency=2,
    )
    run = read_run(tmp_path / "run")
    assert run.problems == []
    assert set(run.documents) == set(TEXTS)
    assert all(run.documents[name].text == text for name, text in TEXTS.items())
    assert len(run.chunks) > 4
    for chunk in run.chunks.values():  # every chunk placed in its document's text
        assert chunk.start is not None, chunk.chunk_id
        assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    record = run.records["q1"]
    assert record.pool is not None and record.context is not None
    assert [r.chunk_id for r in record.context] == [r.chunk_id for r in record.pool][:TOP_K]
    assert record.answer == "The harbour log entry 1 records that ship number 101 left at dawn."

    text = TEXTS["harbour.txt"]
    chunks = [
        ChunkSpan(c.chunk_id, c.start, c.end)
        for c in run.chunks.values()
        if c.doc_id == "harbour.txt"
    ]
    gold = {}
    for i in range(3):  # the gold of each question, from the offset of its answer
        at = text.index(f"ship number {100 + i} left at dawn") + len(f"ship number {100 + i} ")
        at += len("left at ")
        got = run.records[f"q{i}"]
        gold[f"q{i}"] = gold_facts(
            [(at, at + 4)],
            chunks,
            [r.chunk_id for r in got.pool],
            [r.chunk_id for r in got.context],
            TOP_K,
            got.answer,
            ["dawn"],
        ).stage
    assert gold["q1"] == "pass"

    result = score_run(tmp_path / "run", config=ScoreConfig())
    verdicts = dict(zip(result.verdicts["sample_id"], result.verdicts["verdict"], strict=True))
    assert verdicts["q1"] == "pass"
    # cofe passes exactly the questions the gold passes (a chunk cut mid-sentence may leave
    # the extractive answer without "dawn": a generation loss on both sides)
    passed = {q for q, v in verdicts.items() if v == "pass"}
    assert passed == {q for q, g in gold.items() if g == "pass"}
