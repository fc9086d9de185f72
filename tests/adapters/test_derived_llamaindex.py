"""RAPTOR trees and property-graph retrievers, built for real and recorded by the LlamaIndex
adapter: summaries and triplets are derived items of the corpus chunks they came from."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from cofe import EvalSample, read_run, score_run, write_evalset
from cofe.runner import run_pipeline
from cofe.testing import ScriptedOpenAI

pytest.importorskip("llama_index.core")
from llama_index.core import Document
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.query_engine import RetrieverQueryEngine

from cofe.adapters import LlamaIndexPipeline

DOCS = {
    "broncos.txt": "Super Bowl 50 was played in 2016 at Levi's Stadium. "
    "The Denver Broncos won the game 24–10 against the Carolina Panthers.",
    "coldplay.txt": "Coldplay headlined the halftime show. Beyonce and Bruno Mars joined them.",
}


class WordEmbedding(BaseEmbedding):
    """Hashed bag of words: texts sharing words are near (deterministic, offline, no model)."""

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * 64
        for word in re.findall(r"\w+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        norm = sum(v * v for v in vector) ** 0.5 or 1.0
        return [v / norm for v in vector]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


def _llm(base_url: str):
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(
        model="scripted",
        api_base=base_url,
        api_key="none",
        is_chat_model=True,
        max_retries=0,
        timeout=10,
    )


def _evalset(path: Path, query: str) -> Path:
    write_evalset(
        path,
        [
            EvalSample(
                id="q",
                query=query,
                query_type="factual",
                coarse_keywords=["Super Bowl 50"],
                fine_keywords=[["Denver Broncos"]],
                reference_answer="The Denver Broncos.",
                source={"doc": "broncos.txt"},
            )
        ],
    )
    return path


def _documents() -> list[Document]:
    return [Document(text=t, id_=name, metadata={"file_name": name}) for name, t in DOCS.items()]


def _run(pipeline, tmp_path: Path, query: str):
    evalset = _evalset(tmp_path / "evalset.jsonl", query)
    run_pipeline(pipeline, evalset, tmp_path / "run", concurrency=1, progress=False)
    run = read_run(tmp_path / "run")
    assert run.problems == []
    return run, score_run(tmp_path / "run")


def _reply(summary: str, triplets: str, answer: str):
    def reply(messages, request) -> str:
        prompt = messages[-1]["content"]
        if "knowledge triplets" in prompt:  # what each chunk says, less who won
            return triplets if "Denver" in prompt else "(Coldplay, headlined, halftime show)"
        if "synonyms or related keywords" in prompt:
            return "KEYWORDS: Super Bowl 50^2016"
        if "Summarize the provided text" in prompt:
            return summary
        return answer

    return reply


@pytest.mark.slow
@pytest.mark.parametrize("faithful", [False, True])
def test_a_raptor_tree_records_its_summaries_as_derived_from_their_chunks(tmp_path, faithful):
    from cofe.adapters import raptor_retriever

    summary = "Summary: Super Bowl 50 was played in 2016 at Levi's Stadium" + (
        ", won by the Denver Broncos." if faithful else "."
    )
    with ScriptedOpenAI(_reply(summary, "", "I don't know.")) as server:
        llm = _llm(server.base_url)
        retriever = raptor_retriever()(
            _documents(),
            llm=llm,
            embed_model=WordEmbedding(),
            tree_depth=1,
            similarity_top_k=1,
            transformations=[SentenceSplitter(chunk_size=24, chunk_overlap=0)],
            verbose=False,
        )
        engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
        pipeline = LlamaIndexPipeline(engine, documents=_documents())
        run, result = _run(
            pipeline, tmp_path, "Summary: Super Bowl 50 played in 2016 Levi's Stadium"
        )
    summaries = [c for c in run.chunks.values() if c.kind == "summary"]
    corpus = [c for c in run.chunks.values() if not c.is_derived]
    assert len(summaries) == 1 and summaries[0].text == summary
    # the one cluster summarises every leaf; the leaves alone are the corpus
    assert sorted(summaries[0].derived_from) == sorted(c.chunk_id for c in corpus)
    assert {c.doc_id for c in corpus} == set(DOCS) and summaries[0].doc_id == "(derived)"
    record = run.records["q"]
    assert [c.chunk_id for c in record.context] == [summaries[0].chunk_id]
    assert record.pool == record.context  # collapsed tree: one retrieval, no reranking
    assert run.manifest.stages[-1] == "generation" and "reranking" not in run.manifest.stages
    verdict = result.verdicts.set_index("sample_id").loc["q"]
    if faithful:
        assert verdict["verdict"] == "refused"  # the summary held it; the generator declined
    else:
        assert verdict["verdict"] == "derivation_lost"
        leaf = next(c.chunk_id for c in corpus if "Denver Broncos" in c.text)
        assert f"built from chunk {leaf!r}" in verdict["explanation"]
    assert result.view().refusal_rates()["refused"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("include_text", [False, True])
def test_a_property_graph_records_triplets_derived_from_their_text_chunks(tmp_path, include_text):
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.indices.property_graph import SimpleLLMPathExtractor

    triplets = (
        "(Super Bowl 50, was played in, 2016)\n(Super Bowl 50, was played at, Levi's Stadium)"
    )
    with ScriptedOpenAI(_reply("", triplets, "Super Bowl 50 was played in 2016.")) as server:
        llm = _llm(server.base_url)
        index = PropertyGraphIndex.from_documents(
            _documents(),
            llm=llm,
            embed_model=WordEmbedding(),
            show_progress=False,
            use_async=False,
            kg_extractors=[SimpleLLMPathExtractor(llm=llm)],
            transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)],
        )
        engine = RetrieverQueryEngine.from_args(
            index.as_retriever(include_text=include_text), llm=llm
        )
        run, result = _run(
            LlamaIndexPipeline(engine, documents=_documents()), tmp_path, "Who won Super Bowl 50?"
        )
    corpus = [c for c in run.chunks.values() if not c.is_derived]
    assert {c.doc_id for c in corpus} == set(DOCS)  # the text units, never the entities
    assert not any(" -> " in c.text for c in corpus)
    context = [run.chunks[c.chunk_id] for c in run.records["q"].context]
    assert context and all(c.is_derived for c in context)
    leaf = next(c for c in corpus if "Denver Broncos" in c.text)
    for item in context:
        source = run.chunks[item.derived_from[0]]
        assert len(item.derived_from) == 1 and item.doc_id == source.doc_id
        assert (source == leaf) == ("Super bowl 50" in item.text)
    verdict = result.verdicts.set_index("sample_id").loc["q"]
    if include_text:  # each triplet handed on with its chunk's text: nothing was dropped
        assert {c.kind for c in context} == {"replaced"}
        assert verdict["verdict"] == "not_in_answer"
    else:
        assert {c.kind for c in context} == {"relation"}
        assert {c.text for c in context} >= {"Super bowl 50 -> Was played in -> 2016"}
        assert verdict["verdict"] == "derivation_lost"
        assert f"built from chunk {leaf.chunk_id!r}" in verdict["explanation"]
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["schema_version"] == 3
