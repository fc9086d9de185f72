"""LangChain and LangGraph pipelines as people write them, recorded through OpenInference spans
(docs/frameworks.md), one test per pattern.

Each builds the real LangChain objects (an in-memory vector store over word-hash embeddings,
a chat model echoing its prompt) and checks the recorded corpus, pool, context and answer
against what the pipeline's own parts return when called again without cofe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_classic")
pytest.importorskip("openinference.instrumentation.langchain")

from cofe import read_run
from cofe.adapters import OpenInferencePipeline, UnsupportedFrameworkPipeline
from tests.adapters import _framework_apps as apps
from tests.adapters._framework_apps import QUERIES, contents, interleaved, record, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _check_corpus(run: Any, expected: list[str]) -> None:
    """Every chunk the retriever could return, in documents whose offsets hold."""
    corpus = [c for c in run.chunks.values() if not c.is_derived]
    assert sorted(c.text for c in corpus) == sorted(set(expected))
    assert {c.doc_id for c in corpus} <= set(apps.TEXTS)
    for chunk in corpus:
        if chunk.start is not None:
            assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    assert run.manifest.corpus == "whole"


def _answers_unchanged(run: Any, app: apps.App) -> None:
    """Instrumentation only observes: the same answers without cofe."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    assert not LangChainInstrumentor().is_instrumented_by_opentelemetry  # removed after the run
    for sample_id, rec in run.records.items():
        plain = app.fn(QUERIES[int(sample_id[1:])])
        plain = plain["answer"] if isinstance(plain, dict) else plain
        assert rec.answer == plain


@pytest.mark.parametrize("store", ["memory", "faiss", "chroma"])
def test_an_lcel_chain_records_its_retrieval_as_pool_and_context(
    tmp_path: Path, store: str
) -> None:
    if store == "faiss":
        pytest.importorskip("faiss")
    if store == "chroma":
        pytest.importorskip("langchain_chroma")
    app = apps.lcel(store=store)
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    for sample_id, rec in run.records.items():
        retrieved = contents(app.retriever.invoke(QUERIES[int(sample_id[1:])]))
        assert texts(run, rec.pool) == retrieved  # best first, as the retriever ranked them
        assert texts(run, rec.context) == retrieved
        assert rec.error is None and rec.answer.startswith("ANSWER FROM")
        assert set(rec.latency) == {"retrieval", "generation"}
    _answers_unchanged(run, app)


def test_a_chain_formatting_only_some_documents_records_what_the_llm_read(tmp_path: Path) -> None:
    app = apps.lcel(take=2)
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    for sample_id, rec in run.records.items():
        retrieved = contents(app.retriever.invoke(QUERIES[int(sample_id[1:])]))
        assert texts(run, rec.pool) == retrieved  # four retrieved
        assert texts(run, rec.context) == retrieved[:2]  # two in the prompt
        assert retrieved[3] not in rec.answer
    _answers_unchanged(run, app)


def test_create_retrieval_chain_records_the_stuffed_documents(tmp_path: Path) -> None:
    app = apps.retrieval_chain()
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    for sample_id, rec in run.records.items():
        retrieved = contents(app.retriever.invoke(QUERIES[int(sample_id[1:])]))
        assert texts(run, rec.pool) == texts(run, rec.context) == retrieved
        assert all(text in rec.answer for text in retrieved)  # the dict's "answer"
    _answers_unchanged(run, app)


def test_multi_query_pool_is_every_rewritten_querys_retrieval(tmp_path: Path) -> None:
    """The retriever's own LLM call (writing the queries) is retrieval, not generation; the
    pool is the inner retrievals merged rank by rank; the context their de-duplicated union."""
    app = apps.multi_query()
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        variants = app.extra["variants"]("Original question: " + query).split("\n")
        per_query = [contents(app.extra["base"].invoke(v)) for v in variants]
        assert texts(run, rec.pool) == interleaved(*per_query)
        assert any("garden" in t for t in texts(run, rec.pool))  # the second query's
        assert texts(run, rec.context) == contents(app.retriever.invoke(query))
        assert "Original question" not in rec.answer  # the rewriting call is not the answer
    _answers_unchanged(run, app)


