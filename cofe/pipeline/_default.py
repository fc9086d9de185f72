"""The built-in pipeline: unstructured → LlamaIndex splitter → BM25/dense/hybrid → reranker → generator."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cofe._cache import Cache
from cofe.adapters import ChunkRegistry, StagedPipeline
from cofe.llm import Endpoint
from cofe.pipeline._chunk import Splitter, check_chunking, split_documents
from cofe.pipeline._embed import Embedder, language_mismatch
from cofe.pipeline._generate import ExtractiveGenerator, OpenAIGenerator
from cofe.pipeline._rerank import CrossEncoderReranker, LLMReranker, MiniLMReranker, Reranker
from cofe.pipeline._retrieve import RetrieverKind, make_retriever
from cofe.runlog import Chunk, ParsedDocument

CROSS_ENCODER = "cross-encoder:"


class PipelineConfig(BaseModel):
    """Every knob of the default pipeline; all of it goes into the run's manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    splitter: Splitter = Splitter.SENTENCE
    chunk_size: int = Field(default=256, description="tokens per chunk (cl100k)")
    chunk_overlap: int = 20
    tables: bool = Field(
        default=False,
        description="table-aware chunking: a table is cut by rows (never inside a row), its "
        "header row repeated at the top of each piece",
    )
    retriever: RetrieverKind = RetrieverKind.BM25
    reranker: str = Field(default="none", description="none | minilm | llm | cross-encoder:PATH")
    candidates: int = Field(default=30, ge=1, description="size of the retrieved pool")
    top_k: int = Field(default=4, ge=1, description="chunks given to the generator")
    generator: Literal["extractive", "openai"] = "extractive"

    @field_validator("reranker")
    @classmethod
    def _known_reranker(cls, value: str) -> str:
        if value in ("none", "minilm", "llm") or (
            value.startswith(CROSS_ENCODER) and len(value) > len(CROSS_ENCODER)
        ):
            return value
        raise ValueError(f"unknown reranker {value!r}: use none, minilm, llm or cross-encoder:PATH")

    def model_post_init(self, context: Any) -> None:
        check_chunking(self.chunk_size, self.chunk_overlap)
        if self.top_k > self.candidates:
            raise ValueError(f"top_k ({self.top_k}) exceeds the pool size ({self.candidates})")


class DefaultPipeline(StagedPipeline):
    """Real offline components; an endpoint is needed only for ``generator="openai"`` or ``reranker="llm"``."""

    rerank: Reranker | None
    generate: OpenAIGenerator | ExtractiveGenerator

    def __init__(self, config: PipelineConfig | None = None, endpoint: Endpoint | None = None):
        super().__init__()
        self.config = config = config or PipelineConfig()
        needs_endpoint = config.generator == "openai" or config.reranker == "llm"
        if needs_endpoint and endpoint is None:
            endpoint = Endpoint.from_env()
        self.endpoint = endpoint
        self.top_k = config.top_k
        self.retriever = make_retriever(config.retriever)
        # StagedPipeline.answer calls these two; None means the stage is absent
        if config.reranker == "none":
            self.rerank = None
        elif config.reranker == "minilm":
            self.rerank = MiniLMReranker(config.top_k)
        elif config.reranker == "llm":
            assert endpoint is not None  # needs_endpoint: taken from the environment above
            self.rerank = LLMReranker(endpoint, config.top_k)
        else:
            self.rerank = CrossEncoderReranker(config.reranker[len(CROSS_ENCODER) :], config.top_k)
        if config.generator == "openai":
            assert endpoint is not None  # needs_endpoint: taken from the environment above
            self.generate = OpenAIGenerator(endpoint)
        else:
            self.generate = ExtractiveGenerator()
        self.timings: dict[str, float] = {}

    def describe(self) -> dict[str, Any]:
        described = {"name": "default", **self.config.model_dump(mode="json")}
        if not self.config.tables:  # as before the option: runs made then still resume
            del described["tables"]
        described.update(self.generate.describe())
        if self.rerank is not None:
            described.update(self.rerank.describe())
        return described

    def check_queries(self, queries: list[str]) -> list[str]:
        """Warnings about these questions before any is answered: an embedding model whose
        languages do not cover theirs (CJK questions, the English-only MiniLM)."""
        uses: dict[int, tuple[Embedder, list[str]]] = {}
        parts = getattr(self.retriever, "parts", (self.retriever,))
        for part, use in [*((p, "dense retrieval") for p in parts), (self.rerank, "reranking")]:
            embedder = getattr(part, "embedder", None)
            if isinstance(embedder, Embedder):
                uses.setdefault(id(embedder), (embedder, []))[1].append(use)
        found = []
        for embedder, used in uses.values():
            message = language_mismatch(
                embedder.name, embedder.languages, queries, " and ".join(used)
            )
            if message:
                found.append(message)
        return found

    @property
    def usage(self) -> dict[str, dict[str, float]]:
        """LLM usage per stage that calls one (``reranking``, ``generation``), for the runner.

        Calls, cache hits, repairs, failures, tokens and seconds, counted since
        this pipeline was made (a resumed run counts only its own calls).
        """
        stages = {"reranking": self.rerank, "generation": self.generate}
        return {
            stage: part.usage.to_dict()
            for stage, part in stages.items()
            if isinstance(part, LLMReranker | OpenAIGenerator)
        }

    def prepare(self, documents: Sequence[ParsedDocument], cache: Cache | None) -> ChunkRegistry:
        started = time.perf_counter()
        chunks = split_documents(
            list(documents),
            splitter=self.config.splitter,
            chunk_size=self.config.chunk_size,
            chunk_overlap=self.config.chunk_overlap,
            cache=cache,
            tables=self.config.tables,
        )
        chunked = time.perf_counter()
        self.registry = ChunkRegistry(chunks)
        self.retriever.index(chunks, cache)
        if self.rerank is not None:
            self.rerank.prepare(chunks, cache)
        if isinstance(self.generate, OpenAIGenerator):
            self.generate.prepare(chunks, cache)  # its replies are cached with the run's cache
        self.timings = {"chunking": chunked - started, "indexing": time.perf_counter() - chunked}
        return self.registry

    def retrieve(self, query: str) -> list[tuple[Chunk, float]]:
        chunks = self.registry.chunks
        return [(chunks[i], s) for i, s in self.retriever.search(query, self.config.candidates)]
