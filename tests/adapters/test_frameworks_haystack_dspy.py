"""Haystack and DSPy pipelines recorded through OpenInference spans (docs/frameworks.md).

Haystack: BM25 and embedding retrievers over an ``InMemoryDocumentStore``, a joiner, a
ranker, a ``ChatPromptBuilder`` and OpenAI's chat generator against a loopback server that
echoes the prompt. DSPy: a RAG module (``dspy.Retrieve`` + ``ChainOfThought``) on DSPy's
``DummyLM``. Each test fails on a wrong pool, context or corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cofe.adapters import OpenInferencePipeline, UnsupportedFrameworkPipeline
from cofe.testing import ScriptedOpenAI
from tests.adapters import _framework_apps as apps
from tests.adapters._framework_apps import QUERIES, contents, interleaved, record, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def echo_server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(apps.echo_reply) as server:
        yield server


def _haystack() -> None:
    pytest.importorskip("haystack")
    pytest.importorskip("openinference.instrumentation.haystack")


def test_haystack_hybrid_retrievers_ranker_and_prompt_builder(
    tmp_path: Path, echo_server: ScriptedOpenAI
) -> None:
    """Pool: the BM25 and embedding retrievers' lists merged rank by rank; context: the
    ranker's output (the prompt builder rendered it all); corpus: the document store."""
    _haystack()
    from openinference.instrumentation.haystack import HaystackInstrumentor

    app = apps.haystack_hybrid(echo_server.base_url, top_k=3)
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    corpus = [c for c in run.chunks.values() if not c.is_derived]
    assert sorted(c.text for c in corpus) == sorted(app.corpus_texts)
    assert {c.doc_id for c in corpus} == set(apps.TEXTS)
    for chunk in corpus:  # Haystack's split_idx_start: offsets that hold
        assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    assert not HaystackInstrumentor().is_instrumented_by_opentelemetry
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        bm25, dense = app.retriever(query)
        pool = interleaved(contents(bm25), contents(dense))
        assert texts(run, rec.pool) == pool
        context = texts(run, rec.context)
        assert len(context) == 3 and set(context) < set(pool)
        by_overlap = sorted(pool, key=lambda t: -apps.overlap(query, t))  # the ranker's rule
        assert sorted(context) == sorted(by_overlap[:3]) or [
            apps.overlap(query, t) for t in context
        ] == [apps.overlap(query, t) for t in by_overlap[:3]]
        for text in pool:  # what the generator read, and only that
            assert (text in rec.answer) == (text in context)
        assert set(rec.latency) == {"retrieval", "reranking", "generation"}
        assert rec.answer == app.fn(query)  # identical without cofe


def test_haystack_ranker_cut_is_the_reranking_step_in_scores(
    tmp_path: Path, echo_server: ScriptedOpenAI
) -> None:
    """A ranker keeping one document: the recorded run is scored with the context judged
    apart from the pool (the reranking step)."""
    _haystack()
    from cofe import score_run

    app = apps.haystack_hybrid(echo_server.base_url, top_k=1)
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        pool = texts(run, rec.pool)
        best = max(apps.overlap(query, t) for t in pool)
        assert len(rec.context) == 1 and apps.overlap(query, texts(run, rec.context)[0]) == best
    scores = score_run(tmp_path / "run").scores
    assert {"pool", "context", "answer"} <= set(scores["step"])


def _dspy() -> None:
    pytest.importorskip("dspy")
    pytest.importorskip("openinference.instrumentation.dspy")


def test_a_dspy_rag_module_records_retrieve_and_the_lm_prompt(tmp_path: Path) -> None:
    _dspy()
    app = apps.dspy_rag(k=3)
    pipeline = OpenInferencePipeline(app.fn, corpus=app.extra["corpus"])
    run = record(pipeline, tmp_path)
    assert sorted(c.text for c in run.chunks.values()) == sorted(app.corpus_texts)
    assert {c.doc_id for c in run.chunks.values()} == set(apps.TEXTS)  # the corpus's metadata
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        retrieved = contents(app.retriever(query))
        assert texts(run, rec.pool) == retrieved
        assert texts(run, rec.context) == retrieved  # all three formatted into the LM's prompt
        assert rec.answer == "At dawn."  # the module's answer, not the LM's raw completion


def test_a_dspy_module_retrieving_with_a_plain_function_is_refused(tmp_path: Path) -> None:
    """Retrieval outside ``dspy.Retrieve`` leaves no RETRIEVER span: the pool is unknowable."""
    _dspy()
    import dspy
    from dspy.utils import DummyLM

    rag = apps.dspy_rag()
    passages, corpus = rag.corpus_texts, rag.extra["corpus"]

    class Plain(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.respond = dspy.Predict("context, question -> answer")

        def forward(self, question: str) -> Any:
            context = sorted(passages, key=lambda p: -apps.overlap(question, p))[:2]
            return self.respond(context=context, question=question)

    dspy.configure(lm=DummyLM([{"answer": "At dawn."}] * 20))
    module = Plain()
    with pytest.raises(
        UnsupportedFrameworkPipeline, match=r"no instrumented retriever.*dspy\.Retrieve"
    ):
        record(OpenInferencePipeline(lambda q: module(question=q).answer, corpus=corpus), tmp_path)
