"""One record of a query: the adapters' ``Trace`` is the run-log ``SampleRecord`` without its
sample id, and the span record (``SpanTraceRecord``) converts to and from it -- the
conversions the monitor's watch() and canaries call."""

from __future__ import annotations

import dataclasses

from cofe.adapters import SpanTraceRecord, Trace
from cofe.runlog import Chunk, RankedChunk, SampleRecord, Stage, StageError


def test_a_trace_has_the_run_log_records_fields_but_the_sample_id() -> None:
    fields = {f.name for f in dataclasses.fields(Trace)}
    assert fields == set(SampleRecord.model_fields) - {"sample_id"}


def _sample(error: bool = False) -> SampleRecord:
    return SampleRecord(
        sample_id="q1",
        pool=[RankedChunk(chunk_id="a#0", score=2.0), RankedChunk(chunk_id="a#1", score=1.0)],
        context=None if error else [RankedChunk(chunk_id="a#1", score=0.9)],
        answer=None if error else "Paris",
        latency={Stage.RETRIEVAL: 0.01, Stage.RERANKING: 0.002},
        error=StageError(stage=Stage.RERANKING, type="Boom", message="it broke") if error else None,
    )


CHUNKS = {
    "a#0": Chunk(chunk_id="a#0", doc_id="a", text="The capital of France is Paris."),
    "a#1": Chunk(chunk_id="a#1", doc_id="a", text="Paris has the Eiffel tower."),
}


def test_a_run_log_record_goes_to_a_span_record_and_back_unchanged() -> None:
    for error in (False, True):
        sample = _sample(error)
        trace = Trace.of(sample)
        assert trace.record("q1") == sample
        record = SpanTraceRecord.of_sample(
            "t1",
            "What is the capital?",
            sample,
            CHUNKS,
            started_ns=1,
            ended_ns=2,
            stages=None,
            top_k=None,
        )
        assert [d.text for d in record.pool or []] == [CHUNKS["a#0"].text, CHUNKS["a#1"].text]
        back = record.sample(
            "q1",
            ranked=lambda docs: [RankedChunk(chunk_id=d.ref or "", score=d.score) for d in docs],
        )
        assert back.model_dump(exclude={"error"}) == sample.model_dump(exclude={"error"})
        if error:
            assert back.error is not None and sample.error is not None
            assert (back.error.stage, back.error.type, back.error.message) == (
                Stage.RERANKING,
                "Boom",
                "it broke",
            )
