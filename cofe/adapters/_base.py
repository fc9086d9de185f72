"""The pipeline protocol the runner drives, and a base class for pipelines made of stage calls."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from cofe._cache import Cache
from cofe._errors import ConfigurationError
from cofe.adapters._draft import ChunkRegistry, RecordDraft, StageFailed
from cofe.runlog import Chunk, ParsedDocument, RankedChunk, Stage, staged, stages_from, top_k_from


@dataclass(frozen=True)
class PipelineShape:
    """What the run's manifest records so that scoring need not guess (``Manifest.top_k``
    and ``Manifest.stages``); ``None`` means unknown."""

    top_k: int | None = None
    stages: tuple[Stage, ...] | None = None


@runtime_checkable
class Pipeline(Protocol):
    """What ``cofe run`` needs from a pipeline.

    ``prepare`` chunks and indexes the parsed documents (or reads the chunks
    of an index the pipeline already has) and returns the chunk registry;
    ``answer`` answers one query and says what each stage produced.

    Optionally, ``shape() -> PipelineShape`` says how many of the pool's
    chunks the generator receives and which stages the pipeline has; without
    it, :func:`pipeline_shape` reads ``top_k`` and ``stages`` from ``describe()``.
    """

    def describe(self) -> dict[str, Any]: ...

    def prepare(
        self, documents: Sequence[ParsedDocument], cache: Cache | None
    ) -> ChunkRegistry: ...

    def answer(self, query: str) -> RecordDraft: ...


def pipeline_shape(pipeline: Any, described: dict[str, Any]) -> PipelineShape:
    """The pipeline's own ``shape()``, else ``top_k``/``stages`` of its description, else unknown."""
    shape = getattr(pipeline, "shape", None)
    if callable(shape):
        given = shape()
        if isinstance(given, PipelineShape):
            return given
    stages = stages_from(described.get("stages"))
    return PipelineShape(
        top_k=top_k_from(described.get("top_k")),
        stages=tuple(stages) if stages is not None else None,
    )


class StagedPipeline:
    """A pipeline whose stages are separate calls; any stage may be ``None``.

    Subclasses (or :class:`PythonPipeline`) set ``retrieve``, ``rerank`` and
    ``generate``; ``answer`` times each, records its output and stops at the
    first stage that raises. Without a reranker the generator receives the
    pool's first ``top_k`` chunks and the record's ``context`` stays null
    (the manifest's ``top_k`` says how many).
    """

    retrieve: Callable[[str], Sequence[Any]] | None = None
    rerank: Callable[[str, list[Chunk]], Sequence[Any]] | None = None
    generate: Callable[[str, list[Chunk]], str] | None = None
    top_k: int = 4

    def __init__(self) -> None:
        self.registry = ChunkRegistry()

    def describe(self) -> dict[str, Any]:
        return {}

    def shape(self) -> PipelineShape:
        stages = staged(
            retrieve=self.retrieve is not None,
            rerank=self.rerank is not None,
            generate=self.generate is not None,
        )
        return PipelineShape(top_k=self.top_k, stages=tuple(stages))

    def prepare(self, documents: Sequence[ParsedDocument], cache: Cache | None) -> ChunkRegistry:
        return self.registry

    def _chunks(self, ranked: list[RankedChunk]) -> list[Chunk]:
        return [self.registry.by_id[r.chunk_id] for r in ranked]

    def answer(self, query: str) -> RecordDraft:
        trace = RecordDraft()
        try:
            given: list[RankedChunk] = []
            if self.retrieve is not None:
                with trace.stage(Stage.RETRIEVAL):
                    trace.pool = self.registry.ranked(self.retrieve(query))
                given = trace.pool[: self.top_k]
            if self.rerank is not None and trace.pool is not None:
                with trace.stage(Stage.RERANKING):
                    trace.context = self.registry.ranked(
                        self.rerank(query, self._chunks(trace.pool))
                    )
                given = trace.context
            if self.generate is not None:
                with trace.stage(Stage.GENERATION):
                    answer = self.generate(query, self._chunks(given))
                    if not isinstance(answer, str):
                        raise TypeError(f"generate returned {type(answer).__name__}, not str")
                    trace.answer = answer
        except StageFailed:
            pass  # the trace holds the error
        return trace


