"""Record every stage of an existing LlamaIndex pipeline through LlamaIndex's instrumentation.

The user's code is not changed: cofe attaches one event handler to
LlamaIndex's root dispatcher and, while it answers a query, listens for

- ``RetrievalStart/EndEvent`` of the outermost retrieval: the ranked nodes
  *before* any node postprocessor (the pool);
- ``SynthesizeStart/EndEvent``: the response; its ``source_nodes`` are the
  nodes the synthesizer was given, i.e. *after* the postprocessors (the context).
  They are recorded whenever the engine synthesizes, with or without
  postprocessors: what the generator saw is never left to a default top-K.

The run's manifest says which stages the engine has (``reranking`` only with
node postprocessors, ``generation`` only with a synthesizer) and ``top_k``,
the retriever's ``similarity_top_k`` when it can be read. The time between
the end of retrieval and the start of synthesis is the postprocessors'
(reranking) time. Events reach the handler in the thread that emitted them,
so a context variable tells concurrent queries apart.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.retrieval import (
    RetrievalEndEvent,
    RetrievalStartEvent,
)
from llama_index.core.instrumentation.events.synthesis import (
    SynthesizeEndEvent,
    SynthesizeStartEvent,
)

from cofe._cache import Cache
from cofe.adapters._base import PipelineShape
from cofe.adapters._trace import ChunkRegistry, Trace
from cofe.runlog import Chunk, ParsedDocument, RankedChunk, Stage, StageError
from cofe.runlog._compat import top_k_from


@dataclass
class _Recording:
    depth: int = 0
    retrieval_start: float | None = None
    retrieval_end: float | None = None
    pool: list | None = None
    synth_start: float | None = None
    synth_end: float | None = None
    response: Any = None


_CURRENT: contextvars.ContextVar[_Recording | None] = contextvars.ContextVar(
    "cofe_llamaindex_recording", default=None
)


class _CofeHandler(BaseEventHandler):
    @classmethod
    def class_name(cls) -> str:
        return "CofeStageRecorder"

    def handle(self, event: Any, **kwargs: Any) -> None:
        rec = _CURRENT.get()
        if rec is None:
            return
        now = time.perf_counter()
        if isinstance(event, RetrievalStartEvent):
            if rec.depth == 0 and rec.retrieval_start is None:
                rec.retrieval_start = now
            rec.depth += 1
        elif isinstance(event, RetrievalEndEvent):
            rec.depth = max(rec.depth - 1, 0)
            if rec.depth == 0 and rec.pool is None:  # the outermost retrieval, first time
                rec.pool, rec.retrieval_end = list(event.nodes), now
        elif isinstance(event, SynthesizeStartEvent):
            if rec.synth_start is None:
                rec.synth_start = now
        elif isinstance(event, SynthesizeEndEvent):
            rec.synth_end, rec.response = now, event.response


_HANDLER_LOCK = threading.Lock()
_HANDLER: _CofeHandler | None = None


def _install_handler() -> None:
    global _HANDLER
    with _HANDLER_LOCK:
        if _HANDLER is None:
            _HANDLER = _CofeHandler()
            get_dispatcher().add_event_handler(_HANDLER)


def _doc_key(node: Any) -> str:
    meta = getattr(node, "metadata", None) or {}
    return str(getattr(node, "ref_doc_id", None) or meta.get("file_name") or "(unknown)")


def node_chunk(node: Any) -> Chunk:
    """A LlamaIndex node as a chunk, with an id made from its content (stable across rebuilds)."""
    text = node.get_content()
    doc = _doc_key(node)
    start, end = getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    where = f"@{start}" if start is not None else ""
    meta = getattr(node, "metadata", None) or {}
    keep = {k: v for k, v in meta.items() if isinstance(v, str | int | float | bool)}
    return Chunk(
        chunk_id=f"{doc}{where}:{digest}",
        doc_id=doc,
        text=text,
        start=start if start is not None and start >= 0 else None,
        end=end if end is not None and end >= 0 else None,
        meta=keep,
    )


def document_record(doc: Any) -> ParsedDocument:
    meta = getattr(doc, "metadata", None) or {}
    return ParsedDocument(
        doc_id=str(doc.doc_id),
        source=str(meta.get("file_name") or meta.get("file_path") or doc.doc_id),
        text=doc.get_content(),
        meta={"reader": "llama-index"},
    )


class LlamaIndexPipeline:
    """Observe a LlamaIndex query engine (or a bare retriever) without changing it.

    ``index=`` (its docstore) or ``nodes=`` gives the chunk corpus; ``documents=``
    the LlamaIndex documents it was built from (for the parse stage).
    """

    def __init__(
        self,
        engine: Any,
        *,
        index: Any = None,
        nodes: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        name: str = "llama-index",
    ) -> None:
        _install_handler()
        self.engine = engine
        self.is_retriever = isinstance(engine, BaseRetriever)
        self._index, self._nodes, self._documents = index, nodes, documents
        self.name = name
        self.registry = ChunkRegistry()
        self.documents: list[ParsedDocument] | None = (
            [document_record(d) for d in documents] if documents is not None else None
        )
        self._ids: dict[str, str] = {}

    def _retriever(self) -> Any:
        return self.engine if self.is_retriever else getattr(self.engine, "retriever", None)

    def _similarity_top_k(self) -> Any:
        retriever = self._retriever()
        return getattr(retriever, "similarity_top_k", None) or getattr(
            retriever, "_similarity_top_k", None
        )

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"name": self.name, "engine": type(self.engine).__name__}
        retriever = getattr(self.engine, "retriever", None)
        if retriever is not None:
            described["retriever"] = type(retriever).__name__
            top_k = self._similarity_top_k()
            if top_k is not None:
                described["similarity_top_k"] = top_k
        posts = getattr(self.engine, "_node_postprocessors", None)
        if posts is not None:
            described["postprocessors"] = [type(p).__name__ for p in posts]
        synth = getattr(self.engine, "_response_synthesizer", None)
        if synth is not None:
            described["synthesizer"] = type(synth).__name__
            llm = getattr(synth, "_llm", None)
            if llm is not None:
                described["llm"] = getattr(llm, "model", None) or type(llm).__name__
        return described

    def shape(self) -> PipelineShape:
        """``top_k``: the retriever's ``similarity_top_k``; ``stages``: reranking only with node
        postprocessors, generation only with a synthesizer; unknown for an engine whose parts
        cannot be read."""
        top_k = top_k_from(self._similarity_top_k())
        corpus = (Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL)
        if self.is_retriever:
            return PipelineShape(top_k=top_k, stages=corpus)
        posts = self._has_postprocessors()
        synth = getattr(self.engine, "_response_synthesizer", None)
        if posts is None or synth is None:
            return PipelineShape(top_k=top_k, stages=None)
        return PipelineShape(
            top_k=top_k,
            stages=(*corpus, *((Stage.RERANKING,) if posts else ()), Stage.GENERATION),
        )

    def _corpus_nodes(self) -> list[Any]:
        if self._nodes is not None:
            return list(self._nodes)
        if self._index is not None:
            return list(self._index.docstore.docs.values())
        return []

    def prepare(self, documents: Sequence[ParsedDocument], cache: Cache | None) -> ChunkRegistry:
        corpus: list[Chunk] = []
        for node in self._corpus_nodes():
            chunk = node_chunk(node)
            self._ids[node.node_id] = chunk.chunk_id
            corpus.append(chunk)
        self.registry = ChunkRegistry(corpus)
        return self.registry

    def _ranked(self, nodes: Sequence[Any]) -> list[RankedChunk]:
        items = []
        for scored in nodes:
            node = getattr(scored, "node", scored)
            known = self._ids.get(node.node_id)
            item = known if known is not None else node_chunk(node)
            items.append((item, getattr(scored, "score", None)))
        return self.registry.ranked(items)

    def _has_postprocessors(self) -> bool | None:
        posts = getattr(self.engine, "_node_postprocessors", None)
        return None if posts is None else bool(posts)

    def answer(self, query: str) -> Trace:
        rec = _Recording()
        token = _CURRENT.set(rec)
        trace = Trace()
        failure: BaseException | None = None
        response = None
        try:
            if self.is_retriever:
                self.engine.retrieve(query)
            else:
                response = self.engine.query(query)
        except Exception as error:  # recorded per sample, the run goes on
            failure = error
            failed_tb = traceback.format_exc(limit=20)
        finally:
            _CURRENT.reset(token)
        self._fill(trace, rec, response)
        if failure is not None:
            # between retrieval and synthesis run the postprocessors; without any, it is the
            # synthesizer's failure (never blame a reranker the engine does not have)
            stage = (
                Stage.RETRIEVAL if rec.pool is None
                else Stage.RERANKING if rec.synth_start is None and self._has_postprocessors() is not False
                else Stage.GENERATION
            )  # fmt: skip
            trace.error = StageError(
                stage=stage,
                type=type(failure).__name__,
                message=str(failure)[:2000],
                traceback=failed_tb,
            )
        return trace

    def _fill(self, trace: Trace, rec: _Recording, response: Any) -> None:
        if rec.pool is not None:
            trace.pool = self._ranked(rec.pool)
            if rec.retrieval_start is not None and rec.retrieval_end is not None:
                trace.latency[Stage.RETRIEVAL] = round(rec.retrieval_end - rec.retrieval_start, 6)
        response = response if response is not None else rec.response
        if response is None:
            return
        source = getattr(response, "source_nodes", None)
        if source is not None:  # what the synthesizer was given, postprocessors or not
            trace.context = self._ranked(source)
            if (
                self._has_postprocessors()
                and rec.retrieval_end is not None
                and rec.synth_start is not None
            ):
                trace.latency[Stage.RERANKING] = round(rec.synth_start - rec.retrieval_end, 6)
        text = getattr(response, "response", None)
        if text is not None:
            trace.answer = str(text)
        if rec.synth_start is not None and rec.synth_end is not None:
            trace.latency[Stage.GENERATION] = round(rec.synth_end - rec.synth_start, 6)
