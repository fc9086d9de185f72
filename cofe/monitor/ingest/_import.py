"""``cofe monitor import FILE``: spans exported to a file, into the store.

Reads OTLP/JSON requests (one per line, as the OpenTelemetry Collector's file
exporter writes them, or one document), the SDK's span JSON (what the
``ConsoleSpanExporter`` prints, objects one after another), or a binary OTLP
protobuf request (``.pb``). A bad record is a problem naming the file and line;
the records around it are still stored, in batches, so an interrupted import keeps
what it stored (and importing the file again adds nothing twice).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cofe._errors import InputProblem
from cofe.monitor.ingest._spans import (
    Span,
    SpanFormatError,
    json_values,
    spans_from_json_value,
    spans_from_protobuf_frames,
)
from cofe.monitor.store import MonitorStore, StoreError


@dataclass
class ImportReport:
    spans: int = 0
    new_spans: int = 0
    traces: int = 0
    problem_traces: int = 0
    refused_spans: int = 0  # past a trace's bound (MAX_TRACE_SPANS); the store says which
    refusals: list[str] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)


def _values(text: str, name: str, report: ImportReport) -> Iterator[tuple[int, Any]]:
    """JSON values with their line: one per line when the file is JSON Lines (a bad line is a
    problem, the next lines are still read), else one value after another (pretty JSON)."""
    lines = text.splitlines()
    if not _line_by_line(lines):
        yield from json_values(text)
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except (json.JSONDecodeError, RecursionError, ValueError) as error:
            report.problems.append(
                InputProblem(name, number, None, f"not valid JSON: {error}"[:300])
            )


def _parses(line: str, kind: type = object) -> bool:
    try:
        return isinstance(json.loads(line), kind)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return False


def _line_by_line(lines: list[str], look: int = 100) -> bool:
    """JSON Lines when the first record is one JSON value on its line, or when it is bad but
    a later one of the first ``look`` records is a whole object on its line (a pretty
    document opens with a bare ``{`` or ``[`` and spreads every object over lines): a bad
    first line is named and the rest read, as a bad line anywhere else is."""
    records = [line for line in lines if line.strip()][:look]
    if not records:
        return False
    if _parses(records[0]):
        return True
    if records[0].strip() in ("{", "["):
        return False
    return any(_parses(line, dict) for line in records[1:])


def import_spans(
    store: MonitorStore,
    path: str | os.PathLike[str],
    *,
    batch_size: int = 2000,
    on_batch: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; give an exported span file")
    raw = path.read_bytes()
    report = ImportReport()
    pending: list[tuple[int | None, list[Span]]] = []  # (line, its spans), not yet stored
    touched: set[str] = set()

    def store_batch(spans: list[Span]) -> None:
        done = store.traces.ingest(spans)
        report.spans += done.spans
        report.new_spans += done.new_spans
        if done.refused:
            report.refused_spans += done.refused
            report.refusals.append(done.refusal())

    def flush() -> None:
        if not pending:
            return
        try:
            store_batch([s for _, spans in pending for s in spans])
        except StoreError:
            raise  # the store itself failed (not a line's content): nothing more can be stored
        except Exception:  # some line the store refused: find it, keep the rest
            for line, spans in pending:
                try:
                    store_batch(spans)
                except StoreError:
                    raise
                except Exception as error:  # named; the next line is read
                    report.problems.append(
                        InputProblem(
                            name, line, None, f"not stored ({type(error).__name__}: {error})"[:300]
                        )
                    )
        pending.clear()
        if on_batch is not None:
            on_batch(report)

    if path.suffix in (".pb", ".protobuf", ".bin") or raw.lstrip()[:1] not in (b"{", b"[", b""):
        try:
            spans = spans_from_protobuf_frames(raw)
        except SpanFormatError as error:
            report.problems.append(InputProblem(name, None, None, str(error)))
            return report
        for at in range(0, len(spans), batch_size):
            pending.append((None, spans[at : at + batch_size]))
            touched.update(s.trace_id for s in spans[at : at + batch_size])
            flush()
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            report.problems.append(
                InputProblem(name, None, None, f"not UTF-8 text ({error.reason})")
            )
            return report
        try:
            for line, value in _values(text, name, report):
                try:
                    spans = spans_from_json_value(value)
                except SpanFormatError as error:
                    report.problems.append(InputProblem(name, line, None, str(error)))
                    continue
                pending.append((line, spans))
                touched.update(s.trace_id for s in spans)
                if sum(len(group) for _, group in pending) >= batch_size:
                    flush()
        except SpanFormatError as error:  # the rest of the file is not JSON: keep what came before
            report.problems.append(
                InputProblem(name, None, None, f"{error}; the rest of the file was not read")
            )
        flush()
    if touched:
        traces = store.traces.by_id(sorted(touched))
        report.traces = len(traces)
        report.problem_traces = sum(1 for t in traces if t.problems)
    return report
