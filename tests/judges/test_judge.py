"""`cofe judge` against the loopback OpenAI-protocol server, every expected score worked out by hand.

The scripted judge answers the claims call and the checks call of each sample
from the tables below; the tests then read the measures `cofe score` derives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cofe import (
    Chunk,
    EvalSample,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunWriter,
    SampleRecord,
    score_run,
)
from cofe.evalset import write_evalset
from cofe.judges import JUDGEMENTS, judge_run, labels_for_scoring, read_judgements
from cofe.llm import Endpoint, EndpointDown, LLMClient
from cofe.testing import Fault, ScriptedOpenAI

SOURCE = (
    "Super Bowl 50 was played at Levi's Stadium in Santa Clara. "
    "The Denver Broncos beat the Carolina Panthers 24-10. 丹佛野马队赢得了比赛。"
)
CHUNKS = {
    "c1": "The Denver Broncos beat the Carolina Panthers 24-10.",
    "c2": "Super Bowl 50 was played at Levi's Stadium in Santa Clara.",
    "c3": "丹佛野马队赢得了比赛。",
}
# question -> (answer, context chunk, reference, claims reply, checks reply)
CASES = {
    "Who won Super Bowl 50?": (
        "The Denver Broncos won. It was played in Miami.",
        "c1",
        "Denver Broncos",
        {
            "answer_claims": [
                "The Denver Broncos won Super Bowl 50.",
                "Super Bowl 50 was played in Miami.",
            ],
            "reference_claims": ["The Denver Broncos won Super Bowl 50."],
            "questions": ["Who won Super Bowl 50?", "Where was Super Bowl 50 played?"],
        },
        {
            "answer_claims": [
                {"claim": 0, "context": True, "source": True, "reference": True},
                {"claim": 1, "context": False, "source": False, "reference": False},
            ],
            "reference_claims": [{"claim": 0, "answer": True, "context": True}],
            "points": [{"point": 0, "answer": "support", "context": "support"}],
            "useful_chunks": [1],
            "correctness": 3,
        },
    ),
    "第50届超级碗谁赢了？": (
        "丹佛野马队赢了。",
        "c3",
        "丹佛野马队",
        {
            "answer_claims": ["丹佛野马队赢得了比赛。"],
            "reference_claims": ["丹佛野马队赢得了比赛。"],
        },
        {
            "answer_claims": [{"claim": 0, "context": True, "source": True, "reference": True}],
            "reference_claims": [{"claim": 0, "answer": True, "context": True}],
            "points": [{"point": 0, "answer": "support", "context": "support"}],
        },
    ),
    "Where was Super Bowl 50 played?": (
        "I don't know.",
        "c2",
        "Levi's Stadium",
        {
            "answer_claims": [],
            "reference_claims": ["Super Bowl 50 was played at Levi's Stadium."],
            "noncommittal": True,
        },
        {
            "answer_claims": [],
            "reference_claims": [{"claim": 0, "answer": False, "context": True}],
            "points": [{"point": 0, "answer": "not_support", "context": "support"}],
            "useful_chunks": [],
        },
    ),
    "Who lost Super Bowl 50?": (
        "The Carolina Panthers lost.",
        "c1",
        "Carolina Panthers",
        "not json at all",  # twice: the repair fails too
        None,
    ),
}
FINE = {
    "Who won Super Bowl 50?": "Denver Broncos",
    "第50届超级碗谁赢了？": "丹佛野马队",
    "Where was Super Bowl 50 played?": "Levi's Stadium",
    "Who lost Super Bowl 50?": "Carolina Panthers",
}


def scripted(messages, request) -> str:
    """Answers each sample's two calls; a sample is known by its answer, in both prompts."""
    system = messages[0]["content"]
    # the whole conversation: a repair turn repeats the original request before asking again
    user = "\n".join(m["content"] for m in messages[1:])
    for _question, (answer, _c, _r, claims, checks) in CASES.items():
        if f"Answer: {answer}" in user or f"回答: {answer}" in user:
            if "fact checking" in system or "事实核查" in system:
                return claims if isinstance(claims, str) else json.dumps(claims, ensure_ascii=False)
            return json.dumps(checks, ensure_ascii=False)
    raise AssertionError(f"unexpected prompt: {user[:200]}")


def make_run(folder: Path) -> Path:
    samples = [
        EvalSample(
            id=f"q{i}",
            query=q,
            coarse_keywords=["Super Bowl 50"] if "Super" in q else [],
            fine_keywords=[[FINE[q]]],
            reference_answer=ref,
            source={"doc": "sb.txt"},
        )
        for i, (q, (_a, _c, ref, _cl, _ch)) in enumerate(CASES.items())
    ]
    evalset = folder.parent / f"{folder.name}.evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(run_id="judged", top_k=1, stages=["parse", "chunking", "retrieval", "generation"]),
        evalset,
    )
    writer.add_documents([ParsedDocument(doc_id="sb", source="sb.txt", text=SOURCE)])
    writer.add_chunks([Chunk(chunk_id=c, doc_id="sb", text=t) for c, t in CHUNKS.items()])
    writer.add_samples(
        SampleRecord(
            sample_id=f"q{i}", pool=[RankedChunk(chunk_id=chunk, score=1.0)], answer=answer
        )
        for i, (answer, chunk, *_rest) in enumerate(CASES.values())
    )
    return folder


