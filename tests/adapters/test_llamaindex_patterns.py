"""The LlamaIndex pipelines people really write (issue 11), one test per pattern.

Each builds the real LlamaIndex object with LlamaIndex's own MockEmbedding and
MockLLM (which answers with its whole prompt, so the answer shows exactly what
the synthesizer read) and checks the recorded pool, context, answer, corpus and
document ids against what the pipeline did. The "top_k=10, no postprocessor"
row is ``test_an_engine_without_postprocessor_records_the_ten_nodes_its_synthesizer_got``
in ``test_llamaindex.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cofe import EvalSample, read_run, score_run, write_evalset
from cofe.runlog import Stage
from cofe.runner import run_pipeline

pytest.importorskip("llama_index.core")
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter

from cofe.adapters import LlamaIndexPipeline, UnsupportedLlamaIndexPipeline
from tests.conftest import CAPITALS

EMBED = MockEmbedding(embed_dim=8)

LONG = {
    "harbour.txt": " ".join(
        f"The harbour log entry {i} records that ship number {100 + i} left at dawn."
        for i in range(12)
    ),
    "garden.txt": " ".join(
        f"The garden notebook line {i} says the rose bed {i} was planted in spring."
        for i in range(12)
    ),
}


def _docs(texts: dict[str, str]) -> list[Document]:
    return [Document(text=t, metadata={"file_name": n}) for n, t in texts.items()]


def _evalset(path: Path, source: str = "harbour.txt", n: int = 2) -> Path:
    samples = [
        EvalSample(
            id=f"q{i}",
            query=f"When did ship number {100 + i} leave?",
            coarse_keywords=["harbour log"],
            fine_keywords=[[str(100 + i)]],
            reference_answer="At dawn.",
            source={"doc": source},
        )
        for i in range(n)
    ]
    write_evalset(path, samples)
    return path


def _run(pipeline, tmp_path: Path, evalset: Path | None = None):
    evalset = evalset or _evalset(tmp_path / "evalset.jsonl")
    run_pipeline(pipeline, evalset, tmp_path / "run", concurrency=2, progress=False)
    run = read_run(tmp_path / "run")
    assert run.problems == []
    return run


def _texts(run, ranked) -> list[str]:
    return [run.chunks[c.chunk_id].text for c in ranked]


def test_an_external_vector_store_without_index_gives_the_whole_corpus(tmp_path: Path) -> None:
    """Qdrant (embedded local mode, on disk): the index lives outside LlamaIndex's docstore,
    the engine is built from the store alone, and ``index=`` is not passed."""
    qdrant_client = pytest.importorskip("qdrant_client")
    from llama_index.vector_stores.qdrant import QdrantVectorStore

    nodes = SentenceSplitter(chunk_size=32, chunk_overlap=0).get_nodes_from_documents(_docs(LONG))
    client = qdrant_client.QdrantClient(path=str(tmp_path / "qdrant"))
    try:
        store = QdrantVectorStore(client=client, collection_name="notes")
        VectorStoreIndex(
            nodes,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=EMBED,
        )
        # as in production: a later process opens the existing collection
        index = VectorStoreIndex.from_vector_store(store, embed_model=EMBED)
        assert index.docstore.docs == {}  # the text is in Qdrant only
        engine = index.as_query_engine(similarity_top_k=3, llm=MockLLM())
        run = _run(LlamaIndexPipeline(engine), tmp_path)
    finally:
        client.close()
    corpus = [c for c in run.chunks.values() if not c.is_derived]
    assert sorted(c.text for c in corpus) == sorted(n.get_content() for n in nodes)
    assert {c.doc_id for c in corpus} == set(LONG)
    assert set(run.documents) == set(LONG)  # rebuilt from the chunks: sources resolve
    for chunk in corpus:  # offsets hold in the rebuilt documents
        assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    record = run.records["q0"]
    assert len(record.pool) == 3 and record.context == record.pool
    assert all(text in record.answer for text in _texts(run, record.context))


def test_a_retriever_whose_corpus_cannot_be_read_is_refused_before_the_first_query(
    tmp_path: Path,
) -> None:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    class Remote(BaseRetriever):  # e.g. a search service: cofe only ever sees its answers
        def _retrieve(self, query_bundle):
            return [NodeWithScore(node=TextNode(text="Ship 100 left at dawn."), score=1.0)]

    with pytest.raises(UnsupportedLlamaIndexPipeline, match="Pass nodes="):
        _run(LlamaIndexPipeline(Remote()), tmp_path)
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_an_index_loaded_from_storage_names_documents_by_file_name(
    tmp_path: Path, small_evalset: Path
) -> None:
    from llama_index.core import SimpleDirectoryReader, load_index_from_storage

    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in CAPITALS.items():
        (folder / name).write_text(text, encoding="utf-8")
    documents = SimpleDirectoryReader(str(folder)).load_data()
    assert {d.doc_id for d in documents}.isdisjoint(CAPITALS)  # random ids, as users get them
    built = VectorStoreIndex.from_documents(documents, embed_model=EMBED)
    built.storage_context.persist(str(tmp_path / "storage"))
    index = load_index_from_storage(
        StorageContext.from_defaults(persist_dir=str(tmp_path / "storage")), embed_model=EMBED
    )
    engine = index.as_query_engine(similarity_top_k=3, llm=MockLLM())
    pipeline = LlamaIndexPipeline(engine, index=index)  # no documents=: they are not persisted
    run = _run(pipeline, tmp_path, small_evalset)
    assert set(run.documents) == set(CAPITALS) == {c.doc_id for c in run.chunks.values()}
    for chunk in run.chunks.values():
        assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    scores = score_run(tmp_path / "run").scores
    doc_recall = scores[(scores["step"] == "pool") & (scores["measure"] == "DocRecall@3")]
    # three one-chunk files, top 3: every sample's source is found (0 with random doc ids)
    assert doc_recall["value"].tolist() == [1.0, 1.0, 1.0]
    pipeline.check_sources(["france.txt", "somewhere/else.pdf"])  # one match is enough
    with pytest.raises(UnsupportedLlamaIndexPipeline) as refused:
        pipeline.check_sources(["report-2023.pdf", "minutes.docx"])
    assert "report-2023.pdf" in str(refused.value) and "france.txt" in str(refused.value)
    assert "doc_key=" in str(refused.value)


def test_a_user_doc_key_names_documents(tmp_path: Path) -> None:
    docs = [
        Document(text=t, metadata={"file_name": n, "isbn": f"isbn-{n}"}) for n, t in LONG.items()
    ]
    index = VectorStoreIndex.from_documents(docs, embed_model=EMBED)
    engine = index.as_query_engine(similarity_top_k=2, llm=MockLLM())
    evalset = _evalset(tmp_path / "evalset.jsonl", source="isbn-harbour.txt")
    run = _run(LlamaIndexPipeline(engine, index=index, doc_key="isbn"), tmp_path, evalset)
    assert set(run.documents) == {"isbn-harbour.txt", "isbn-garden.txt"}


def test_a_sentence_window_context_is_the_window_the_synthesizer_read(tmp_path: Path) -> None:
    from llama_index.core.node_parser import SentenceWindowNodeParser
    from llama_index.core.postprocessor import MetadataReplacementPostProcessor

    docs = _docs(LONG)
    nodes = SentenceWindowNodeParser.from_defaults(window_size=1).get_nodes_from_documents(docs)
    index = VectorStoreIndex(nodes, embed_model=EMBED)
    engine = index.as_query_engine(
        similarity_top_k=3,
        llm=MockLLM(),
        node_postprocessors=[MetadataReplacementPostProcessor(target_metadata_key="window")],
    )
    run = _run(LlamaIndexPipeline(engine, index=index, documents=docs), tmp_path)
    windows = {n.get_content(): n.metadata["window"] for n in nodes}
    record = run.records["q0"]
    pool_texts = _texts(run, record.pool)
    # the pool holds the sentences the retriever ranked, as they are in the corpus
    assert len(pool_texts) == 3 and all(t in windows for t in pool_texts)
    context = [run.chunks[c.chunk_id] for c in record.context]
    # the context holds each sentence's window, which is what the LLM got
    assert [c.text for c in context] == [windows[t] for t in pool_texts]
    assert [c.derived_from for c in context] == [[c.chunk_id] for c in record.pool]
    assert {c.kind for c in context} == {"replaced"}
    assert all(c.text.strip() in record.answer for c in context)
    assert any(c.text not in pool_texts for c in context)  # windows are longer than sentences
    for chunk in context:  # the window is found in its document (its joins are single spaces)
        found = run.documents[chunk.doc_id].text[chunk.start : chunk.end]
        assert found.split() == chunk.text.split()
    assert Stage.RERANKING in run.manifest.stages


def test_auto_merging_puts_leaves_and_parents_in_the_corpus(tmp_path: Path) -> None:
    from llama_index.core.node_parser import HierarchicalNodeParser, get_leaf_nodes
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.retrievers import AutoMergingRetriever

    docs = _docs(LONG)
    all_nodes = HierarchicalNodeParser.from_defaults(
        chunk_sizes=[128, 32]
    ).get_nodes_from_documents(docs)
    leaves = get_leaf_nodes(all_nodes)
    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(all_nodes)
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=EMBED)
    retriever = AutoMergingRetriever(
        index.as_retriever(similarity_top_k=6), storage, simple_ratio_thresh=0.2
    )
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    # no index=: the corpus is found through the retriever (its index and storage context)
    run = _run(LlamaIndexPipeline(engine, documents=docs), tmp_path)
    # every node, leaves and parents (parents overlap: a leaf both hold is one chunk)
    chunks = list(run.chunks.values())
    assert {c.text for c in chunks} == {n.get_content() for n in all_nodes}
    assert len({(c.doc_id, c.start, c.end) for c in chunks}) == len(chunks) < len(all_nodes)
    leaf_texts = {n.get_content() for n in leaves}
    with_parent = [c for c in chunks if "parent_chunk_id" in c.meta]
    tops = [n for n in all_nodes if n.parent_node is None]
    assert len(with_parent) == len(chunks) - len(tops)  # all but the top-level nodes
    for chunk in run.chunks.values():
        # offsets in the document, not in the parent (as HierarchicalNodeParser gives them)
        assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    for chunk in with_parent:
        parent = run.chunks[chunk.meta["parent_chunk_id"]]
        assert parent.start <= chunk.start and chunk.end <= parent.end and chunk.text in parent.text
    record = run.records["q0"]
    # six leaves retrieved; leaves of the same text (the text repeats a few sentences) are one
    # chunk, and which ties the retriever returns depends on random node ids
    repeated = len(leaves) - len(leaf_texts)
    assert 6 - repeated <= len(record.pool) <= 6 and set(_texts(run, record.pool)) <= leaf_texts
    merged = [t for t in _texts(run, record.context) if t not in leaf_texts]
    assert merged and all(t in record.answer for t in merged)  # parents reached the LLM
    assert run.manifest.stages == [
        Stage.PARSE,
        Stage.CHUNKING,
        Stage.RETRIEVAL,
        Stage.RERANKING,
        Stage.GENERATION,
    ]
    assert run.manifest.top_k == 6 and Stage.RERANKING in record.latency


def test_async_engines_are_recorded_through_aquery() -> None:
    docs = _docs(LONG)
    index = VectorStoreIndex.from_documents(docs, embed_model=EMBED)
    engine = index.as_query_engine(similarity_top_k=2, llm=MockLLM(), use_async=True)

    def never(*args, **kwargs):  # the sync path must not be the one recorded
        raise AssertionError("query() called")

    engine.query = never
    pipeline = LlamaIndexPipeline(engine, index=index)
    pipeline.prepare([], None)
    queries = [f"Question number {i} about ship {100 + i}?" for i in range(6)]
    traces: dict[int, object] = {}
    pipeline.answer_all_async(queries, 3, lambda i, t: traces.__setitem__(i, t))
    assert sorted(traces) == list(range(6))
    for i, query in enumerate(queries):
        trace = traces[i]
        assert trace.error is None and query in trace.answer  # its own answer, not another's
        assert len(trace.pool) == 2 and trace.context == trace.pool
        texts = [pipeline.registry.by_id[c.chunk_id].text for c in trace.context]
        assert all(t in trace.answer for t in texts)
        assert set(trace.latency) == {Stage.RETRIEVAL, Stage.GENERATION}


def test_the_runner_drives_an_async_engine_on_an_event_loop(tmp_path: Path) -> None:
    docs = _docs(LONG)
    index = VectorStoreIndex.from_documents(docs, embed_model=EMBED)
    engine = index.as_query_engine(similarity_top_k=2, llm=MockLLM(), use_async=True)

    def never(*args, **kwargs):  # the threaded sync path must not be the one taken
        raise AssertionError("query() called")

    engine.query = never
    evalset = _evalset(tmp_path / "evalset.jsonl", n=8)
    pipeline = LlamaIndexPipeline(engine, index=index, documents=docs)
    report = run_pipeline(
        pipeline, evalset, tmp_path / "run", concurrency=3, progress=False, use_async=True
    )
    run = read_run(tmp_path / "run")
    assert report.answered == 8 and run.problems == [] and len(run.records) == 8
    for i in range(8):
        record = run.records[f"q{i}"]
        assert record.error is None and f"When did ship number {100 + i} leave?" in record.answer
        assert all(t in record.answer for t in _texts(run, record.context))
    with pytest.raises(ValueError, match="has no async path"):
        from cofe.adapters import PythonPipeline

        run_pipeline(
            PythonPipeline(chunks=[], retrieve=lambda q: [], name="sync"),
            evalset,
            tmp_path / "other",
            use_async=True,
        )


def test_a_streaming_engine_records_the_whole_answer(tmp_path: Path) -> None:
    docs = _docs(LONG)
    index = VectorStoreIndex.from_documents(docs, embed_model=EMBED)
    engine = index.as_query_engine(similarity_top_k=2, llm=MockLLM(), streaming=True)
    run = _run(LlamaIndexPipeline(engine, index=index, documents=docs), tmp_path)
    record = run.records["q1"]
    assert record.error is None and record.answer is not None
    assert "When did ship number 101 leave?" in record.answer
    assert all(t in record.answer for t in _texts(run, record.context))


def test_an_engine_that_answers_nothing_is_a_generation_error() -> None:
    from llama_index.core.base.response.schema import Response
    from llama_index.core.query_engine import CustomQueryEngine

    class Silent(CustomQueryEngine):
        def custom_query(self, query_str: str):
            return Response(response=None)

    trace = LlamaIndexPipeline(Silent(), nodes=[]).answer("anything")
    assert trace.answer is None and trace.error is not None
    assert trace.error.stage is Stage.GENERATION and trace.error.type == "NoAnswer"


@pytest.mark.parametrize("mode", ["condense_plus_context", "context", "condense_question"])
def test_chat_engines_are_refused_naming_what_to_pass(mode: str) -> None:
    index = VectorStoreIndex.from_documents(_docs(LONG), embed_model=EMBED)
    engine = index.as_chat_engine(chat_mode=mode, llm=MockLLM())
    with pytest.raises(UnsupportedLlamaIndexPipeline) as refused:
        LlamaIndexPipeline(engine, index=index)
    message = str(refused.value)
    assert type(engine).__name__ in message and "as_query_engine" in message


def test_citation_context_is_the_citations_mapped_back_to_their_chunks(tmp_path: Path) -> None:
    from llama_index.core.query_engine import CitationQueryEngine

    docs = _docs(LONG)
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=0).get_nodes_from_documents(docs)
    index = VectorStoreIndex(nodes, embed_model=EMBED)
    engine = CitationQueryEngine.from_args(
        index, llm=MockLLM(), similarity_top_k=2, citation_chunk_size=24, citation_chunk_overlap=0
    )
    run = _run(LlamaIndexPipeline(engine, index=index, documents=docs), tmp_path)
    corpus_texts = sorted(n.get_content() for n in nodes)
    corpus = [c for c in run.chunks.values() if not c.is_derived]
    assert sorted(c.text for c in corpus) == corpus_texts  # no "Source N:" node in the corpus
    record = run.records["q0"]
    context = [run.chunks[c.chunk_id] for c in record.context]
    assert len(context) > len(record.pool)  # each node was cut into several citations
    pool_ids = {c.chunk_id for c in record.pool}
    for n, chunk in enumerate(context, start=1):
        assert chunk.kind == "citation" and not chunk.text.startswith("Source")
        assert chunk.derived_from[0] in pool_ids
        base = run.chunks[chunk.derived_from[0]]
        assert base.start <= chunk.start and chunk.end <= base.end
        assert run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
        assert f"Source {n}:\n{chunk.text}" in record.answer  # what the LLM read, numbered
    assert Stage.RERANKING in run.manifest.stages