def test_contextual_compression_with_a_reranker_records_before_and_after(tmp_path: Path) -> None:
    app = apps.compression(top_n=2)
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        assert texts(run, rec.pool) == contents(app.retriever.invoke(query))  # the base's six
        kept = contents(app.extra["compressed"].invoke(query))
        assert len(kept) == 2 and texts(run, rec.context) == kept  # the reranker's two
    # reranked, not cut: some sample's context is not its pool's first two
    assert any(texts(run, r.context) != texts(run, r.pool)[:2] for r in run.records.values())
    _answers_unchanged(run, app)


def test_parent_document_retriever_records_parents_as_corpus_pool_and_context(
    tmp_path: Path,
) -> None:
    """The children it searches are never returned: the corpus is the parents (its docstore)."""
    app = apps.parent_document()
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    assert all(len(c.text) > 40 for c in run.chunks.values())  # no 40-character child
    for sample_id, rec in run.records.items():
        parents = contents(app.retriever.invoke(QUERIES[int(sample_id[1:])]))
        assert texts(run, rec.pool) == texts(run, rec.context) == parents
    _answers_unchanged(run, app)


def test_an_ensemble_pools_bm25_and_vectors_and_its_fusion_is_the_context(tmp_path: Path) -> None:
    app = apps.ensemble()
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)  # both retrievers' documents, each chunk once
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        bm25, dense = (
            contents(app.extra["bm25"].invoke(query)),
            contents(app.extra["dense"].invoke(query)),
        )
        assert texts(run, rec.pool) == interleaved(bm25, dense)
        assert texts(run, rec.context) == contents(app.retriever.invoke(query))  # fused order
    _answers_unchanged(run, app)


def test_a_langgraph_loop_pools_every_retrieval_and_the_last_llm_call_answers(
    tmp_path: Path,
) -> None:
    """Two retrievals (the question, then the LLM's rewrite): the pool merges both, the context
    is what the answering call's prompt holds, the rewriting call is not the answer."""
    app = apps.agentic_loop()
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        first = contents(app.retriever.invoke(query))
        second = contents(app.retriever.invoke(query + apps.REWRITE))
        assert set(second) - set(first)  # the second retrieval found something new
        assert texts(run, rec.pool) == interleaved(first, second)
        assert texts(run, rec.context) == interleaved(first, second)  # all in the prompt
        assert rec.answer.startswith("ANSWER FROM: Context:")
    _answers_unchanged(run, app)


def test_an_async_chain_is_recorded_on_one_event_loop(tmp_path: Path) -> None:
    app = apps.lcel()
    chain = app.fn.__self__  # the runnable whose invoke the app is
    run = record(OpenInferencePipeline(chain.ainvoke), tmp_path, use_async=True)
    for sample_id, rec in run.records.items():
        retrieved = contents(app.retriever.invoke(QUERIES[int(sample_id[1:])]))
        assert texts(run, rec.pool) == texts(run, rec.context) == retrieved
    _answers_unchanged(run, app)


def test_a_store_that_cannot_be_listed_makes_the_corpus_partial(tmp_path: Path) -> None:
    """A vector store answering searches only (a remote database): chunks are those
    retrieved, the manifest says partial and why, the corpus step is not judged."""
    from langchain_core.vectorstores import VectorStore

    parts = apps.langchain_parts()
    splits = parts["splits"]

    class RemoteStore(VectorStore):
        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            raise NotImplementedError

        @classmethod
        def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kw: Any) -> Any:
            raise NotImplementedError

        def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Any]:
            return sorted(splits, key=lambda d: -apps.overlap(query, d.page_content))[:k]

    retriever = RemoteStore().as_retriever(search_kwargs={"k": 2})
    chain = retriever | apps._format | parts["chat"]()
    pipeline = OpenInferencePipeline(lambda q: chain.invoke(q).content)
    run = record(pipeline, tmp_path)
    assert run.manifest.corpus == "partial"
    assert "RemoteStore" in run.manifest.meta["corpus_partial"]
    for sample_id, rec in run.records.items():
        assert texts(run, rec.pool) == contents(retriever.invoke(QUERIES[int(sample_id[1:])]))
    assert len(run.chunks) < len(splits)  # only what was retrieved

    # the splitter's output handed over: the whole corpus
    whole = record(
        OpenInferencePipeline(lambda q: chain.invoke(q).content, corpus=splits), tmp_path / "whole"
    )
    assert whole.manifest.corpus == "whole"
    assert sorted(c.text for c in whole.chunks.values()) == sorted(d.page_content for d in splits)


