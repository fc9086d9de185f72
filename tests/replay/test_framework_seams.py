"""Framework pipelines replayed through their own seams: a fixed-documents retriever
(LangChain), a node postprocessor (LlamaIndex), a retriever component (Haystack)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.replay import Oracle, ReplayStopped, rebuild, replay_run
from cofe.runlog import read_run
from cofe.runner import run_pipeline
from cofe.stages import score_to_folder
from tests.replay import _framework_apps as apps
from tests.replay import _tiny

LANGCHAIN = "tests.replay._framework_apps:langchain_app"


@pytest.fixture
def langchain_run(tmp_path: Path) -> Path:
    """The LangChain app recorded as `cofe run --pipeline` records it: through its spans."""
    from cofe.adapters import OpenInferencePipeline

    evalset = _tiny.write(tmp_path)
    run = tmp_path / "run"
    recorded = OpenInferencePipeline(
        apps.langchain_app(), corpus=apps.langchain_documents(), documents=_tiny.documents()
    )
    run_pipeline(recorded, evalset, run, progress=False)
    score_to_folder(run)
    return run


def test_a_langchain_chain_is_replayed_through_a_fixed_documents_retriever(
    langchain_run: Path,
) -> None:
    lines = (langchain_run / "scores" / "verdicts.jsonl").read_text().splitlines()
    verdicts = {row["sample_id"]: row["verdict"] for row in map(json.loads, lines)}
    assert verdicts["retrieval"] == "not_retrieved"
    replayed = replay_run(langchain_run, pipeline=LANGCHAIN)
    # the chain has no reranker: context, pool and no-noise all go through the retriever
    assert set(replayed.plan.why_not) == {Oracle.CHUNKING}
    assert "splits and indexes with its own code" in replayed.plan.why_not[Oracle.CHUNKING]
    # retrieval lost Canberra; the chain's own prompt and model, given the oracle, answer it
    assert replayed.answer_ok[("retrieval", Oracle.POOL)]
    assert "Canberra" in (replayed.records[("retrieval", Oracle.POOL)].answer or "")
    assert replayed.new_verdicts[("retrieval", Oracle.POOL)] == "pass"
    # the generator had Rome in its context and missed it: the oracle context does not help
    assert not replayed.answer_ok[("generation", Oracle.CONTEXT)]
    # what the model read under no-noise: the oracle chunk alone, through the chain's prompt
    apps.SEEN.clear()
    replay_run(
        langchain_run,
        pipeline=LANGCHAIN,
        samples=["retrieval"],
        oracles=[Oracle.NO_NOISE],
        out=langchain_run / "again",  # not the first pass's replays: asked again
    )
    assert apps.SEEN == [["The capital city of Australia is Canberra."]]


def test_a_factory_that_ignores_the_seam_is_stopped_not_replayed(langchain_run: Path) -> None:
    with pytest.raises(
        ReplayStopped, match="never called the retriever built from fixed_documents"
    ):
        replay_run(langchain_run, pipeline="tests.replay._framework_apps:ignores_the_seam")


@pytest.mark.parametrize(
    "spec",
    [
        "tests.replay._framework_apps:llama_index_app",
        "tests.replay._framework_apps:haystack_app",
    ],
)
def test_llama_index_and_haystack_apps_answer_from_the_documents_cofe_sets(
    spec: str, langchain_run: Path
) -> None:
    """The same run replayed through a LlamaIndex query engine (cofe's postprocessor first)
    and a Haystack pipeline (cofe's component as its retriever): the app's model reads the
    documents cofe set, in cofe's order, and its answer comes from them."""
    replayable = rebuild(read_run(langchain_run), spec, None)
    generate = replayable.pipeline.generate
    assert generate is not None
    by_id = {c.chunk_id: c for c in _tiny.chunks()}
    apps.SEEN.clear()
    answer = generate("What is the capital of Japan?", [by_id["japan#1"], by_id["france#0"]])
    assert apps.SEEN == [["The capital of Japan is Tokyo.", "France is a country in Europe."]]
    assert "Tokyo" in answer
    replayed = replay_run(langchain_run, pipeline=spec, samples=["retrieval"])
    assert replayed.answer_ok[("retrieval", Oracle.POOL)]


def test_cofes_haystack_component_does_not_break_a_later_haystack_recording():
    # Haystack registers every component class, and OpenInference wraps each by
    # module.ClassName: cofe's fixed-documents component must be reachable by its name
    from openinference.instrumentation.haystack import HaystackInstrumentor

    from cofe.replay._seams import FixedDocuments

    FixedDocuments().haystack_retriever()
    instrumentor = HaystackInstrumentor()
    instrumentor.instrument(skip_dep_check=True)
    instrumentor.uninstrument()
