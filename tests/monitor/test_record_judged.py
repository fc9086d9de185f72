"""Adapters writing straight to the store, and the judges' label-free measures on a sampled
share of that traffic (the judges' own measure objects, against the loopback server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cofe import Chunk
from cofe.adapters import PythonPipeline
from cofe.llm import Endpoint, LLMClient
from cofe.monitor import MonitorStore, judge_traffic, refresh_windows, watch
from cofe.monitor.analysis._judged import sampled
from cofe.runlog import Stage
from cofe.testing import ScriptedOpenAI
from tests.judges.test_judge import CASES, CHUNKS, scripted

QUESTIONS = list(CASES)[:3]  # answers judged 0.5, 1.0, and a refusal with no claim


def _pipeline() -> PythonPipeline:
    answers = {q: CASES[q][0] for q in QUESTIONS}
    return PythonPipeline(
        chunks=[Chunk(chunk_id=c, doc_id="sb", text=t) for c, t in CHUNKS.items()],
        retrieve=lambda q: ["c2", "c1", "c3"],
        rerank=lambda q, candidates: [candidates[1]],
        generate=lambda q, context: answers[q],
        top_k=2,
    )


def test_a_watched_pipeline_stores_each_answer_as_a_trace(tmp_path: Path):
    pipeline = _pipeline()
    pipeline.prepare([], None)
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        watched = watch(pipeline, store)
        for q in QUESTIONS:
            trace = watched.answer(q)
            assert trace.answer == CASES[q][0]  # the pipeline's own result, unchanged
        traces = store.traces.started_in(0, 2**63 - 1, with_text=True)
        assert [t.query for t in traces] == QUESTIONS
        first = traces[0]
        assert [d.text for d in first.pool] == [CHUNKS["c2"], CHUNKS["c1"], CHUNKS["c3"]]
        assert [d.ref for d in first.context] == ["c1"]
        assert first.stages == (Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION)
        assert set(first.latency) == {Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION}
        refresh_windows(store)
        rows = {(r["stage"], r["signal"]): r for r in store.windows.series()}
    assert rows[("all", "Traces")]["value"] == 3
    assert rows[("reranking", "Top1Dropped")]["value"] == 1.0  # the pool's first was dropped
    assert rows[("generation", "RefusalRate")]["value"] == pytest.approx(1 / 3)  # "I don't know."


def test_the_judged_share_keeps_to_its_budget_and_uses_the_judges_measures(tmp_path: Path):
    pipeline = _pipeline()
    pipeline.prepare([], None)
    with (
        MonitorStore(tmp_path / "m.db", window_seconds=3600) as store,
        ScriptedOpenAI(scripted) as server,
    ):
        watched = watch(pipeline, store)
        for q in QUESTIONS:
            watched.answer(q)
        client = LLMClient(Endpoint(server.base_url, "judge-model", "secret", timeout=5))
        first = judge_traffic(store, client, share=1.0, budget=4)
        assert (first.judged, first.skipped_budget, first.calls) == (2, 1, 4)
        refresh_windows(store)
        faith = store.windows.series(stage="generation", signal="Faithfulness")[0]
        assert (faith["value"], faith["n"]) == (pytest.approx(0.75), 2)  # (0.5 + 1.0) / 2
        relevancy = store.windows.series(stage="generation", signal="AnswerRelevancy")[0]
        assert relevancy["value"] is None and "embeddings" in relevancy["note"]
        second = judge_traffic(store, client, share=1.0, budget=4)
        assert (second.judged, second.skipped_budget) == (1, 0)  # the third, once only
        assert judge_traffic(store, client, share=1.0, budget=4).judged == 0
        refresh_windows(store)
        faith = store.windows.series(stage="generation", signal="Faithfulness")[0]
        assert faith["n"] == 2  # the refusal has no claim to check: a reason, not a zero
        reasons = store.db.execute(
            "SELECT reason FROM judgements WHERE value IS NULL AND measure = 'Faithfulness'"
        )
        assert reasons == [("the answer states no claim to check (empty, or a refusal)",)]
        assert len(server.requests) == 5  # 2 + 2 calls, and the refusal's claims call only


def test_the_judged_share_is_a_stable_hash_of_the_trace_id():
    ids = [f"{i:032x}" for i in range(20_000)]
    chosen = [i for i in ids if sampled(i, 0.1)]
    assert 0.09 < len(chosen) / len(ids) < 0.11
    assert chosen == [i for i in ids if sampled(i, 0.1)]
    assert set(chosen) <= {i for i in ids if sampled(i, 0.2)}  # a larger share adds traces


def test_bad_shares_and_budgets_are_refused(tmp_path: Path):
    with MonitorStore(tmp_path / "m.db") as store:
        with pytest.raises(ValueError, match="share"):
            judge_traffic(store, None, share=0, budget=10)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="budget"):
            judge_traffic(store, None, share=0.5, budget=1)  # type: ignore[arg-type]


def _watched_store(path: Path) -> MonitorStore:
    pipeline = _pipeline()
    pipeline.prepare([], None)
    store = MonitorStore(path, window_seconds=3600)
    watched = watch(pipeline, store)
    for q in QUESTIONS:
        watched.answer(q)
    return store


@pytest.mark.slow  # four attempts time out, with back-off between them
def test_monitor_judge_takes_the_llm_options_and_counts_the_calls_it_made(tmp_path: Path, capsys):
    """Issue 29: `cofe monitor judge` had no --timeout, --json-mode or --limit, and printed
    "calls": 0 after minutes of requests that timed out."""
    import json

    from cofe.cli import main
    from cofe.testing import Fault

    _watched_store(tmp_path / "m.db").close()
    with ScriptedOpenAI(scripted) as server:
        server.inject(*[Fault(delay=2.0)] * 4)  # the first trace's claims call, every attempt
        code = main(
            [
                "monitor",
                "judge",
                "--store",
                str(tmp_path / "m.db"),
                "--share",
                "1",
                "--base-url",
                server.base_url,
                "--model",
                "judge-model",
                "--timeout",
                "0.5",
                "--json-mode",
                "json_object",
                "--limit",
                "1",
                "--no-embeddings",
            ]
        )
        sent = list(server.requests)
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["judged"], out["unscored"], out["skipped_limit"]) == (0, 1, 2)
    assert out["calls"] == 4 and out["usage"]["failed_requests"] == 4  # sent, never answered
    assert len(sent) == 4 and all(r["response_format"]["type"] == "json_object" for r in sent)


def test_monitor_judge_exits_1_in_one_line_when_the_endpoint_is_down(tmp_path: Path, capsys):
    from cofe.cli import main
    from cofe.testing import Fault

    _watched_store(tmp_path / "m.db").close()
    with ScriptedOpenAI(scripted) as server:
        server.standing = Fault(status=502)  # three traces, each failing: fewer than five
        code = main(
            [
                *("monitor", "judge", "--store", str(tmp_path / "m.db"), "--share", "1"),
                *("--base-url", server.base_url, "--model", "judge-model", "--no-embeddings"),
            ]
        )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and err[0].startswith("cofe: error: endpoint ")
    assert "502" in err[0] and "run `cofe monitor judge` again" in err[0]
    store = MonitorStore(tmp_path / "m.db", window_seconds=3600)
    try:  # nothing stored: the next pass judges all three
        assert store.db.execute("SELECT DISTINCT trace_id FROM judgements") == []
    finally:
        store.close()


def test_a_dead_endpoint_stops_monitor_judge_and_the_next_pass_resumes(tmp_path: Path):
    from cofe.llm import EndpointDown

    with _watched_store(tmp_path / "m.db") as store:
        state: dict = {}

        def dies(messages, request) -> str:
            if len(state["server"].requests) > 2:  # two calls answered, then a crash
                state["server"].kill()
            return scripted(messages, request)

        with ScriptedOpenAI(dies) as server:
            state["server"] = server
            client = LLMClient(
                Endpoint(server.base_url, "judge-model", "x", timeout=5, max_retries=1)
            )
            client.down_after = 2  # the two traces left both fail to reach it
            with pytest.raises(EndpointDown, match="cofe monitor judge"):
                judge_traffic(store, client, share=1.0, budget=100, concurrency=1)
        stored = store.db.execute("SELECT DISTINCT trace_id FROM judgements")
        assert len(stored) == 1  # the traces it could not judge are left for the next pass
        with ScriptedOpenAI(scripted) as server:
            client = LLMClient(Endpoint(server.base_url, "judge-model", "x", timeout=5))
            report = judge_traffic(store, client, share=1.0, budget=100, concurrency=1)
        assert report.judged == 2 and report.calls == len(server.requests)
        assert len(store.db.execute("SELECT DISTINCT trace_id FROM judgements")) == 3