def client(server, **kw) -> LLMClient:
    endpoint = Endpoint(
        server.base_url, "judge-model", "secret", timeout=5, max_retries=kw.pop("max_retries", 2)
    )
    return LLMClient(endpoint, **kw)


def test_judged_measures_match_the_hand_worked_values(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        report = judge_run(run, client(server), concurrency=2)
    assert (report.judged, report.unscored) == (3, 1)
    result = score_run(run, labels=labels_for_scoring)
    got = result.scores[result.scores.step == "answer"].pivot(
        index="sample_id", columns="measure", values="value"
    )
    # q0: claims 0 supported everywhere, claim 1 nowhere; the reference's one claim is stated
    assert got.loc["q0", "Faithfulness"] == 0.5
    assert got.loc["q0", "SourceFaithfulness"] == 0.5
    assert got.loc["q0", "ClaimPrecision"] == 0.5
    assert got.loc["q0", "ClaimRecall"] == 1.0
    assert got.loc["q0", "AnswerCorrectness"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert got.loc["q0", "CorrectnessScore"] == 3.0  # as the judge said
    # RAGChecker's rates: claim 1 is neither in the context nor right -> invented (1 of 2)
    assert got.loc["q0", "Hallucination"] == 0.5 and got.loc["q0", "SelfKnowledge"] == 0.0
    context = result.scores[result.scores.step == "context"].pivot(
        index="sample_id", columns="measure", values="value"
    )
    # the reference's claim is in the context, and its one chunk is useful
    assert context.loc["q0", ["ContextRecall", "ContextPrecision@1"]].tolist() == [1.0, 1.0]
    # q2: the context holds the reference's claim, but the judge found its chunk not useful
    assert context.loc["q2", ["ContextRecall", "ContextPrecision@1"]].tolist() == [1.0, 0.0]
    # the keyword verdict at the context agrees with the judge's on q0, q1 and q2
    cross = result.keyword_vs_judge()
    assert cross["samples"] == 3 and cross["agree"] == 1.0
    # q1 (Chinese): one claim, supported, and the reference's claim stated
    assert got.loc["q1", ["Faithfulness", "SourceFaithfulness", "AnswerCorrectness"]].tolist() == [
        1.0,
        1.0,
        1.0,
    ]
    # q2 refuses: no claim to check; the reference's claim is not stated
    assert got.loc["q2", "ClaimRecall"] == 0.0
    skipped = {(r.sample_id, r.measure): r.reason for r in result.skipped.itertuples()}
    assert "no claim" in skipped[("q2", "Faithfulness")]
    # q3: the judge's reply was invalid twice: every judged measure says why, none is NaN
    assert "invalid reply after one repair" in skipped[("q3", "Faithfulness")]
    assert result.scores.value.notna().all()
    table = result.summary().set_index(["step", "measure"])
    assert ((table.scored + table.unscored) == 4).all()
    verdicts = result.verdicts.set_index("sample_id")
    assert verdicts.loc["q0", "verdict"] == "unsupported_claims"
    assert "Super Bowl 50 was played in Miami." in verdicts.loc["q0", "explanation"]
    assert verdicts.loc["q1", "verdict"] == "pass"
    # each sample's one information point, as the judge labelled it (q3: no labels)
    points = {
        sid: [(p.answer, p.context) for p in j.points] for sid, j in read_judgements(run).items()
    }
    assert points == {
        "q0": [("support", "support")],
        "q1": [("support", "support")],
        "q2": [("not_support", "support")],
        "q3": [],
    }


def test_limit_judges_the_first_samples_and_the_next_pass_the_rest(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        report = judge_run(run, client(server), concurrency=1, limit=2)
        assert report.judged + report.unscored == 2 and report.left == 2
        assert set(read_judgements(run)) == {"q0", "q1"}  # eval-set order
        report = judge_run(run, client(server), concurrency=1, limit=5)
        assert report.skipped == 2 and report.judged + report.unscored == 2
        assert report.left == 0
        with pytest.raises(ValueError, match="limit must be at least 1"):
            judge_run(run, client(server), limit=0)


def test_a_second_pass_makes_no_call_and_an_edited_answer_is_judged_again(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server))
        first = len(server.requests)
        report = judge_run(run, client(server))
        assert len(server.requests) - first == 2  # only q3 (unscored) is tried again, twice
        assert report.skipped == 3
    # the answer changed since it was judged: its labels are not used
    lines = (run / "samples.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["answer"] = "Somebody else."
    (run / "samples.jsonl").write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    result = score_run(run, labels=labels_for_scoring)
    reasons = {(r.sample_id, r.measure): r.reason for r in result.skipped.itertuples()}
    assert "other inputs" in reasons[("q1", "Faithfulness")]


def test_transport_faults_end_in_a_retry_or_a_recorded_reason(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        server.inject(Fault(status=429, headers={"Retry-After": "0"}), Fault(status=500))
        report = judge_run(run, client(server, max_retries=2), concurrency=1)
        assert report.judged == 3  # both faults retried
        server.inject(*[Fault(status=500)] * 20)
        (run / JUDGEMENTS).unlink()
        # a storm of 500s is the endpoint down (issue 45, item 17): the pass stops with
        # exit 1's error instead of recording every sample as failed
        with pytest.raises(EndpointDown, match="500"):
            judge_run(run, client(server, max_retries=1), concurrency=1)
    judgements = read_judgements(run) if (run / JUDGEMENTS).exists() else {}
    failed = [j for j in judgements.values() if j.status == "unscored"]
    assert all("call failed" in (j.reason or "") for j in failed)


def test_a_slow_judge_times_out_with_a_reason(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        server.inject(*[Fault(delay=2.0)] * 4)
        endpoint = Endpoint(server.base_url, "judge-model", "x", timeout=0.5, max_retries=0)
        started = time.perf_counter()
        judge_run(run, LLMClient(endpoint), concurrency=4)
        assert time.perf_counter() - started < 10
    reasons = [j.reason for j in read_judgements(run).values() if j.status == "unscored"]
    assert any("Timeout" in r for r in reasons), reasons


@pytest.mark.slow
def test_resume_after_sigkill_repeats_no_call_of_a_finished_sample(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted, latency=0.4) as server:
        env = {**os.environ, "OPENAI_API_KEY": "x"}
        cmd = [
            sys.executable,
            "-m",
            "cofe",
            "judge",
            str(run),
            "--base-url",
            server.base_url,
            "--model",
            "judge-model",
            "--concurrency",
            "1",
            "--cache",
            "none",
            "--no-embeddings",
        ]
        child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while time.time() < deadline and len(read_judgements(run)) < 1:
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        finished = {j.sample_id for j in read_judgements(run).values()}
        assert finished and len(finished) < 4
        asked_before = len(server.requests)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        later = server.requests[asked_before:]
    questions = {f"q{i}": q for i, q in enumerate(CASES)}
    asked = [" ".join(m["content"] for m in r["messages"][1:]) for r in later]  # not the system
    for sid in finished - {"q3"}:  # q3 was unscored: it is tried again on purpose
        assert not any(questions[sid] in text for text in asked), sid
    assert len(read_judgements(run)) == 4
    # the resumed pass labelled the points as the first would have
    assert all(
        j.points and j.points[0].answer
        for j in read_judgements(run).values()
        if j.status == "judged"
    )


STUB_VECTORS = {
    "Who won Super Bowl 50?": (1.0, 0.0),
    "Where was Super Bowl 50 played?": (0.6, 0.8),
    "The Denver Broncos won. It was played in Miami.": (0.8, 0.6),
    "Denver Broncos": (1.0, 0.0),
}


class StubEmbedder:
    """Unit vectors chosen so every cosine below is known: the measures' arithmetic, checked."""

    def encode(self, texts):
        import numpy as np

        return np.array([STUB_VECTORS.get(t, (0.0, 1.0)) for t in texts])


def test_answer_relevancy_and_similarity_follow_ragas(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server), embedder=StubEmbedder())
    result = score_run(run, labels=labels_for_scoring)
    got = result.scores[result.scores.step == "answer"].pivot(
        index="sample_id", columns="measure", values="value"
    )
    # q0: cos(question, generated) = 1.0 and 0.6 -> mean 0.8; cos(answer, reference) = 0.8
    assert got.loc["q0", "AnswerRelevancy"] == pytest.approx(0.8)
    assert got.loc["q0", "AnswerSimilarity"] == pytest.approx(0.8)
    # q2 is noncommittal: relevancy 0 whatever its questions
    assert got.loc["q2", "AnswerRelevancy"] == 0.0


class OverUnitEmbedder:
    """Vectors a hair over unit length, as float32 embeddings come: a cosine of 1.0000001."""

    def encode(self, texts):
        import numpy as np

        return np.array([(1.00000005, 0.0) for _ in texts])


def test_answer_similarity_needs_no_call_and_stays_when_the_calls_fail(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server), embedder=OverUnitEmbedder())
    q3 = read_judgements(run)["q3"]  # its claims reply was invalid twice: no label
    assert q3.status == "unscored" and q3.answer_similarity == 1.0  # stored, clamped to [-1, 1]
    result = score_run(run, labels=labels_for_scoring)
    answer = result.scores[result.scores.step == "answer"]
    got = answer.pivot(index="sample_id", columns="measure", values="value")
    assert got.loc["q3", "AnswerSimilarity"] == 1.0  # scored although the calls failed
    assert (answer[answer.measure.isin(["AnswerSimilarity", "AnswerRelevancy"])].value <= 1).all()
    skipped = {(r.sample_id, r.measure): r.reason for r in result.skipped.itertuples()}
    assert ("q3", "AnswerSimilarity") not in skipped
    assert "invalid reply after one repair" in skipped[("q3", "Faithfulness")]
    assert "invalid reply after one repair" in skipped[("q3", "AnswerRelevancy")]  # needs a call


def test_cosine_measures_are_reported_in_the_unit_interval():
    import pickle

    from cofe.judges._judge import _cosines
    from cofe.measures import (
        AnswerRelevancy,
        AnswerSimilarity,
        ClaimLabels,
        Faithfulness,
        Step,
        StepView,
        Unscored,
    )

    class Opposed:
        def encode(self, texts):
            import numpy as np

            return np.array([(1.0000001, 0.0), (-1.0000001, 0.0)][: len(texts)])

    assert _cosines(Opposed(), "a", ["b"]) == [-1.0]
    labels = ClaimLabels((), (), (), (), relevancy=-0.2, similarity=1.0000001)
    view = StepView(Step.ANSWER, (), claims=labels)
    assert AnswerSimilarity().evaluate(view) == 1.0 and AnswerRelevancy().evaluate(view) == 0.0
    failed = StepView(
        Step.ANSWER,
        (),
        claims=ClaimLabels(
            (), (), (), (), relevancy=0.7, similarity=-0.3, failed="checks: call failed"
        ),
    )
    assert pickle.loads(pickle.dumps(failed.claims)) == failed.claims  # travels to workers
    assert Faithfulness().evaluate(failed) == Unscored("checks: call failed")
    assert AnswerRelevancy().evaluate(failed) == 0.7 and AnswerSimilarity().evaluate(failed) == 0.0


def test_without_embeddings_the_two_measures_say_how_to_get_them(tmp_path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server))
    reasons = {
        (r.sample_id, r.measure): r.reason
        for r in score_run(run, labels=labels_for_scoring).skipped.itertuples()
    }
    assert "cofe[dense]" in reasons[("q0", "AnswerRelevancy")]
    assert "cofe[dense]" in reasons[("q0", "AnswerSimilarity")]


def test_the_packaged_minilm_gives_real_cosines():
    from cofe.judges._judge import _cosines
    from cofe.pipeline._embed import shared_embedder

    same, other = _cosines(
        shared_embedder(),
        "Who won Super Bowl 50?",
        ["Who won Super Bowl 50?", "How do plants make sugar?"],
    )
    assert same == pytest.approx(1.0, abs=1e-5) and other < 0.5


def test_the_report_shows_the_judges_claims_with_their_support(tmp_path):
    from cofe.cli import main

    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server))
    assert main(["report", str(run), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    card = page[page.index("<div class='case'") :]
    assert "Super Bowl 50 was played in Miami." in card and "supported by neither" in card
    assert "unsupported_claims" in card


@pytest.mark.slow
def test_a_dask_cluster_judges_as_this_process_does_and_never_gets_the_key(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed", reason='needs the "dask" extra')
    local_run, remote_run = make_run(tmp_path / "local"), make_run(tmp_path / "remote")
    monkeypatch.setenv("OPENAI_API_KEY", "worker-key")  # what the workers read, not "secret"
    with ScriptedOpenAI(scripted) as server:
        local = judge_run(local_run, client(server))
        calls = len(server.requests)
        with (
            distributed.LocalCluster(n_workers=2, processes=True, dashboard_address=None) as dc,
            distributed.Client(dc) as cluster,
        ):
            parent = client(server)
            remote = judge_run(remote_run, parent, cluster=cluster, concurrency=2)
        keys = {h.get("authorization") or h.get("Authorization") for h in server.headers[calls:]}
    assert (remote.judged, remote.unscored) == (local.judged, local.unscored) == (3, 1)
    assert parent.usage.calls == len(server.requests) - calls == calls  # counted here too
    assert keys == {"Bearer worker-key"}  # the parent's key never travelled to a worker

    def labels(run):
        return {
            (
                j.sample_id,
                j.status,
                json.dumps(j.model_dump(exclude={"raw", "calls"}), sort_keys=True, default=str),
            )
            for j in read_judgements(run, repeat=None).values()
        }

    assert labels(remote_run) == labels(local_run)
