"""The LlamaIndex adapter on real LlamaIndex pipelines, observed through its instrumentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cofe import read_run, score_run
from cofe.runlog import Stage
from cofe.runner import run_pipeline
from cofe.testing import Fault, ScriptedOpenAI

li = pytest.importorskip("llama_index.core")
from llama_index.core import Document, Settings, VectorStoreIndex  # noqa: E402
from llama_index.core.node_parser import SentenceSplitter  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402

from cofe.adapters import LlamaIndexPipeline  # noqa: E402
from tests.conftest import CAPITALS  # noqa: E402


class ReverseTopTwo(BaseNodePostprocessor):
    """A user's reranker: keeps two nodes, in reverse order (so the change is visible)."""

    def _postprocess_nodes(self, nodes, query_bundle=None):
        return list(reversed(nodes[:2]))


@pytest.fixture(scope="module")
def embed_model():
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from cofe.pipeline._embed import minilm_path

    return HuggingFaceEmbedding(model_name=minilm_path(), device="cpu")


@pytest.fixture
def llama_docs() -> list[Document]:
    return [
        Document(text=t, id_=name, metadata={"file_name": name}) for name, t in CAPITALS.items()
    ]


def _llm(base_url: str, max_retries: int = 0):
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(
        model="scripted",
        api_base=base_url,
        api_key="none",
        is_chat_model=True,
        max_retries=max_retries,
        timeout=10,
    )


def test_query_engine_with_postprocessor_records_all_four_stages(
    tmp_path: Path, small_evalset: Path, embed_model, llama_docs
) -> None:
    nodes = SentenceSplitter(chunk_size=32, chunk_overlap=0).get_nodes_from_documents(llama_docs)
    index = VectorStoreIndex(nodes, embed_model=embed_model)
    with ScriptedOpenAI(lambda messages, request: "It was finished in 1889.") as server:
        engine = index.as_query_engine(
            similarity_top_k=4, node_postprocessors=[ReverseTopTwo()], llm=_llm(server.base_url)
        )
        pipeline = LlamaIndexPipeline(engine, index=index, documents=llama_docs)
        run_pipeline(pipeline, small_evalset, tmp_path / "run", progress=False)
        prompts = [r["messages"][-1]["content"] for r in server.requests]
    run = read_run(tmp_path / "run")
    assert run.problems == [] and len(run.documents) == 3 and len(run.chunks) == len(nodes)
    record = run.records["q1"]
    assert len(record.pool) == 4 and len(record.context) == 2
    # the context is the postprocessor's output: the pool's top two, reversed
    assert [c.chunk_id for c in record.context] == [c.chunk_id for c in reversed(record.pool[:2])]
    assert record.answer == "It was finished in 1889."
    assert set(record.latency) == {Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION}
    assert any("1889" in p for p in prompts)  # the LLM really got the retrieved text
    assert run.manifest.pipeline["postprocessors"] == ["ReverseTopTwo"]
    assert run.manifest.stages == [
        Stage.PARSE,
        Stage.CHUNKING,
        Stage.RETRIEVAL,
        Stage.RERANKING,
        Stage.GENERATION,
    ]
    assert run.manifest.top_k == 4  # the retriever's similarity_top_k
    chunk = run.chunks[record.pool[0].chunk_id]
    assert (
        chunk.doc_id in CAPITALS
        and run.documents[chunk.doc_id].text[chunk.start : chunk.end] == chunk.text
    )
    result = score_run(tmp_path / "run")
    assert len(result.verdicts) == 3 and result.scores["measure"].str.startswith("Rerank").any()


def test_bm25_retriever_engine_without_postprocessors_has_no_reranking_stage(
    tmp_path: Path, small_evalset: Path, llama_docs
) -> None:
    from llama_index.retrievers.bm25 import BM25Retriever

    nodes = SentenceSplitter(chunk_size=32, chunk_overlap=0).get_nodes_from_documents(llama_docs)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=3)
    with ScriptedOpenAI(lambda m, r: "Berlin.") as server:
        from llama_index.core import get_response_synthesizer

        engine = RetrieverQueryEngine(
            retriever, get_response_synthesizer(llm=_llm(server.base_url))
        )
        run_pipeline(
            LlamaIndexPipeline(engine, nodes=nodes), small_evalset, tmp_path / "run", progress=False
        )
    run = read_run(tmp_path / "run")
    record = run.records["q2"]
    # no postprocessor: the synthesizer got the whole pool, and that is recorded as the context
    assert [c.chunk_id for c in record.context] == [c.chunk_id for c in record.pool]
    assert len(record.pool) == 3 and Stage.RERANKING not in record.latency
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    assert run.manifest.top_k == 3
    assert "Berlin" in run.chunks[record.pool[0].chunk_id].text and record.answer == "Berlin."
    scores = score_run(tmp_path / "run").scores
    assert not scores["measure"].str.startswith("Rerank").any()