def _name(fn: Callable[..., Any] | None) -> str | None:
    if fn is None:
        return None
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


class PythonPipeline(StagedPipeline):
    """A pipeline from plain callables; absent stages are skipped, not failed.

    - ``chunk(doc: ParsedDocument) -> list[str | Chunk | dict]``, or ``chunks=``
      a ready corpus (a list of :class:`Chunk`);
    - ``index(chunks: list[Chunk])``: called once with the corpus;
    - ``retrieve(query) -> ranked items``;
    - ``rerank(query, candidates: list[Chunk]) -> ranked items``;
    - ``generate(query, context: list[Chunk]) -> str``.

    A ranked item is a chunk id, a :class:`Chunk`, a chunk text, a dict with
    ``chunk_id``/``text``/``score``, any object with those attributes, or an
    ``(item, score)`` pair. A *derived item* (a summary, an entity, a relation:
    text built from corpus chunks) is a :class:`Chunk` or dict with ``kind`` and
    ``derived_from`` (the chunk ids it was built from), e.g. ``{"text": "...",
    "kind": "summary", "derived_from": ["d1#0", "d1#1"], "score": 0.8}``.
    """

    def __init__(
        self,
        *,
        chunk: Callable[[ParsedDocument], Sequence[Any]] | None = None,
        chunks: Sequence[Chunk] | None = None,
        index: Callable[[list[Chunk]], None] | None = None,
        retrieve: Callable[[str], Sequence[Any]] | None = None,
        rerank: Callable[[str, list[Chunk]], Sequence[Any]] | None = None,
        generate: Callable[[str, list[Chunk]], str] | None = None,
        top_k: int = 4,
        name: str = "python",
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if chunk is not None and chunks is not None:
            raise ConfigurationError(
                "give either chunk= (a function) or chunks= (a corpus), not both"
            )
        self._chunk, self._given, self._index = chunk, chunks, index
        self.retrieve, self.rerank, self.generate = retrieve, rerank, generate
        self.top_k, self.name, self.config = top_k, name, dict(config or {})

    def describe(self) -> dict[str, Any]:
        stages = {
            "chunk": _name(self._chunk),
            "retrieve": _name(self.retrieve),
            "rerank": _name(self.rerank),
            "generate": _name(self.generate),
        }
        return {"name": self.name, "stages": stages, "top_k": self.top_k, **self.config}

    def prepare(self, documents: Sequence[ParsedDocument], cache: Cache | None) -> ChunkRegistry:
        if self._given is not None:
            corpus = list(self._given)
        elif self._chunk is not None:
            corpus = []
            for doc in documents:
                for i, item in enumerate(self._chunk(doc)):
                    corpus.append(_as_chunk(item, doc, i))
        else:
            corpus = []
        self.registry = ChunkRegistry(corpus)
        if self._index is not None:
            self._index(list(corpus))
        return self.registry


def _as_chunk(item: Any, doc: ParsedDocument, i: int) -> Chunk:
    if isinstance(item, Chunk):
        return item
    if isinstance(item, str):
        start = doc.text.find(item)
        found = start >= 0
        return Chunk(
            chunk_id=f"{doc.doc_id}#{i}",
            doc_id=doc.doc_id,
            text=item,
            start=start if found else None,
            end=start + len(item) if found else None,
        )
    if isinstance(item, dict):
        return Chunk.model_validate({"chunk_id": f"{doc.doc_id}#{i}", "doc_id": doc.doc_id, **item})
    raise TypeError(f"chunk() returned {type(item).__name__}; expected str, dict or Chunk")


def answer_concurrently(
    aanswer: Callable[[str], Awaitable[RecordDraft]],
    queries: Sequence[str],
    concurrency: int,
    on_trace: Callable[[int, RecordDraft], None],
) -> None:
    """Answer ``queries`` through ``aanswer`` on one event loop, at most ``concurrency`` at a
    time; ``on_trace(i, trace)`` as each finishes (in the caller's thread). What a runner
    calls to drive an async pipeline with asyncio."""

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int, query: str) -> None:
            async with gate:
                trace = await aanswer(query)
            on_trace(i, trace)

        await asyncio.gather(*(one(i, q) for i, q in enumerate(queries)))

    asyncio.run(main())
