"""`cofe judge` end to end against a real local model (llama.cpp server; slow, plumbing only).

Skipped, with the reason, where ``pip install "cofe[llamacpp]"`` has not run
(it builds llama.cpp from source: about 7 minutes on 2 cores, so CI leaves it
out, as for the annotation test). The 270M model is far too small to judge
well: the test asserts that both samples end judged or unscored with a reason,
that a judged sample's information-point labels are each one of the three
values (or None: unlabelled), and that scoring reads whatever it produced
without a NaN.
"""

from __future__ import annotations

import shutil

import pytest

from cofe.judges import labels_for_scoring

pytest.importorskip(
    "llama_cpp.server",
    reason="llama-cpp-python[server] not installed (pip install 'cofe[llamacpp]')",
)

from cofe import score_run
from cofe.judges import judge_run, read_judgements
from cofe.llm import Endpoint, LLMClient
from tests.annotators.test_llama_cpp import llama_server  # noqa: F401 (the fixture)
from tests.judges.test_judge import make_run

LABELS = {"support", "partial", "not_support", None}


@pytest.mark.slow
def test_a_real_small_model_judges_two_samples(tmp_path, llama_server):  # noqa: F811
    run = make_run(tmp_path / "run")
    lines = (run / "samples.jsonl").read_text().splitlines()[:2]
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n")  # two answered samples
    endpoint = Endpoint.from_env(
        base_url=llama_server, model="gemma-3-270m", timeout=300, max_retries=1
    )
    client = LLMClient(endpoint, json_mode="json_object", max_tokens=600)
    report = judge_run(run, client, concurrency=1)
    assert report.judged + report.unscored == 2
    for judgement in read_judgements(run).values():
        assert judgement.status == "judged" or judgement.reason
        if judgement.status == "judged":  # one label per information point, each a known one
            assert [p.point for p in judgement.points] == [0]  # each sample has one point
            for label in judgement.points:
                assert label.answer in LABELS and label.context in LABELS
    result = score_run(run, labels=labels_for_scoring)
    assert result.scores["value"].notna().all()
    answer = result.summary().query("step == 'answer'")
    assert ((answer.scored + answer.unscored) == 4).all()  # 4 samples in the eval set
    shutil.rmtree(run / "scores", ignore_errors=True)