class _Collection:
    def __init__(self, count: int) -> None:
        self._count = count

    def count(self) -> int:
        return self._count


def _chroma_shaped(splits: list[Any], listing: str) -> Any:
    """A store with LangChain ``Chroma``'s listing API (``get(include=...)``, its collection's
    ``count()``): ``listing`` is ``whole``, ``short`` (a listing cut short) or ``refused``."""
    from langchain_core.vectorstores import VectorStore

    class Chroma(VectorStore):
        def __init__(self) -> None:
            self._collection = _Collection(len(splits))

        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            raise NotImplementedError

        @classmethod
        def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kw: Any) -> Any:
            raise NotImplementedError

        def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Any]:
            return sorted(splits, key=lambda d: -apps.overlap(query, d.page_content))[:k]

        def get(self, include: list[str]) -> dict[str, Any]:
            assert include == ["documents", "metadatas"]
            if listing == "refused":
                raise ConnectionError("the Chroma server refused the listing")
            shown = splits[:3] if listing == "short" else splits
            return {
                "ids": [f"id{i}" for i in range(len(shown))],
                "documents": [d.page_content for d in shown],
                "metadatas": [d.metadata for d in shown],
            }

    return Chroma()


@pytest.mark.parametrize("listing", ["whole", "short", "refused"])
def test_a_chroma_store_is_listed_or_the_corpus_is_partial_saying_why(
    tmp_path: Path, listing: str
) -> None:
    """Chroma's collection listed through ``get`` (checked against its count), whatever the
    Chroma client installed; a listing refused or cut short makes the corpus partial."""
    parts = apps.langchain_parts()
    splits = parts["splits"]
    retriever = _chroma_shaped(splits, listing).as_retriever(search_kwargs={"k": 2})
    chain = retriever | apps._format | parts["chat"]()
    run = record(OpenInferencePipeline(lambda q: chain.invoke(q).content), tmp_path)
    if listing == "whole":
        _check_corpus(run, [d.page_content for d in splits])
        return
    assert run.manifest.corpus == "partial"
    why = run.manifest.meta["corpus_partial"]
    assert (
        ("refused the listing" in why)
        if listing == "refused"
        else (f"holds {len(splits)} documents but listing it gave 3" in why)
    )
    for sample_id, rec in run.records.items():
        assert texts(run, rec.pool) == contents(retriever.invoke(QUERIES[int(sample_id[1:])]))