def test_a_bare_retriever_records_the_pool_only(tmp_path, small_evalset, embed_model, llama_docs):
    index = VectorStoreIndex.from_documents(llama_docs, embed_model=embed_model)
    pipeline = LlamaIndexPipeline(index.as_retriever(similarity_top_k=2), index=index)
    run_pipeline(pipeline, small_evalset, tmp_path / "run", progress=False)
    run = read_run(tmp_path / "run")
    record = run.records["q3"]
    assert len(record.pool) == 2 and record.answer is None and record.context is None
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL]
    assert run.manifest.top_k == 2


def _mock_engine_run(tmp_path: Path, evalset_for):
    """A real VectorStoreIndex with LlamaIndex's MockEmbedding and MockLLM (which answers with
    its prompt), similarity_top_k=10 and no postprocessor. ``evalset_for(pool_texts)`` writes
    the eval set once the (deterministic) retrieval order is known."""
    from llama_index.core import get_response_synthesizer
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import TextNode

    facts = [f"Archive note {i}: the vault code is {1000 + 37 * i}." for i in range(14)]
    nodes = [
        TextNode(text=t, id_=f"note-{i}", metadata={"file_name": "notes.txt"})
        for i, t in enumerate(facts)
    ]
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    synthesizer = get_response_synthesizer(llm=MockLLM(), response_mode="compact")
    engine = RetrieverQueryEngine(index.as_retriever(similarity_top_k=10), synthesizer)
    order = [n.node.get_content() for n in index.as_retriever(similarity_top_k=10).retrieve("q")]
    evalset = evalset_for(order)
    run_pipeline(LlamaIndexPipeline(engine, index=index), evalset, tmp_path / "run", progress=False)
    return read_run(tmp_path / "run"), order


def test_an_engine_without_postprocessor_records_the_ten_nodes_its_synthesizer_got(
    tmp_path: Path,
) -> None:
    from cofe import EvalSample, write_evalset

    def evalset_for(order: list[str]) -> Path:
        code = order[6].split()[-1].rstrip(".")  # the fact at rank 7 of 10
        path = tmp_path / "evalset.jsonl"
        write_evalset(
            path,
            [
                EvalSample(
                    id="q",
                    query="What is the vault code?",
                    coarse_keywords=["vault code"],
                    fine_keywords=[[code]],
                    reference_answer=code,
                )
            ],
        )
        return path

    run, order = _mock_engine_run(tmp_path, evalset_for)
    assert run.problems == []
    record = run.records["q"]
    assert len(record.pool) == 10 and record.context is not None and len(record.context) == 10
    assert [run.chunks[c.chunk_id].text for c in record.context] == order
    # MockLLM answers with its prompt: every recorded context chunk is what the synthesizer got
    positions = [record.answer.index(run.chunks[c.chunk_id].text) for c in record.context]
    assert positions == sorted(positions)
    assert run.manifest.top_k == 10
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    # the fact at rank 7 reached the generator: it is not "below the cutoff"
    result = score_run(tmp_path / "run")
    assert result.verdicts.set_index("sample_id")["verdict"]["q"] == "pass"
    assert result.shape["top_k"] == 10
    assert not result.scores["measure"].str.startswith("Rerank").any()


class _Opaque:
    def query(self, text):  # pragma: no cover - never called
        raise AssertionError


def test_an_engine_whose_parts_cannot_be_read_has_an_unknown_shape() -> None:
    shape = LlamaIndexPipeline(_Opaque()).shape()
    assert shape.top_k is None and shape.stages is None


def test_an_llm_failure_is_a_generation_error_and_the_run_goes_on(
    tmp_path, small_evalset, embed_model, llama_docs
) -> None:
    index = VectorStoreIndex.from_documents(llama_docs, embed_model=embed_model)
    with ScriptedOpenAI(lambda m, r: "fine") as server:
        server.inject(Fault(status=500))  # the first query's LLM call fails (no retries)
        engine = index.as_query_engine(similarity_top_k=2, llm=_llm(server.base_url))
        run_pipeline(
            LlamaIndexPipeline(engine, index=index),
            small_evalset,
            tmp_path / "run",
            concurrency=1,
            progress=False,
        )
    records = read_run(tmp_path / "run").records
    errors = [r for r in records.values() if r.error is not None]
    assert len(errors) == 1 and errors[0].error.stage is Stage.GENERATION
    assert errors[0].pool is not None and "InternalServerError" in errors[0].error.type
    assert sum(r.answer == "fine" for r in records.values()) == 2


def test_settings_are_left_as_the_user_had_them() -> None:
    # the adapter must not need (or change) global LlamaIndex settings
    before = Settings._llm
    LlamaIndexPipeline(_Opaque())
    assert Settings._llm is before
