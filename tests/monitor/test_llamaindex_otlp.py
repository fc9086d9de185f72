"""End to end on loopback: a LlamaIndex pipeline instrumented with OpenInference exports its
spans with the OpenTelemetry SDK's OTLP/HTTP exporter to ``cofe monitor collect`` (a real
subprocess); the store then holds each query's stages and the per-stage series. The
pipeline's code (``_rag_app``) imports nothing from cofe."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.monitor import Collector, MonitorStore, run_canary
from cofe.testing import ScriptedOpenAI, free_port, start_collector
from tests.conftest import CAPITALS
from tests.monitor import _rag_app

pytestmark = pytest.mark.slow
TEXTS = {name: text for name, text in CAPITALS.items() if name.endswith(".txt")} | {
    "germany.md": "Berlin is the capital of Germany. The Brandenburg Gate stands in Berlin.",
    "italy.txt": "Rome is the capital of Italy. The Colosseum held 50,000 spectators.",
}


def _wait_until(check, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen]]:
    db, port = tmp_path / "monitor.db", free_port()
    process = start_collector(str(db), port, "--refresh", "0.2", "--window", "60")
    try:
        yield f"http://127.0.0.1:{port}/v1/traces", db, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)


def test_an_instrumented_llamaindex_pipeline_lands_in_the_store_stage_by_stage(collector):
    url, db, process = collector
    questions = [
        "When was the Eiffel Tower finished?",
        "What is the capital of Germany?",
        "How many spectators did the Colosseum hold?",
    ]
    with ScriptedOpenAI(_rag_app.extractive_reply) as llm:
        engine = _rag_app.build_engine(TEXTS, llm.base_url)
        provider, instrumentor = _rag_app.instrument(url)
        try:
            responses = {q: engine.query(q) for q in questions}
            provider.force_flush()
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
    pools = {q: [n.node.get_content() for n in engine.retriever.retrieve(q)] for q in questions}

    with MonitorStore(db) as store:
        traces = _wait_until(
            lambda: (
                [t for t in store.traces.started_in(0, 2**62, with_text=True) if t.is_query]
                if len(store.traces.started_in(0, 2**62)) >= 3
                else None
            )
        )
        by_query = {t.query: t for t in traces}
    assert set(by_query) == set(questions)
    for q, response in responses.items():
        trace = by_query[q]
        assert [d.text for d in trace.pool] == pools[q]  # BM25's own ranking, read from spans
        assert [d.text for d in trace.context] == [
            n.node.get_content() for n in response.source_nodes
        ]
        assert trace.answer == str(response) and trace.answer  # the LLM's reply, verbatim
        assert trace.problems == [] and trace.error is None
        assert set(trace.latency) == {"retrieval", "reranking", "generation"}
    # stopping the collector recomputes the windows: the per-stage series are in the store
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    stderr = process.stderr.read()
    assert "3 trace" in stderr or "trace updates" in stderr
    with MonitorStore(db) as store:
        series = {(r["stage"], r["signal"]): r for r in store.windows.series()}
    assert series[("all", "Traces")]["value"] == 3
    assert series[("retrieval", "PoolSize")]["value"] == 3
    assert series[("reranking", "ContextSize")]["value"] == 2
    assert series[("generation", "LatencyP95")]["n"] == 3
    assert series[("generation", "RefusalRate")]["value"] == 0.0


def test_canaries_sent_to_the_service_name_the_stage_that_lost_the_evidence(
    tmp_path, small_evalset
):
    with MonitorStore(tmp_path / "monitor.db", window_seconds=60) as store:
        receiver = Collector(store, port=0, refresh_seconds=3600, quiet=True)
        receiver.start()
        try:
            with ScriptedOpenAI(_rag_app.extractive_reply) as llm:
                engine = _rag_app.build_engine(TEXTS, llm.base_url)
                service = _rag_app.QueryService(engine)
                provider, instrumentor = _rag_app.instrument(receiver.url)
                try:
                    healthy = run_canary(
                        store, small_evalset, tmp_path / "runs", send=service.url, wait_seconds=30
                    )
                    # the reranker is swapped for one that drops the evidence
                    service.engine = _rag_app.build_engine(TEXTS, llm.base_url, drop_best=True)
                    broken = run_canary(
                        store, small_evalset, tmp_path / "runs", send=service.url, wait_seconds=30
                    )
                finally:
                    instrumentor.uninstrument()
                    provider.shutdown()
                    service.close()
        finally:
            receiver.shutdown()
        assert healthy.answered == broken.answered == 3
        assert healthy.result.verdicts.verdict.str.startswith("pass").all(), (
            healthy.result.verdicts.explanation.tolist()
        )
        assert (broken.result.verdicts.stage == "reranking").all(), (
            broken.result.verdicts.explanation.tolist()
        )
        # the round's cases and measures are in the store; canary traces left the traffic series
        cases = store.db.execute(
            "SELECT round_id, sample_id, stage, trace_id FROM canary_cases WHERE round_id = ?",
            [broken.round_id],
        )
        assert {c[2] for c in cases} == {"reranking"} and all(c[3] for c in cases)
        lost = store.canaries.series(measure="cut_by_rerank@reranking")
        assert [r["value"] for r in lost] == [1.0] and lost[0]["round_id"] == broken.round_id
        origins = store.db.execute(
            "SELECT origin, COUNT(*) FROM traces WHERE is_query = 1 GROUP BY origin"
        )
        assert dict(origins) == {"canary": 6}  # (building the second engine was traced too)
        manifest = json.loads((broken.run_dir / "manifest.json").read_text())
        assert manifest["corpus"] == "partial"
