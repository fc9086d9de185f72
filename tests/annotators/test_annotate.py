"""Annotation end to end against a real loopback OpenAI-protocol server with scripted replies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from annotators import AnnotateConfig, annotate, dry_run, load_documents, progress_path
from cofe import read_evalset
from cofe.llm import Endpoint, LLMClient
from cofe.matching import normalize_strict
from cofe.testing import Fault, ScriptedOpenAI
from tests.annotators._scripted import draft
from tests.conftest import REPO

SMALL = AnnotateConfig(max_segment_tokens=40, concurrency=2)
KEY = "sk-test-secret-1234"


def _client(server: ScriptedOpenAI, **kw) -> LLMClient:
    endpoint = Endpoint.from_env(
        base_url=server.base_url, model="scripted-annotator", api_key=KEY, **kw
    )
    return LLMClient(endpoint)


def _segments_text(docs: Path) -> str:
    return " ".join(p.read_text(encoding="utf-8") for p in docs.iterdir())


def test_happy_path_accepts_checked_samples_with_provenance(tmp_path, en_docs) -> None:
    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(draft) as server:
        summary = annotate(en_docs, out, _client(server), SMALL, progress=False)
        calls = len(server.requests)
    evalset = read_evalset(out)
    assert evalset.problems == [] and len(evalset.samples) == summary.accepted > 0
    assert summary.segments == calls and summary.failed_segments == 0
    assert summary.to_dict()["calls_per_accepted"] <= 1.5
    text = normalize_strict(_segments_text(en_docs))
    for sample in evalset.samples:
        for point in sample.fine_keywords:
            assert all(normalize_strict(k) in text for k in point)
        note = sample.meta["annotation"]
        assert note["model"] == "scripted-annotator" and note["prompt_version"].startswith(
            "annotate-"
        )
        assert sample.source.doc in {"Paris.txt", "Berlin.md"} and note["span"][1] > note["span"][0]
        assert sample.query_type.value in ("factual", "analytical", "comparative", "tutorial")
    assert set(summary.type_mix) >= {"factual", "analytical"}
    assert summary.checks["verbatim"]["acceptance"] == 1.0
    for path in (out, progress_path(out)):
        assert KEY not in path.read_text()


def test_dry_run_estimates_without_calling(en_docs) -> None:
    documents, _ = load_documents(en_docs, None)
    estimate = dry_run(documents, SMALL)
    assert estimate["segments"] >= 2
    assert estimate["calls"]["at_least"] == estimate["segments"]
    assert estimate["prompt_tokens"] > 300 * estimate["segments"]  # the few-shot prompt is real


def test_hallucinated_keywords_are_rejected_and_near_misses_repaired(tmp_path, en_docs) -> None:
    def reply(messages, request):
        passage = messages[-1]["content"]
        if "capital of France" in passage:
            return draft(messages, fragment="CAPITAL of Frnace")  # a near miss: repairable
        if "capital of Germany" in passage:
            return draft(messages, fragment="the moon landing")  # not in the text at all
        return draft(messages)

    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(reply) as server:
        summary = annotate(
            en_docs,
            out,
            _client(server),
            AnnotateConfig(max_segment_tokens=40, concurrency=1),
            progress=False,
        )
    progress = [json.loads(line) for line in progress_path(out).read_text().splitlines()]
    reasons = [r["reason"] for p in progress for r in p["rejected"]]
    assert any("'the moon landing' is not in the segment" in r for r in reasons)
    assert summary.rejected_by_check["verbatim"] >= 1
    accepted_keywords = [k for s in read_evalset(out).samples for p in s.fine_keywords for k in p]
    assert "the moon landing" not in accepted_keywords
    repaired = [s for s in read_evalset(out).samples if s.meta["annotation"]["repairs"]]
    assert repaired and repaired[0].fine_keywords[0][0] == "capital of France"
    assert summary.checks["verbatim"]["repaired"] >= 1


def test_a_chinese_document_uses_the_chinese_prompt(tmp_path, zh_docs) -> None:
    out = tmp_path / "zh.jsonl"
    with ScriptedOpenAI(draft) as server:
        summary = annotate(
            zh_docs, out, _client(server), AnnotateConfig(max_segment_tokens=100), progress=False
        )
        system = server.requests[0]["messages"][0]["content"]
    assert "评测问题" in system
    samples = read_evalset(out).samples
    assert summary.accepted == len(samples) > 0
    assert all(s.meta["annotation"]["language"] == "zh" for s in samples)
    assert all(s.coarse_keywords == ["长江"] for s in samples)


def test_faults_429_500_slow_are_retried_and_invalid_json_is_repaired(tmp_path, en_docs) -> None:
    out = tmp_path / "evalset.jsonl"
    config = AnnotateConfig(max_segment_tokens=40, concurrency=1)
    with ScriptedOpenAI(draft) as server:
        server.inject(
            Fault(status=429, headers={"Retry-After": "1"}),
            Fault(status=500),
            Fault(delay=2.0),  # slower than the 1 s timeout: the client gives up and retries
            Fault(
                body='{"id": "x", "choices": [{"index": 0, "finish_reason": "stop", "message": '
                '{"role": "assistant", "content": "Sure! Here are the queries: {broken"}}]}'
            ),
        )
        started = time.monotonic()
        summary = annotate(
            en_docs, out, _client(server, timeout=1.0, max_retries=4), config, progress=False
        )
        elapsed = time.monotonic() - started
    assert elapsed >= 1.0  # Retry-After was honoured
    assert summary.failed_segments == 0 and summary.accepted > 0
    assert summary.usage["repairs"] == 1  # the broken reply got one repair call
    repair_prompt = server.requests[-summary.segments]["messages"][-1]["content"]
    assert "not valid" in repair_prompt or summary.usage["repairs"] == 1


def test_invalid_twice_fails_the_segment_with_a_reason_and_a_rerun_retries_it(tmp_path, en_docs):
    out = tmp_path / "evalset.jsonl"
    config = AnnotateConfig(max_segment_tokens=40, concurrency=1)
    with ScriptedOpenAI(draft) as server:
        server.inject(
            Fault(body=_reply_body("not json at all")), Fault(body=_reply_body('{"queries": 5}'))
        )
        first = annotate(en_docs, out, _client(server), config, progress=False)
        assert first.failed_segments == 1 and "after one repair" in first.failures[0]
        assert first.accepted > 0  # the other segments went on
        second = annotate(en_docs, out, _client(server), config, progress=False)
    assert second.failed_segments == 0 and second.resumed_segments == first.segments - 1
    assert second.accepted > first.accepted
    ids = [s.id for s in read_evalset(out).samples]
    assert len(ids) == len(set(ids))


def _reply_body(content: str) -> str:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
        }
    )


def test_near_duplicate_queries_are_dropped(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    from tests.annotators.conftest import PARIS

    (docs / "Paris.txt").write_text(PARIS, encoding="utf-8")
    (docs / "Paris copy.txt").write_text(PARIS, encoding="utf-8")
    (docs / "Paris copy.txt").rename(docs / "Paris2.txt")

    def reply(messages, request):
        return draft(messages).replace("Paris2", "Paris")

    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(reply) as server:
        summary = annotate(
            docs,
            out,
            _client(server),
            AnnotateConfig(max_segment_tokens=400, concurrency=1),
            progress=False,
        )
    assert summary.rejected_by_check["duplicate"] == summary.accepted > 0


@pytest.mark.slow
def test_kill_mid_annotation_then_rerun_finishes_without_duplicates(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    from tests.annotators.conftest import BERLIN, PARIS

    for i in range(6):
        (docs / f"Paris{i}.txt").write_text(PARIS.replace("Paris", f"Paris{i}"), encoding="utf-8")
        (docs / f"Berlin{i}.txt").write_text(
            BERLIN.replace("Berlin", f"Berlin{i}"), encoding="utf-8"
        )
    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(draft, latency=0.15) as server:
        command = [
            sys.executable,
            "-m",
            "cofe",
            "annotate",
            str(docs),
            "-o",
            str(out),
            "--base-url",
            server.base_url,
            "--model",
            "m",
            "--concurrency",
            "2",
            "--segment-tokens",
            "40",
            "--cache",
            "none",
        ]
        env = {**os.environ, "OPENAI_API_KEY": KEY}
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        state = progress_path(out)
        deadline = time.monotonic() + 60
        while (
            not state.exists() or len(state.read_text().splitlines()) < 5
        ) and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        done_before = len(state.read_text().splitlines())
        calls_before = len(server.requests)
        finished = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120
        )
        calls_after = len(server.requests) - calls_before
    assert finished.returncode == 0, finished.stderr
    segments = int(finished.stdout.split("segments ", 1)[1].split()[0])
    assert 5 <= done_before < segments
    # only unfinished segments were asked again (at most the two in flight were lost)
    assert calls_after <= segments - done_before + 2
    samples = read_evalset(out).samples
    assert len({s.id for s in samples}) == len(samples)
    done_ids = {json.loads(x)["segment_id"] for x in state.read_text().splitlines()}
    assert {s.meta["annotation"]["segment"] for s in samples} <= done_ids
    assert len(done_ids) == segments


def _annotate_cli(server: ScriptedOpenAI, docs: Path, out: Path, *extra: str) -> list[str]:
    return [
        "annotate",
        str(docs),
        "-o",
        str(out),
        "--base-url",
        server.base_url,
        "--model",
        "scripted-annotator",
        "--no-probe",
        "--cache",
        "none",
        "--segment-tokens",
        "20",
        "--concurrency",
        "1",
        *extra,
    ]


def test_an_annotation_that_accepts_nothing_says_why_and_counts_its_calls(
    tmp_path, en_docs, capsys
) -> None:
    """Issue 29: exit 1 with no reason, and "None calls and None tokens per accepted sample"."""
    from cofe.cli import main

    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(lambda m, r: "I cannot write JSON, sorry.") as server:
        code = main(_annotate_cli(server, en_docs, out))
        sent = len(server.requests)
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "cofe: error: no sample accepted: the call failed for every segment"
    )
    assert "invalid reply after one repair" in lines[0]
    assert "None" not in captured.out
    assert (
        f"calls {sent} answered" in captured.out
        and "no sample accepted in this run" in captured.out
    )


def test_limit_annotates_n_segments_a_run_and_the_next_run_the_rest(tmp_path, en_docs, capsys):
    from cofe.cli import main

    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(draft) as server:
        assert main(_annotate_cli(server, en_docs, out, "--limit", "3")) == 0
        assert len(server.requests) == 3
        assert "5 segment(s) left by --limit" in capsys.readouterr().out
        assert main(_annotate_cli(server, en_docs, out, "--limit", "100")) == 0
        assert len(server.requests) == 8  # the five left, none again
    summary = capsys.readouterr().out
    assert "segments 8 (3 already done before this run, 0 failed)" in summary
    assert "left by --limit" not in summary
    assert len({s.meta["annotation"]["segment"] for s in read_evalset(out).samples}) == 8


def test_a_dead_endpoint_stops_annotate_and_the_next_run_resumes(tmp_path, en_docs, capsys):
    from cofe.cli import main

    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(draft) as server:
        server.inject(Fault(), Fault())  # two segments are annotated
        server.standing = Fault(status=503)  # then the endpoint is gone
        code = main(_annotate_cli(server, en_docs, out, "--retries", "0"))
        assert len(server.requests) == 2 + 5  # stopped at the fifth failure, not the sixth
        url = server.base_url
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(f"cofe: error: endpoint {url} is not answering: 5 calls in a row")
    assert "503" in lines[0] and "2 segment(s) annotated" in lines[0]
    kept = {s.meta["annotation"]["segment"] for s in read_evalset(out).samples}
    assert len(kept) == 2
    with ScriptedOpenAI(draft) as server:
        assert main(_annotate_cli(server, en_docs, out)) == 0
        assert len(server.requests) == 6  # the two done are not asked again
    assert "segments 8 (2 already done before this run, 0 failed)" in capsys.readouterr().out


def test_annotate_ending_on_an_unreachable_endpoint_exits_1(tmp_path, en_docs, capsys):
    from cofe.cli import main

    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(draft) as server:
        server.inject(*[Fault()] * 6)  # six of the eight segments are annotated
        server.standing = Fault(status=503)  # the last two fail: fewer than would stop it
        code = main(_annotate_cli(server, en_docs, out, "--retries", "0", "--concurrency", "1"))
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "2 calls in a row" in lines[0]
    assert "6 segment(s) annotated" in lines[0] and "run `cofe annotate` again" in lines[0]
