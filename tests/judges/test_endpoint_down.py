"""Issue 28.4: an endpoint that dies mid-pass stops ``cofe judge`` with one line and exit 1,
instead of recording every remaining sample as failed; the judged samples are kept and the
next pass resumes after them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe import Chunk, EvalSample, Manifest, RankedChunk, RunWriter, SampleRecord
from cofe.cli import main
from cofe.evalset import write_evalset
from cofe.judges import judge_run, read_judgements
from cofe.llm import Endpoint, EndpointDown, LLMClient
from cofe.testing import Fault, ScriptedOpenAI

SAMPLES = 12


def make_run(folder: Path) -> Path:
    samples = [
        EvalSample(id=f"s{i:02d}", query=f"What is fact {i}?", fine_keywords=[[f"f{i}"]])
        for i in range(SAMPLES)
    ]
    evalset = folder.parent / "evalset.jsonl"
    write_evalset(evalset, samples)
    writer = RunWriter(folder)
    writer.start(Manifest(run_id="r", top_k=1, stages=["retrieval", "generation"]), evalset)
    writer.add_chunks([Chunk(chunk_id="c", doc_id="d", text="Every fact is in here.")])
    writer.add_samples(
        SampleRecord(
            sample_id=s.id, pool=[RankedChunk(chunk_id="c", score=1.0)], answer=f"Fact {i} is f{i}."
        )
        for i, s in enumerate(samples)
    )
    return folder


def judge(messages, request) -> str:
    if "fact checking" in messages[0]["content"]:  # the claims call: the answer, one claim
        answer = messages[-1]["content"].split("Answer:")[-1].strip()
        return json.dumps({"answer_claims": [answer]})
    return json.dumps(
        {
            "answer_claims": [{"claim": 0, "context": True}],
            "points": [{"point": 0, "answer": "support"}],
        }
    )


def dies_after(requests: int):
    """A judge whose server crashes (its connections drop, its port closes) on the request
    after the first ``requests``."""
    state: dict = {}

    def reply(messages, request) -> str:
        server = state["server"]
        if len(server.requests) > requests:
            server.kill()
        return judge(messages, request)

    return state, reply


def test_a_killed_endpoint_stops_the_pass_and_the_next_pass_resumes(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    state, reply = dies_after(6)  # two calls a sample: three samples are judged
    with ScriptedOpenAI(reply) as server:
        state["server"] = server
        client = LLMClient(Endpoint(server.base_url, "judge", "x", timeout=5, max_retries=1))
        with pytest.raises(EndpointDown) as stopped:
            judge_run(run, client, concurrency=1)
    message = str(stopped.value)
    assert "\n" not in message and server.base_url in message and "5 calls in a row" in message
    assert "ConnectionError" in message and "cofe judge" in message
    judged = {sid for sid, j in read_judgements(run).items() if j.status == "judged"}
    assert judged == {"s00", "s01", "s02"}
    assert len(read_judgements(run)) == 3 + 5  # stopped at the fifth sample that failed
    with ScriptedOpenAI(judge) as again:  # the endpoint is back (at another port)
        client = LLMClient(Endpoint(again.base_url, "judge", "x", timeout=5, max_retries=1))
        report = judge_run(run, client, concurrency=3)
        assert len(again.requests) == 2 * (SAMPLES - 3)  # nothing judged is asked again
    assert (report.skipped, report.judged, report.unscored) == (3, SAMPLES - 3, 0)


def test_an_answer_between_failures_starts_the_count_again(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(judge) as server:
        # four samples fail at their first call (502 after a retry), then one is judged, ...
        server.inject(*[Fault(status=502)] * 8, Fault(), Fault(), *[Fault(status=503)] * 8)
        client = LLMClient(Endpoint(server.base_url, "judge", "x", timeout=5, max_retries=1))
        report = judge_run(run, client, concurrency=1)
    assert (report.judged, report.unscored) == (SAMPLES - 8, 8)  # never five in a row


@pytest.mark.slow  # the CLI's retries back off: about 10 s
def test_cofe_judge_exits_1_with_the_cause_in_one_line(tmp_path: Path, capsys) -> None:
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(judge) as server:
        server.inject(Fault(), Fault(), Fault(), Fault())  # two samples are judged
        server.standing = Fault(status=502)  # then a gateway with nothing behind it
        code = main(
            [
                "judge",
                str(run),
                "--base-url",
                server.base_url,
                "--model",
                "judge",
                "--no-probe",
                "--no-embeddings",
                "--cache",
                "none",
                "--concurrency",
                "1",
            ]
        )
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cofe: error: endpoint ")
    assert "502" in lines[0] and "judgements.jsonl" in lines[0]
    assert len([j for j in read_judgements(run).values() if j.status == "judged"]) == 2


def test_a_pass_ending_on_an_unreachable_endpoint_raises_however_few_failed(tmp_path: Path):
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(judge) as server:
        server.inject(*[Fault()] * (2 * (SAMPLES - 2)))  # all but the last two samples judged
        server.standing = Fault(status=502)  # two failures in a row: fewer than five
        client = LLMClient(Endpoint(server.base_url, "judge", "x", timeout=5, max_retries=0))
        with pytest.raises(EndpointDown, match="2 calls in a row") as stopped:
            judge_run(run, client, concurrency=1)
    assert "run `cofe judge` again" in str(stopped.value)
    statuses = [j.status for j in read_judgements(run).values()]
    assert statuses.count("judged") == SAMPLES - 2 and statuses.count("unscored") == 2


@pytest.mark.slow  # a local Dask cluster of two processes
def test_a_dead_endpoint_stops_a_pass_on_a_dask_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason='needs the "dask" extra')
    run = make_run(tmp_path / "run")
    with ScriptedOpenAI(judge) as server:
        server.standing = Fault(status=502)  # the workers' calls never reach a model
        client = LLMClient(Endpoint(server.base_url, "judge", "x", timeout=5, max_retries=0))
        with (
            distributed.LocalCluster(n_workers=1, processes=True, dashboard_address=None) as dc,
            distributed.Client(dc) as cluster,
            pytest.raises(EndpointDown, match="5 calls in a row") as stopped,
        ):
            judge_run(run, client, cluster=cluster, concurrency=1)
    assert "502" in str(stopped.value) and "\n" not in str(stopped.value)
    assert 5 <= len(read_judgements(run)) <= SAMPLES  # recorded as they came back
