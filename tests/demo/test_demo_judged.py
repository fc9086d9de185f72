"""The demo with a real model's answers (here the loopback server) shows the judged measures."""

from __future__ import annotations

import json

import pytest

from benchmarks.judge_throughput import stand_in
from cofe.demo import DemoConfig, run_demo
from cofe.llm import Endpoint
from cofe.testing import ScriptedOpenAI


def model(messages, request) -> str:
    system = messages[0]["content"]
    if "claims" in system or "断言" in system:  # the judge's two prompts
        return stand_in(messages, request)
    return "The Normans were in Normandy."  # the generator's answer


@pytest.mark.slow
def test_the_demo_judges_a_real_models_answers(tmp_path, capsys, recwarn):
    config = DemoConfig(
        chunk_sizes=(128, 512),
        squad_per_article=2,
        cmrc_articles=3,
        squad_articles=3,
        generator="openai",
    )
    with ScriptedOpenAI(model) as server:
        endpoint = Endpoint(server.base_url, "scripted", "none", timeout=10, max_retries=1)
        outcomes = run_demo(tmp_path / "demo", config, progress=False, endpoint=endpoint)
    printed = capsys.readouterr().out
    # the word-overlap stand-in does not clear its controls beyond their error on 10 pairs
    # (judges/_controls.py): the demo names the measures it leaves unscored, or shows them
    failed = "failed its known-answer controls on Faithfulness" in printed
    assert failed or "answer/Faithfulness" in printed
    assert "answer/AnswerCorrectness" in printed or (
        "ClaimPrecision, ClaimRecall, AnswerCorrectness" in printed
    )
    for name, (_report, result) in outcomes.items():
        assert (tmp_path / "demo" / name / "judgements.jsonl").exists()
        assert (tmp_path / "demo" / name / "judge_controls.jsonl").exists()
        # a failed measure has no number anywhere; one that passed has one
        assert (result.mean("answer", "Faithfulness") is None) == failed
    assert "EXTRACTIVE" not in printed
    # the judged runs are scored with the judge's labels handed in, never without them
    assert not [w for w in recwarn if "no reader of the judge's labels" in str(w.message)]


def test_without_an_endpoint_the_demo_says_how_to_get_judged_measures(tmp_path, capsys):
    config = DemoConfig(chunk_sizes=(256,), squad_per_article=1, cmrc_articles=1, squad_articles=1)
    run_demo(tmp_path / "demo", config, progress=False)
    printed = capsys.readouterr().out
    assert "cofe judge" in printed and "Faithfulness" in printed
    assert json.loads((tmp_path / "demo" / "chunk256" / "manifest.json").read_text())
