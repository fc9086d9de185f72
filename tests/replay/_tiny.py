"""A tiny scripted run for the replay tests: one sample per verdict class, a real generator.

The retriever is scripted per question (so each loss is where the test wants it); the
reranker ranks by the question's words a chunk holds and keeps one; the generator is cofe's
extractive one. ``CALLS`` counts the stage calls, so a test can tell a replay that ran from
one that came from the cache or a previous pass.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

from cofe import EvalSample, ParsedDocument, write_evalset
from cofe.adapters import PythonPipeline
from cofe.evalset import SourceRef
from cofe.matching import STOPWORDS, strict_tokens
from cofe.pipeline import ExtractiveGenerator
from cofe.runlog import Chunk

CALLS: Counter[str] = Counter()

# doc -> its chunks' texts; a document's text is its chunks joined by one space
DOCS = {
    "france": ["France is a country in Europe.", "The capital of France is Paris."],
    "australia": ["Australia is a large country.", "The capital city of Australia is Canberra."],
    "japan": ["Japan is an island country.", "The capital of Japan is Tokyo."],
    "italy": ["Italy has many cities. The capital of Italy is Rome.", "Italy is in Europe."],
    # a chunk boundary inside the name: chunking cut the point
    "spain": ["The capital of Spain is Ma", "drid. Spain is sunny."],
}
JOIN = {"spain": ""}  # its chunks are two halves of one text: no space between them

QUESTIONS = {  # id -> (question, point, entity, the scripted pool)
    "pass": ("What is the capital of France?", "Paris", "France", ["france#1", "france#0"]),
    "retrieval": (
        "What is the capital city of Australia?",
        "Canberra",
        "Australia",
        ["australia#0", "france#0"],
    ),
    "reranking": (
        "Which city is the capital of Japan, an island country?",
        "Tokyo",
        "Japan",
        ["japan#0", "japan#1"],
    ),
    "generation": ("Which cities does Italy have?", "Rome", "Italy", ["italy#0", "italy#1"]),
    "chunking": ("What is the capital of Spain?", "Madrid", "Spain", ["spain#0", "spain#1"]),
}


def documents() -> list[ParsedDocument]:
    return [
        ParsedDocument(doc_id=d, source=f"{d}.txt", text=JOIN.get(d, " ").join(t))
        for d, t in DOCS.items()
    ]


def chunks() -> list[Chunk]:
    out = []
    for doc, texts in DOCS.items():
        at = 0
        for i, text in enumerate(texts):
            out.append(
                Chunk(chunk_id=f"{doc}#{i}", doc_id=doc, text=text, start=at, end=at + len(text))
            )
            at += len(text) + len(JOIN.get(doc, " "))
    return out


def samples() -> list[EvalSample]:
    out = []
    for ident, (query, point, entity, _) in QUESTIONS.items():
        doc = {"France": "france", "Australia": "australia", "Japan": "japan"}.get(entity)
        doc = doc or entity.lower()
        text = JOIN.get(doc, " ").join(DOCS[doc])
        out.append(
            EvalSample(
                id=ident,
                query=query,
                query_type="factual",
                coarse_keywords=[entity],
                fine_keywords=[[point]],
                reference_answer=point,
                source=SourceRef(doc=doc, start=0, end=len(text)),
            )
        )
    return out


def write(folder: Path) -> Path:
    path = folder / "evalset.jsonl"
    write_evalset(path, samples())
    return path


def _retrieve(query: str) -> list[str]:
    CALLS["retrieve"] += 1
    pools = {q: pool for q, _, _, pool in QUESTIONS.values()}
    return pools[query]


def _rerank(query: str, candidates: list[Chunk]) -> list[Chunk]:
    """The chunk holding most of the question's content words (the first of equals): keeps one."""
    CALLS["rerank"] += 1
    words = set(strict_tokens(query)) - STOPWORDS
    best = sorted(candidates, key=lambda c: -len(words & set(strict_tokens(c.text))))
    return best[:1]


_extract = ExtractiveGenerator()


def _generate(query: str, context: list[Chunk]) -> str:
    CALLS["generate"] += 1
    held = os.environ.get("COFE_TEST_HOLD_AFTER")
    if held and CALLS["generate"] > int(held):  # a pass a test kills part-way: it hangs here
        time.sleep(600)
    if os.environ.get("COFE_TEST_GENERATOR_DOWN"):
        raise ConnectionError("the generator's endpoint refused the connection")
    return _extract(query, context)


generate = _generate  # the generator alone, for --generator


def build() -> PythonPipeline:
    return PythonPipeline(
        chunks=chunks(),
        retrieve=_retrieve,
        rerank=_rerank,
        generate=_generate,
        top_k=1,
        name="tiny",
    )


class _OneCall:
    """A pipeline recorded as one call (query -> answer): no stage to replace."""

    def describe(self) -> dict[str, str]:
        return {"name": "one-call"}

    def prepare(self, documents: object, cache: object) -> object:
        raise AssertionError("never prepared: refused before")

    def answer(self, query: str) -> object:
        raise AssertionError("never asked")


def one_call() -> _OneCall:
    return _OneCall()


def build_llm() -> PythonPipeline:
    """The same pipeline, its generator an OpenAI-compatible endpoint ($COFE_TEST_BASE_URL)."""
    from cofe.llm import Endpoint
    from cofe.pipeline import OpenAIGenerator

    endpoint = Endpoint(
        base_url=os.environ["COFE_TEST_BASE_URL"],
        model="m",
        api_key="k",
        timeout=2.0,
        max_retries=0,
    )
    return PythonPipeline(
        chunks=chunks(),
        retrieve=_retrieve,
        rerank=_rerank,
        generate=OpenAIGenerator(endpoint),
        top_k=1,
        name="tiny-llm",
    )
