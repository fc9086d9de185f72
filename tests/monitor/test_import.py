"""Exported span files into the store: every format the exporters write; bad records named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.cli import main
from cofe.monitor import MonitorStore, import_spans
from cofe.monitor.store import STORE_SCHEMA_VERSION
from tests.monitor.conftest import otlp_json, otlp_request, rag_trace


def _traces(n: int) -> list:
    return [rag_trace(trace=f"{i + 1:032x}", query=f"question {i}?") for i in range(n)]


def test_collector_file_exporter_lines_with_a_bad_line_keep_the_others(tmp_path: Path):
    lines = [json.dumps(otlp_json(t)) for t in _traces(3)]
    lines.insert(1, '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}')
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path)
        assert (report.spans, report.traces, report.problem_traces) == (18, 3, 0)
        assert len(report.problems) == 1
        problem = report.problems[0]
        assert (problem.file, problem.line) == (str(path), 2) and "traceId" in problem.message
        again = import_spans(store, path)  # an interrupted import run again adds nothing twice
        assert again.new_spans == 0 and store.counts()["spans"] == 18


def test_a_bad_first_line_is_named_and_the_lines_after_it_stored(tmp_path: Path):
    """Issue 44, defect 4: a bad FIRST line stopped the import ("the rest of the file was not
    read") while a bad later line is named and the others stored (docs/monitoring.md)."""
    lines = [json.dumps(otlp_json(t)) for t in _traces(3)]
    lines.insert(0, '{"resourceSpans": [{"scopeSpans": [{"spans": [')  # cut short
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path)
        assert (report.spans, report.traces) == (18, 3)
        assert [(p.file, p.line) for p in report.problems] == [(str(path), 1)]
        assert "not valid JSON" in report.problems[0].message


def test_the_sdk_console_exporter_output_is_read(tmp_path: Path):
    """``ConsoleSpanExporter`` prints ``span.to_json()``: pretty objects one after another."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("query") as root:
        root.set_attributes({"openinference.span.kind": "CHAIN", "input.value": "Who won?"})
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attributes(
                {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": "Denver won.",
                    "retrieval.documents.0.document.score": 2.5,
                }
            )
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attributes({"openinference.span.kind": "LLM", "output.value": "Denver."})
    path = tmp_path / "console.txt"
    path.write_text("".join(span.to_json() + "\n" for span in exporter.get_finished_spans()))
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path)
        assert report.problems == [] and report.traces == 1
        trace = store.traces.started_in(0, 2**62, with_text=True)[0]
    assert (trace.query, trace.answer) == ("Who won?", "Denver.")
    assert [(d.text, d.score) for d in trace.pool] == [("Denver won.", 2.5)]


def test_protobuf_files_one_request_or_length_prefixed_frames(tmp_path: Path):
    one = tmp_path / "one.pb"
    one.write_bytes(otlp_request(_traces(1)[0]).SerializeToString())
    framed = tmp_path / "framed.bin"
    frames = [otlp_request(t).SerializeToString() for t in _traces(3)]
    framed.write_bytes(b"".join(len(f).to_bytes(4, "big") + f for f in frames))
    with MonitorStore(tmp_path / "m.db") as store:
        assert import_spans(store, one).traces == 1
        assert import_spans(store, framed).traces == 3
        assert store.counts()["traces"] == 3
    broken = tmp_path / "broken.pb"
    broken.write_bytes(b"\x0a\xff\xff\xff garbage")
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, broken)
    assert report.spans == 0 and "protobuf" in report.problems[0].message


def test_the_cli_imports_reports_and_exits_2_on_a_bad_file(tmp_path: Path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(otlp_json(_traces(1)[0]), indent=2))
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": [}')
    db = str(tmp_path / "m.db")
    assert main(["monitor", "import", "--store", db, str(good)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["spans"], out["traces"]) == (6, 1)
    assert main(["monitor", "import", "--store", db, str(bad)]) == 2
    assert f"{bad}" in capsys.readouterr().err
    assert main(["monitor", "status", "--store", db]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (
        status["traces"] == 1
        and status["schema_version"] == STORE_SCHEMA_VERSION
        and status["engine"] == "sqlite"
    )
    assert (
        main(["monitor", "series", "--store", db, "--stage", "retrieval", "--signal", "PoolSize"])
        == 0
    )
    table = capsys.readouterr().out
    assert "PoolSize" in table and "3" in table


@pytest.mark.parametrize("text", ["", "   \n"])
def test_an_empty_file_imports_nothing(tmp_path: Path, text: str):
    path = tmp_path / "empty.jsonl"
    path.write_text(text)
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path)
    assert report.spans == 0 and report.problems == []


def test_a_request_of_the_wrong_shape_is_a_problem_not_a_crash(tmp_path: Path):
    path = tmp_path / "odd.jsonl"
    path.write_text(
        '{"resourceSpans": ["x"]}\n{"resourceSpans": [{"scopeSpans": ["x"]}]}\n'
        + json.dumps(otlp_json(_traces(1)[0]))
        + "\n"
    )
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path)
    assert [p.line for p in report.problems] == [1, 2] and report.traces == 1


def test_a_torn_line_in_the_middle_of_a_jsonl_file_loses_only_that_line(tmp_path: Path):
    lines = [json.dumps(otlp_json(t)) for t in _traces(3)]
    lines[1] = lines[1][: len(lines[1]) // 2]  # a writer interrupted mid-line
    path = tmp_path / "torn.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path)
    assert report.traces == 2 and [p.line for p in report.problems] == [2]