def test_a_factory_returning_a_chain_is_recorded_by_cofe_run(tmp_path: Path, monkeypatch) -> None:
    """``cofe run --pipeline app:build`` where ``build()`` returns the LCEL chain itself."""
    from cofe.runner import load_pipeline

    (tmp_path / "my_rag.py").write_text(
        "from tests.adapters._framework_apps import lcel\n"
        "def build():\n    return lcel().fn.__self__\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pipeline = load_pipeline("my_rag:build")
    assert isinstance(pipeline, OpenInferencePipeline)
    run = record(pipeline, tmp_path)
    assert run.manifest.pipeline["callable"].endswith("RunnableSequence.invoke")
    assert all(rec.pool and rec.context == rec.pool for rec in run.records.values())


def test_an_already_instrumented_process_is_refused(tmp_path: Path) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider

    app = apps.lcel()
    LangChainInstrumentor().instrument(tracer_provider=TracerProvider())
    try:
        with pytest.raises(UnsupportedFrameworkPipeline, match="already instrumented"):
            record(OpenInferencePipeline(app.fn, frameworks=["langchain"]), tmp_path)
    finally:
        LangChainInstrumentor().uninstrument()
    assert (
        not (tmp_path / "run" / "samples.jsonl").exists() or not read_run(tmp_path / "run").records
    )


def test_a_chain_without_a_retriever_is_refused_at_its_first_query(tmp_path: Path) -> None:
    parts = apps.langchain_parts()
    chat = parts["chat"]()
    with pytest.raises(UnsupportedFrameworkPipeline, match="no instrumented retriever"):
        record(
            OpenInferencePipeline(lambda q: chat.invoke(q).content, corpus=parts["splits"]),
            tmp_path,
        )


def test_a_tool_calling_agent_pools_its_tool_retrievals(tmp_path: Path) -> None:
    """``create_agent`` with a retriever tool, two searches: the retriever spans inside the
    tool spans are the retrievals; the model's tool-calling turns are generation spans but
    only the last one answers; the context is what the tool messages put in its prompt."""
    pytest.importorskip("langchain.agents")
    app = apps.tool_agent()
    run = record(OpenInferencePipeline(app.fn), tmp_path)
    _check_corpus(run, app.corpus_texts)
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        first = contents(app.retriever.invoke(query))
        second = contents(app.retriever.invoke(query + apps.REWRITE))
        assert texts(run, rec.pool) == interleaved(first, second)
        assert texts(run, rec.context) == interleaved(first, second)
        assert rec.answer.startswith("ANSWER FROM:") and all(t in rec.answer for t in second)
    _answers_unchanged(run, app)


@pytest.mark.parametrize("method", ["stream", "astream"])
def test_a_streamed_answer_is_read_whole_inside_its_query(tmp_path: Path, method: str) -> None:
    """``chain.stream`` runs as it is read: cofe reads it inside the query's trace, so the
    retrieval is recorded and the answer is the whole stream."""
    app = apps.lcel()
    chain = app.fn.__self__
    run = record(OpenInferencePipeline(getattr(chain, method)), tmp_path)
    for sample_id, rec in run.records.items():
        query = QUERIES[int(sample_id[1:])]
        assert texts(run, rec.pool) == contents(app.retriever.invoke(query))
        assert rec.answer == app.fn(query)


def test_a_failing_retriever_fails_its_sample_in_the_retrieval_stage(tmp_path: Path) -> None:
    """The exception is the sample's error, blamed on the stage whose span failed; the run
    goes on."""
    from langchain_core.retrievers import BaseRetriever

    parts = apps.langchain_parts()

    class Flaky(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Any]:
            if "101" in query:
                raise RuntimeError("the index is down")
            return parts["splits"][:2]

    chain = Flaky() | apps._format | parts["chat"]()
    run = record(
        OpenInferencePipeline(lambda q: chain.invoke(q).content, corpus=parts["splits"]), tmp_path
    )
    failed = run.records["q1"]
    assert failed.error is not None and failed.error.stage == "retrieval"
    assert failed.error.type == "RuntimeError" and "index is down" in failed.error.message
    assert failed.answer is None and failed.pool is None
    assert run.records["q0"].error is None and len(run.records["q0"].pool) == 2


def test_a_run_without_docs_measures_no_parse_and_says_so(tmp_path: Path) -> None:
    """Issue 44, defect 5: recorded without ``--docs``, the documents are rebuilt from the
    chunks, so they hold what the chunks hold: no parse score (it read 1.000), and the run
    says what was not measured; with ``--docs`` it says the parse step read cofe's parser,
    not the app's loader."""
    from cofe import score_run
    from cofe.runner import run_pipeline

    app = apps.lcel()
    evalset = apps.write_samples(tmp_path / "evalset.jsonl", 3)
    report = run_pipeline(OpenInferencePipeline(app.fn), evalset, tmp_path / "run", progress=False)
    assert report.measured and "parsing is not measured" in report.measured
    assert "measured: the documents were rebuilt" in report.summary()
    assert "parsing is not measured" in read_run(tmp_path / "run").manifest.meta["documents"]
    result = score_run(tmp_path / "run")
    assert "parse" not in set(result.scores.step) and "parse" not in set(result.recalls.step)
    assert "parse" not in result.shape["stages"]

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in apps.TEXTS.items():
        (docs / name).write_text(text, encoding="utf-8")
    report = run_pipeline(
        OpenInferencePipeline(apps.lcel().fn),
        evalset,
        tmp_path / "with-docs",
        docs=docs,
        progress=False,
    )
    assert report.measured and "cofe's parser" in report.measured
    assert "the app's loader" in read_run(tmp_path / "with-docs").manifest.meta["documents"]
