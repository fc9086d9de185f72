"""The monitor's judged signals pass through known-answer controls made from the traffic itself
(cofe/judges/_controls.py: ``traffic_controls``): a judge that calls everything supported
shows no Faithfulness number, a judge that reads the passages does (loopback server, a
yes-sayer and the lexical stand-in)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.judge_validity import lexical_judge
from cofe import Chunk
from cofe.adapters import PythonPipeline
from cofe.evalset import EvalSample
from cofe.judges import JudgeInputs, traffic_controls
from cofe.llm import Endpoint, LLMClient
from cofe.monitor import MonitorStore, judge_traffic, refresh_windows, watch
from cofe.testing import ScriptedOpenAI
from tests.judges.test_controls import rows, yes_sayer


def _store_with_traffic(path: Path, n: int = 12) -> MonitorStore:
    """``n`` answered traces, each on its own SQuAD paragraph, answered rightly."""
    picked = rows(n)
    by_question = {r["question"]: r for r in picked}
    pipeline = PythonPipeline(
        chunks=[Chunk(chunk_id=r["id"], doc_id=r["id"], text=r["context"]) for r in picked],
        retrieve=lambda q: [by_question[q]["id"]],
        generate=lambda q, context: by_question[q]["answer"],
        top_k=1,
    )
    pipeline.prepare([], None)
    store = MonitorStore(path, window_seconds=3600)
    watched = watch(pipeline, store)
    for r in picked:
        watched.answer(r["question"])
    return store


def _pass(store: MonitorStore, reply, **kw) -> tuple:
    with ScriptedOpenAI(reply) as server:
        client = LLMClient(Endpoint(server.base_url, "m", "secret", timeout=10))
        kw.setdefault("budget", 500)
        report = judge_traffic(store, client, share=1.0, concurrency=1, **kw)
    refresh_windows(store)
    signals = {r["signal"]: r for r in store.windows.series() if r["stage"] == "generation"}
    return report, signals


def test_a_yes_sayer_fails_its_controls_and_the_monitor_shows_no_faithfulness(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db") as store:
        report, signals = _pass(store, yes_sayer)
        assert report.control_calls > 0 and report.judged == 12
        assert report.controls["Faithfulness"].endswith("unscored"), report.controls
        faithfulness = signals["Faithfulness"]
        assert faithfulness["value"] is None
        assert "failed its controls" in faithfulness["note"]
        # the gate is kept: a second pass judges no control again
        again, _ = _pass(store, yes_sayer)
        assert again.control_calls == 0 and again.controls["Faithfulness"].endswith("unscored")


def test_a_judge_that_reads_the_passages_passes_and_its_numbers_show(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db") as store:
        report, signals = _pass(store, lexical_judge)
        assert report.controls["Faithfulness"].endswith(": scored"), report.controls
        assert signals["Faithfulness"]["value"] is not None
        assert signals["Faithfulness"]["note"] is None


def test_a_gate_set_later_recomputes_the_windows_already_judged(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db") as store:
        _, before = _pass(store, yes_sayer, controls=0)  # judged, never gated
        assert before["Faithfulness"]["value"] is not None
        assert "not gated" in before["Faithfulness"]["note"]
        store.judgements.set_gate("m", _version(), [("Faithfulness", 0.5, 10, "failed: noise")])
        refresh_windows(store)
        after = {r["signal"]: r for r in store.windows.series() if r["stage"] == "generation"}
        assert after["Faithfulness"]["value"] is None
        assert after["Faithfulness"]["note"].startswith("no judged trace had a value (failed")


def test_too_little_traffic_for_controls_costs_no_call_and_says_not_gated(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db", n=5) as store:
        report, signals = _pass(store, lexical_judge)
        assert report.control_calls == 0
        assert report.controls == {"controls": report.controls["controls"]}
        assert "not gated" in report.controls["controls"]
        assert "not gated" in signals["Faithfulness"]["note"]


def test_the_step_mode_is_a_judge_of_its_own_within_the_budget(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db") as store:
        dense, _ = _pass(store, lexical_judge, controls=0, limit=4)
        steps, signals = _pass(store, lexical_judge, steps=True)
        # a claim a call after the claims call: more calls a trace than the dense mode's two
        assert dense.calls == 2 * dense.judged == 8
        assert steps.judged == 8 and steps.calls - steps.control_calls > 2 * steps.judged
        # its own controls and gate, under its own name; the dense judge stays ungated
        assert steps.control_calls > 0 and steps.controls["Faithfulness"].endswith(": scored")
        judges = {row[0] for row in store.db.execute("SELECT DISTINCT model FROM judgements")}
        assert judges == {"m", "m+steps"}
        assert (
            store.judgements.gate("m+steps", _version())
            and store.judgements.gate("m", _version()) is None
        )
        assert "not gated: judge m has no controls" in signals["Faithfulness"]["note"]
    with _store_with_traffic(tmp_path / "small.db") as store:
        # the budget is met on an estimate, a claim per sentence: 2 sentences cost 3 calls
        small, _ = _pass(store, lexical_judge, controls=0, steps=True, budget=10)
        assert 0 < small.judged < 12 and small.skipped_budget == 12 - small.judged
        assert small.calls <= 10 + small.judged  # the estimate may fall short by a claim or so


def test_the_oldest_traces_are_judged_first(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db") as store:
        # trace ids are random: an order by id picks other traces (but 1 time in 220)
        oldest = store.judgements.unjudged_traffic(0)[:3]
        _pass(store, lexical_judge, controls=0, limit=3)
        judged = {row[0] for row in store.db.execute("SELECT DISTINCT trace_id FROM judgements")}
        assert judged == set(oldest)


def test_controls_that_could_not_reach_the_endpoint_store_no_gate(tmp_path: Path):
    from cofe.testing import Fault

    with _store_with_traffic(tmp_path / "m.db") as store:
        with ScriptedOpenAI(lexical_judge) as server:
            server.inject(Fault(status=502), Fault(status=502))  # a short outage, then answers
            client = LLMClient(Endpoint(server.base_url, "m", "secret", timeout=10, max_retries=0))
            report = judge_traffic(store, client, share=1.0, budget=500, concurrency=1)
        assert report.judged == 12 and report.control_calls > 0
        assert report.controls == {
            "controls": "not gated yet: 2 control(s) could not reach the endpoint; the next "
            "pass judges the controls again"
        }
        assert store.judgements.gate("m", _version()) is None  # the next pass asks again


def test_traffic_controls_copy_the_context_and_borrow_another_traces_answer():
    picked = rows(10)
    items = [
        JudgeInputs(
            EvalSample(id=r["id"], query=r["question"]),
            r["answer"],
            (r["context"],),
            None,
            "traffic",
            None,
        )
        for r in picked
    ]
    controls = traffic_controls(items, 10)
    gold = [c for c in controls if c.control == "gold"]
    foreign = [c for c in controls if c.control == "foreign"]
    assert len(gold) == len(foreign) >= 8
    for g in gold:
        assert g.answer != g.sample.query and all(
            sentence in g.context for sentence in g.answer.split(". ")[:1]
        )
    for f in foreign:
        own = next(i for i in items if i.sample.id == f.sample.id)
        assert f.answer != own.answer and f.answer in {i.answer for i in items}
    assert traffic_controls(items[:7], 10) == []
    assert traffic_controls(items, 0) == []


def test_monitor_judge_refuses_too_few_controls(tmp_path: Path, capsys):
    from cofe.cli import main

    code = main(
        [
            "monitor",
            "judge",
            "--store",
            str(tmp_path / "m.db"),
            "--controls",
            "3",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ]
    )
    assert code != 0
    assert "--controls must be 0 (none) or at least 8" in capsys.readouterr().err


def _version() -> str:
    from cofe.judges import PROMPT_VERSION

    return PROMPT_VERSION


def test_the_report_is_json(tmp_path: Path):
    with _store_with_traffic(tmp_path / "m.db") as store:
        report, _ = _pass(store, lexical_judge)
    assert json.loads(json.dumps(report.__dict__))["controls"]
