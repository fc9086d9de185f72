"""One family of records of a query: every member has the fields the family shares, and each
converts to and from the run log's SampleRecord without losing them."""

from __future__ import annotations

import dataclasses

from cofe.adapters import RecordDraft, SpanTraceRecord, Trace, TraceRecord
from cofe.runlog import (
    QUERY_OUTPUTS,
    Chunk,
    CompactRecord,
    Outputs,
    RankedChunk,
    Refs,
    SampleRecord,
    Stage,
    compact_record,
)

SAMPLE = SampleRecord(
    sample_id="q1",
    pool=[RankedChunk(chunk_id="a#0", score=2.0), RankedChunk(chunk_id="a#1", score=1.0)],
    context=[RankedChunk(chunk_id="a#1", score=0.5)],
    answer="Paris",
    latency={Stage.RETRIEVAL: 0.01, Stage.GENERATION: 0.2},
)
CHUNKS = {
    "a#0": Chunk(chunk_id="a#0", doc_id="a", text="The capital of France is Paris."),
    "a#1": Chunk(chunk_id="a#1", doc_id="a", text="Paris has the Eiffel tower."),
}


def test_every_member_has_the_shared_fields() -> None:
    assert set(QUERY_OUTPUTS) <= set(SampleRecord.model_fields)
    for member in (CompactRecord, RecordDraft, TraceRecord):
        names = {f.name for f in dataclasses.fields(member)}
        assert set(QUERY_OUTPUTS) <= names, member.__name__


def test_old_names_are_the_same_types() -> None:
    assert Outputs is CompactRecord and Trace is RecordDraft and SpanTraceRecord is TraceRecord


def _ids(items: object) -> list[str] | None:
    return None if items is None else [i.chunk_id for i in items]  # type: ignore[attr-defined]


def test_each_view_keeps_what_the_record_produced() -> None:
    compact = compact_record(SAMPLE, Refs())
    draft = RecordDraft.of(SAMPLE)
    trace = TraceRecord.of_sample(
        "t1", "Capital?", SAMPLE, CHUNKS, started_ns=0, ended_ns=1, stages=None, top_k=None
    )
    assert draft.record("q1") == SAMPLE
    for view in (compact, draft):
        for name in QUERY_OUTPUTS:
            mine, theirs = getattr(view, name), getattr(SAMPLE, name)
            if name in ("pool", "context"):
                assert _ids(mine) == _ids(theirs), (type(view).__name__, name)
            else:
                assert mine == theirs, (type(view).__name__, name)
    # a trace names documents by their content; their own ids come back through ``ref``
    assert [d.ref for d in trace.pool or []] == _ids(SAMPLE.pool)
    assert trace.answer == SAMPLE.answer
    back = trace.sample(
        "q1", ranked=lambda docs: [RankedChunk(chunk_id=d.ref or "", score=d.score) for d in docs]
    )
    assert back.model_dump() == SAMPLE.model_dump()
