"""The step-by-step mode (``cofe judge --steps``): after the claims call, one call per answer
claim and per reference claim, then one about the whole answer -- each reply scripted by the
loopback server, every label and call counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe import score_run
from cofe.judges import PROMPT_VERSION, judge_run, labels_for_scoring, read_judgements
from cofe.judges._prompts import STEPWISE_SUFFIX
from cofe.testing import ScriptedOpenAI
from tests.judges.test_sense import client, make_run

ANSWER = "The Broncos won. It was played in Miami."
# question, context chunk, answer, reference, fine keywords (claims and checks: scripted below)
CASES = {
    "s0": (
        "Who won Super Bowl 50, and where?",
        "c1",
        ANSWER,
        "The Denver Broncos won. It was played at Levi's Stadium.",
        [["Denver Broncos"]],
        None,
        None,
    ),
    "s1": (
        "Who lost Super Bowl 50?",
        "c1",
        "The Carolina Panthers lost.",
        "Carolina Panthers",
        [["Carolina Panthers"]],
        None,
        None,
    ),
}
CLAIMS = {
    ANSWER: ["The Broncos won Super Bowl 50.", "Super Bowl 50 was played in Miami."],
    "The Carolina Panthers lost.": ["The Carolina Panthers lost Super Bowl 50."],
}
# per answer claim: context, source, reference
CLAIM_LABELS = {
    "The Broncos won Super Bowl 50.": (True, True, True),
    "Super Bowl 50 was played in Miami.": (False, False, False),
}
BROKEN = "The Carolina Panthers lost Super Bowl 50."  # its step is invalid twice


def scripted(messages, request) -> str:
    system, user = messages[0]["content"], messages[1]["content"]
    fields = dict(line.split(": ", 1) for line in user.splitlines() if ": " in line)
    if "fact checking" in system:
        return json.dumps({"answer_claims": CLAIMS[fields["Answer"]], "questions": []})
    if "one claim" in system:  # a step: one answer claim
        if fields["Claim"] == BROKEN:
            return "no JSON here"
        context, source, reference = CLAIM_LABELS[fields["Claim"]]
        return json.dumps({"context": context, "source": source, "reference": reference})
    if "whether a statement" in system:  # a step: one reference claim
        stated = fields["Statement"] == "The Denver Broncos won."
        return json.dumps({"answer": stated, "context": stated})
    # the whole answer: no claim listed, the points, correctness, useful chunks; a dense
    # mode's whole prompt (claims listed) gets an invalid reply, as a weak model's would be:
    # a 5xx would now count toward the endpoint being down
    if "Answer claims: \n" not in user + "\n" or "Reference claims" in user:
        return "not the reply this stand-in scripts"
    return json.dumps(
        {
            "points": [{"point": 0, "answer": "support", "context": "support"}],
            "useful_chunks": [1],
            "correctness": 4,
        }
    )


@pytest.fixture
def judged(tmp_path: Path):
    run = make_run(tmp_path / "run", CASES)
    with ScriptedOpenAI(scripted) as server:
        report = judge_run(run, client(server), steps=True, concurrency=1)
        calls = len(server.requests)
        again = judge_run(run, client(server), steps=True)  # resumes: only s1 (unscored)
        resumed = len(server.requests) - calls
        dense = judge_run(run, client(server), limit=1)  # the other mode judges anew
    return run, report, calls, again, resumed, dense


def test_one_call_per_claim_then_one_for_the_whole_answer(judged):
    run, report, calls, _again, _resumed, _dense = judged
    assert (report.judged, report.unscored) == (1, 1)
    judgement = read_judgements(run)["s1"]  # s0 was judged again in the dense mode
    assert judgement.prompt_version == PROMPT_VERSION + STEPWISE_SUFFIX
    # s0: claims, 2 answer claims, 2 reference claims (its two sentences), the whole answer
    # = 6; s1: claims, then its one claim's step and the step's repair (invalid twice) = 3
    assert calls == 9


def test_the_steps_labels_are_scored_as_the_dense_modes(tmp_path):
    run = make_run(tmp_path / "run", CASES)
    with ScriptedOpenAI(scripted) as server:
        judge_run(run, client(server), steps=True)
    s0 = read_judgements(run)["s0"]
    assert [(c.context, c.source, c.reference) for c in s0.claims] == [
        (True, True, True),
        (False, False, False),
    ]
    assert [(r.answer, r.context) for r in s0.reference_claims] == [(True, True), (False, False)]
    assert s0.correctness == 4 and s0.useful_chunks == [True] and s0.calls == 6
    assert [(p.answer, p.context) for p in s0.points] == [("support", "support")]
    result = score_run(run, labels=labels_for_scoring)
    got = result.scores[result.scores.step == "answer"].set_index(["sample_id", "measure"]).value
    assert got[("s0", "Faithfulness")] == 0.5 and got[("s0", "ClaimRecall")] == 0.5
    assert got[("s0", "CorrectnessScore")] == 4.0
    skipped = {(r.sample_id, r.measure): r.reason for r in result.skipped.itertuples()}
    assert skipped[("s1", "Faithfulness")].startswith(
        "the judge gave no labels: checks: answer claim 0: invalid reply after one repair"
    )


def test_a_pass_resumes_in_its_mode_and_the_other_mode_judges_anew(judged):
    _run, _report, _calls, again, resumed, dense = judged
    assert again.skipped == 1 and resumed == 3  # s1 tried again: claims, its step, a repair
    assert dense.skipped == 0 and dense.left == 1  # no steps judgement counts as a dense one


def test_the_cli_shows_the_calls_per_sample_and_the_dry_run_counts_the_steps(
    tmp_path, capsys, monkeypatch
):
    from cofe.cli import main

    run = make_run(tmp_path / "run", CASES)
    assert main(["judge", str(run), "--dry-run", "--steps"]) == 0
    dry = json.loads(capsys.readouterr().out)
    # s0: claims + 2 sentences + 2 reference sentences + the whole; s1: claims + 1 + 1 + 1
    assert dry["steps"] is True and dry["calls_at_most"] == 6 + 4
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    with ScriptedOpenAI(scripted) as server:
        assert (
            main(
                [
                    "judge",
                    str(run),
                    "--steps",
                    "--base-url",
                    server.base_url,
                    "--model",
                    "judge-model",
                    "--cache",
                    "none",
                    "--no-embeddings",
                    "--no-probe",
                ]
            )
            == 0
        )
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] is True and summary["calls_per_sample"] == 4.5  # (6 + 3) / 2


@pytest.mark.slow  # a local Dask cluster of two processes
def test_a_dask_cluster_judges_step_by_step_as_this_process_does(tmp_path):
    distributed = pytest.importorskip("distributed", reason='needs the "dask" extra')
    local_run, remote_run = (
        make_run(tmp_path / "local", CASES),
        make_run(tmp_path / "remote", CASES),
    )
    with ScriptedOpenAI(scripted) as server:
        judge_run(local_run, client(server), concurrency=1, steps=True)
        with (
            distributed.LocalCluster(n_workers=1, processes=True, dashboard_address=None) as dc,
            distributed.Client(dc) as cluster,
        ):
            judge_run(remote_run, client(server), cluster=cluster, concurrency=1, steps=True)

    def labels(run):
        return {sid: j.model_dump(exclude={"raw"}) for sid, j in read_judgements(run).items()}

    remote = labels(remote_run)
    assert {j["prompt_version"] for j in remote.values()} == {PROMPT_VERSION + STEPWISE_SUFFIX}
    assert remote == labels(local_run)
