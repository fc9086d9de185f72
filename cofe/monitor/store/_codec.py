"""Spans and stage records as the store's rows hold them, and back.

Document contents leave a span's attributes for the chunk table (content-addressed: a text
is stored once, whatever node id a pipeline gave it); the span keeps the chunk id under
``...document.content_chunk``. A trace keeps its pool and context as
``[chunk id, score, ref, chars]`` lists. What the tracer dropped and what had to be repaired
to be storable stay with the span, so a trace rebuilt later still says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from cofe.adapters import Span, TraceRecord
from cofe.adapters import SpanDoc as Doc
from cofe.monitor.store._clean import REPAIRED, clean_text
from cofe.runlog import Stage

TRAFFIC, CANARY = "traffic", "canary"  # where a trace came from (``traces.origin``)
INT64_MAX = 2**63 - 1
DROPPED = "cofe.dropped_attributes"  # a stored span's count of attributes its tracer dropped
_CONTENT, _CHUNK = ".document.content", ".document.content_chunk"


def _ns(value: int) -> int:
    """A time bound as the store's signed 64-bit integers hold it: a range reaching past
    them (a window computed from a span stored before times were checked) is cut there."""
    return max(-INT64_MAX, min(int(value), INT64_MAX))


def span_row(span: Span, texts: dict[str, str], received_ns: int) -> dict[str, Any]:
    """The ``spans`` row of a (storable) span; its document texts are added to ``texts``."""
    from cofe.adapters import text_id

    attributes: dict[str, Any] = {}
    for key, value in span.attributes.items():
        if key.endswith(_CONTENT) and isinstance(value, str):
            chunk_id = text_id(value)
            texts[chunk_id] = value
            attributes[key + "_chunk"] = chunk_id
        else:
            attributes[key] = value
    if span.dropped_attributes:
        attributes[DROPPED] = span.dropped_attributes
    if span.repaired:
        attributes[REPAIRED] = span.repaired
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": span.name,
        "kind": span.kind,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "status": span.status,
        "status_message": span.status_message,
        "attributes": json.dumps(attributes),
        "events": json.dumps(list(span.events)),
        "received_ns": received_ns,
    }


def chunk_ids_of(attributes: Mapping[Any, Any]) -> set[str]:
    return {v for k, v in attributes.items() if k.endswith(_CHUNK)}


def span_of(row: Mapping[Any, Any], attributes: dict[str, Any], texts: Mapping[str, str]) -> Span:
    """The span a ``spans`` row holds (``attributes``: its decoded JSON, chunk texts restored
    from ``texts``)."""
    dropped = int(attributes.pop(DROPPED, 0))
    repaired = int(attributes.pop(REPAIRED, 0))
    restored: dict[str, Any] = {}
    for key, value in attributes.items():
        if key.endswith(_CHUNK):
            text = texts.get(value)
            if text is not None:
                restored[key.removesuffix("_chunk")] = text
        else:
            restored[key] = value
    return Span(
        trace_id=row["trace_id"],
        span_id=row["span_id"],
        parent_id=row["parent_id"],
        name=row["name"],
        start_ns=row["start_ns"],
        end_ns=row["end_ns"],
        status=row["status"],
        status_message=row["status_message"],
        attributes=restored,
        events=tuple(json.loads(row["events"])),
        dropped_attributes=dropped,
        repaired=repaired,
    )


def _doc_list(docs: Sequence[Doc] | None) -> str | None:
    if docs is None:
        return None
    return json.dumps([[d.chunk_id, d.score, d.ref, d.chars] for d in docs])


def trace_row(record: TraceRecord, origin: str, now_ns: int) -> dict[str, Any]:
    return {
        "trace_id": record.trace_id,
        "origin": origin,
        "started_ns": record.started_ns,
        "ended_ns": record.ended_ns,
        "query": record.query,
        "answer": record.answer,
        "pool": _doc_list(record.pool),
        "context": _doc_list(record.context),
        "latency": json.dumps({s.value: v for s, v in record.latency.items()}),
        "stages": json.dumps([s.value for s in record.stages]),
        "error_stage": record.error_stage.value if record.error_stage else None,
        "error": record.error,
        "problems": json.dumps(record.problems),
        "ignored": json.dumps(record.ignored),
        "spans": record.spans,
        "is_query": int(record.is_query),
        "updated_ns": now_ns,
    }


def listed_chunk_ids(row: Mapping[Any, Any]) -> set[str]:
    return {d[0] for column in ("pool", "context") if row[column] for d in json.loads(row[column])}


def record_of(row: Mapping[Any, Any], texts: Mapping[str, str]) -> TraceRecord:
    """The stage record a ``traces`` row holds (chunk texts from ``texts``, when loaded)."""

    def docs(column: str | None) -> list[Doc] | None:
        if column is None:
            return None
        # [chunk id, score, ref, chars]; rows stored before chars was kept have three;
        # a score that is not finite (stored before cofe dropped them) is no score
        return [
            Doc(d[0], _finite(d[1]), d[2], texts.get(d[0]), d[3] if len(d) > 3 else None)
            for d in json.loads(column)
        ]

    return TraceRecord(
        trace_id=row["trace_id"],
        started_ns=row["started_ns"],
        ended_ns=row["ended_ns"],
        query=row["query"],
        answer=row["answer"],
        pool=docs(row["pool"]),
        context=docs(row["context"]),
        latency={Stage(k): v for k, v in json.loads(row["latency"]).items()},
        stages=tuple(Stage(s) for s in json.loads(row["stages"])),
        error_stage=Stage(row["error_stage"]) if row["error_stage"] else None,
        error=row["error"],
        problems=json.loads(row["problems"]),
        ignored=json.loads(row["ignored"]),
        spans=row["spans"],
        is_query=bool(row["is_query"]),
    )


def _finite(score: Any) -> float | None:
    return score if isinstance(score, int | float) and math.isfinite(score) else None


def storable_record(record: TraceRecord) -> TraceRecord:
    """An adapter's record with storable text (``_clean``: surrogates, NUL), its chunks
    addressed by the text kept; repairs are said among its problems."""
    from cofe.adapters import text_id

    repairs = 0

    def text(value: str | None) -> str | None:
        nonlocal repairs
        if value is None:
            return None
        cleaned, n = clean_text(value)
        repairs += n
        return cleaned

    def docs(listed: list[Doc] | None) -> list[Doc] | None:
        nonlocal repairs
        if listed is None:
            return None
        out = []
        for d in listed:
            kept = text(d.text)
            chunk_id = text_id(kept) if kept is not None and kept != d.text else d.chunk_id
            score = _finite(d.score)
            repairs += int(d.score is not None and score is None)  # inf or NaN: no score
            out.append(replace(d, chunk_id=chunk_id, text=kept, ref=text(d.ref), score=score))
        return out

    cleaned = replace(
        record,
        query=text(record.query),
        answer=text(record.answer),
        error=text(record.error),
        pool=docs(record.pool),
        context=docs(record.context),
        problems=[text(p) or "" for p in record.problems],
    )
    if repairs:
        cleaned.problems.append(
            f"{repairs} value(s) repaired to be stored (lone surrogates as U+FFFD, NUL removed)"
        )
    return cleaned


NOT_FINITE = "not a finite number (stored from a score cofe no longer keeps)"


def finite_row(row: dict[str, Any], note: str | None = "note") -> dict[str, Any]:
    """A series row whose value is not finite (stored before non-finite scores were
    dropped) as a row with no value: a chart or a test must never meet inf or NaN."""
    value = row.get("value")
    if isinstance(value, float) and not math.isfinite(value):
        row["value"] = None
        if note is not None:
            row[note] = NOT_FINITE
    return row
