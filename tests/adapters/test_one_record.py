"""One record of a query: the adapters' ``Trace`` is the run-log ``SampleRecord`` without its
sample id, and the span record (``SpanTraceRecord``) converts to and from it -- the
conversions the monitor makes (``record_of``, its canary's ``_sample_of``) are these."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest

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


def _monitor(module: str, name: str) -> Any:
    """The monitor's own conversion, while it has one (it is to call these instead)."""
    found = getattr(importlib.import_module(module), name, None)
    if found is None:
        pytest.skip(f"{module}.{name} is gone: the monitor uses SpanTraceRecord's conversions")
    return found


def test_the_span_records_conversion_is_the_monitors() -> None:
    """Until the monitor calls ``SpanTraceRecord.of_sample`` itself, its ``record_of`` and
    this one agree field by field."""
    record_of = _monitor("cofe.monitor._record", "record_of")

    for error in (False, True):
        for top_k in (None, 1):
            sample = _sample(error).model_copy(update={"context": None})
            ours = SpanTraceRecord.of_sample(
                "t",
                "q",
                sample,
                CHUNKS,
                started_ns=5,
                ended_ns=9,
                stages=(Stage.RETRIEVAL,),
                top_k=top_k,
            )
            theirs = record_of(
                "t",
                "q",
                sample,
                CHUNKS,
                started_ns=5,
                ended_ns=9,
                stages=(Stage.RETRIEVAL,),
                top_k=top_k,
            )
            assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)


def test_the_span_records_sample_is_the_canarys() -> None:
    _sample_of = _monitor("cofe.monitor._canary", "_sample_of")

    for error in (False, True):
        record = SpanTraceRecord.of_sample(
            "t", "q", _sample(error), CHUNKS, started_ns=0, ended_ns=1, stages=None, top_k=None
        )
        assert record.sample("q1") == _sample_of("q1", record)
