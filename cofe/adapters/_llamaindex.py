"""Record every stage of an existing LlamaIndex pipeline through LlamaIndex's instrumentation.

The user's code is not changed: cofe attaches one event handler to
LlamaIndex's root dispatcher and, while it answers a query, listens for

- ``RetrievalStart/EndEvent`` of the outermost retrieval: the ranked nodes
  *before* any node postprocessor (the pool), with their text as retrieved
  (postprocessors such as ``MetadataReplacementPostProcessor`` rewrite nodes
  in place afterwards). For an ``AutoMergingRetriever`` the pool is its
  inner retrieval (the leaves), and merging counts as a reranking step;
- ``SynthesizeStart/EndEvent``: the response; its ``source_nodes`` are the
  nodes the synthesizer was given, i.e. *after* the postprocessors (the
  context), recorded with the text the synthesizer read: a node whose text a
  postprocessor replaced (sentence windows) or that ``CitationQueryEngine``
  re-chunked becomes a derived item of its own (``kind`` ``replaced`` or
  ``citation``, ``derived_from`` the corpus chunk it came from, offsets in the
  document when they can be found). Streaming responses are consumed so the whole answer is recorded.

What the events say is written as the spans OpenInference would record (a RETRIEVER span
listing the pool, a RERANKER span whose output is the synthesizer's nodes, an LLM span for
the synthesis: :meth:`LlamaIndexPipeline._spans`) and assembled by the one span->record code,
:func:`cofe.adapters._span_assembly.assemble` -- the code the OpenInference adapter and production
monitoring use --; the assembled documents are then mapped back to corpus chunks by node id.

``docs/llamaindex.md`` is the contract, pattern by pattern. The corpus and
document names come from :mod:`cofe.adapters._llamaindex_corpus`. Events
reach the handler in the thread or task that emitted them, so a context
variable tells concurrent queries apart, threads and asyncio tasks alike.
"""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import hashlib
import re
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
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
from cofe.adapters._base import PipelineShape, answer_concurrently
from cofe.adapters._draft import ChunkRegistry, RecordDraft
from cofe.adapters._llamaindex_corpus import (
    UNKNOWN_DOC,
    DocKey,
    UnsupportedLlamaIndexPipeline,
    absolute_spans,
    check_doc_keys,
    corpus_nodes,
    document_record,
    node_chunk,
    rebuilt_documents,
    retrievers_of,
    unmatched_sources,
    with_parents,
    with_summaries,
)
from cofe.adapters._span_assembly import KIND, Doc, Span, assemble
from cofe.runlog import Chunk, ParsedDocument, RankedChunk, Stage, StageError, top_k_from

__all__ = [
    "LlamaIndexPipeline",
    "UnsupportedLlamaIndexPipeline",
    "document_record",
    "node_chunk",
]


@dataclass
class _Recording:
    pool_depth: int = 0  # the retrieval depth whose result is the pool (1: auto-merging's leaves)
    # every retrieval's nodes, in order, make the pool: RAPTOR's retriever searches its tree
    # with several inner retrievals and emits no event of its own
    union: bool = False
    depth: int = 0
    retrieval_start: float | None = None
    retrieval_end: float | None = None
    pool: list[Any] | None = None
    pool_texts: dict[str, str] = field(default_factory=dict)  # node id -> text as retrieved
    synth_start: float | None = None
    synth_end: float | None = None
    response: Any = None
    started: float = 0.0


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
        if rec.union and isinstance(event, RetrievalStartEvent | RetrievalEndEvent):
            _union(rec, event, now)
        elif isinstance(event, RetrievalStartEvent):
            if rec.depth == 0 and rec.retrieval_start is None:
                rec.retrieval_start = now
            rec.depth += 1
        elif isinstance(event, RetrievalEndEvent):
            rec.depth = max(rec.depth - 1, 0)
            if rec.depth == rec.pool_depth and rec.pool is None:  # first time at that depth
                rec.pool, rec.retrieval_end = list(event.nodes), now
                # the text now: a postprocessor may rewrite these very node objects later
                rec.pool_texts = {n.node.node_id: n.node.get_content() for n in rec.pool}
        elif isinstance(event, SynthesizeStartEvent):
            if rec.synth_start is None:
                rec.synth_start = now
        elif isinstance(event, SynthesizeEndEvent) and rec.response is None:
            rec.synth_end, rec.response = now, event.response  # the first synthesis only


def _union(rec: _Recording, event: Any, now: float) -> None:
    """RAPTOR's tree search: the pool is every node its inner retrievals returned, each once, in
    the order found (what its retriever hands on); timed from the first start to the last end."""
    if isinstance(event, RetrievalStartEvent):
        if rec.retrieval_start is None:
            rec.retrieval_start = now
        return
    rec.pool = rec.pool if rec.pool is not None else []
    known = {n.node.node_id for n in rec.pool}
    for scored in event.nodes:
        if scored.node.node_id not in known:
            known.add(scored.node.node_id)
            rec.pool.append(scored)
            rec.pool_texts[scored.node.node_id] = scored.node.get_content()
    rec.retrieval_end = now


_HANDLER_LOCK = threading.Lock()
_HANDLER: _CofeHandler | None = None


def _install_handler() -> None:
    global _HANDLER
    with _HANDLER_LOCK:
        if _HANDLER is None:
            _HANDLER = _CofeHandler()
            get_dispatcher().add_event_handler(_HANDLER)


SUPPORTED = (
    "a query engine (index.as_query_engine(...), RetrieverQueryEngine, CitationQueryEngine, "
    "any BaseQueryEngine with query/aquery) or a retriever (any BaseRetriever)"
)


def _refuse_unsupported(engine: Any) -> None:
    """Patterns that cannot be recorded faithfully are refused before the first query."""
    from llama_index.core.chat_engine.types import BaseChatEngine

    if isinstance(engine, BaseChatEngine):
        raise UnsupportedLlamaIndexPipeline(
            f"{type(engine).__name__} is a chat engine: it keeps a conversation across calls, so "
            "one eval sample's answer would depend on the samples before it, and its condensed "
            f"question is not an event cofe can read. cofe records {SUPPORTED}. Pass the index's "
            "query engine instead, e.g. index.as_query_engine(similarity_top_k=..., "
            "node_postprocessors=...) with the chat engine's retriever and postprocessors"
        )
    if not any(callable(getattr(engine, name, None)) for name in ("query", "aquery", "retrieve")):
        raise UnsupportedLlamaIndexPipeline(
            f"{type(engine).__name__} has no query, aquery or retrieve method; cofe records "
            f"{SUPPORTED}"
        )


_CITATION_HEAD = re.compile(r"\ASource \d+:\n")
_TRIPLET = re.compile(r"[^\n]+ -> [^\n]+ -> [^\n]+")  # how LlamaIndex's graph retrievers write one


def _is_citation_engine(engine: Any) -> bool:
    from llama_index.core.query_engine import CitationQueryEngine

    return isinstance(engine, CitationQueryEngine)


def _is_raptor(retriever: Any) -> bool:
    """``llama-index-packs-raptor``'s retriever (not imported: the pack is optional)."""
    kind = type(retriever)
    return kind.__name__ == "RaptorRetriever" and kind.__module__.startswith("llama_index.packs")


def _is_auto_merging(retriever: Any) -> bool:
    from llama_index.core.retrievers import AutoMergingRetriever

    return isinstance(retriever, AutoMergingRetriever)


class LlamaIndexPipeline:
    """Observe a LlamaIndex query engine (or a bare retriever) without changing it.

    The chunk corpus is ``nodes=``, else ``index=``'s docstore, else the index behind the
    engine's retriever (its docstore, or its vector store when that keeps the text);
    ``documents=`` the LlamaIndex documents it was built from (else documents are rebuilt
    from the chunks). ``doc_key=`` names documents (a metadata key or a function of a node;
    default the ``file_name`` metadata, then ``file_path``, then the ref doc id).
    """

    def __init__(
        self,
        engine: Any,
        *,
        index: Any = None,
        nodes: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        doc_key: DocKey = None,
        name: str = "llama-index",
    ) -> None:
        _refuse_unsupported(engine)
        _install_handler()
        self.engine = engine
        self.is_retriever = isinstance(engine, BaseRetriever)
        self._index, self._nodes, self._given_documents = index, nodes, documents
        self.doc_key = doc_key
        self.name = name
        self.registry = ChunkRegistry()
        self._ids: dict[str, str] = {}  # node id -> chunk id
        self._corpus: list[Chunk] | None = None
        self._documents: list[ParsedDocument] | None = None
        self._doc_texts: dict[str, str] = {}
        self._loose_docs: dict[str, _LooseText] = {}
        self._derived: dict[tuple[str, str], Chunk] = {}
        self._citations = _is_citation_engine(engine)
        self._pool_depth = 1 if _is_auto_merging(self._retriever()) else 0
        self._union = _is_raptor(self._retriever())

    # -- the engine's parts ------------------------------------------------------------

    def _retriever(self) -> Any:
        return self.engine if self.is_retriever else getattr(self.engine, "retriever", None)

    def _similarity_top_k(self) -> Any:
        for retriever in retrievers_of(self._retriever()):
            top_k = getattr(retriever, "similarity_top_k", None) or getattr(
                retriever, "_similarity_top_k", None
            )
            if top_k is not None:
                return top_k
        return None

    def _has_postprocessors(self) -> bool | None:
        posts = getattr(self.engine, "_node_postprocessors", None)
        return None if posts is None else bool(posts)

    def _reranks(self) -> bool | None:
        """Whether anything changes the nodes between retrieval and synthesis: postprocessors,
        auto-merging (leaves merged into parents), citation re-chunking."""
        if self._pool_depth or self._citations:
            return True
        return self._has_postprocessors()

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
        if isinstance(self.doc_key, str):
            described["doc_key"] = self.doc_key
        return described

    def shape(self) -> PipelineShape:
        """``top_k``: the retriever's ``similarity_top_k``; ``stages``: reranking only when
        something changes the nodes before synthesis, generation only with a synthesizer;
        unknown for an engine whose parts cannot be read."""
        top_k = top_k_from(self._similarity_top_k())
        corpus = (Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL)
        if self.is_retriever:
            return PipelineShape(top_k=top_k, stages=corpus)
        reranks = self._reranks()
        synth = getattr(self.engine, "_response_synthesizer", None)
        if reranks is None or synth is None:
            return PipelineShape(top_k=top_k, stages=None)
        return PipelineShape(
            top_k=top_k,
            stages=(*corpus, *((Stage.RERANKING,) if reranks else ()), Stage.GENERATION),
        )

    # -- corpus and documents ----------------------------------------------------------

    def _read_corpus(self) -> list[Chunk]:
        if self._corpus is None:
            nodes, why = corpus_nodes(self._nodes, self._index, self._retriever())
            if why is not None:
                raise UnsupportedLlamaIndexPipeline(why)
            check_doc_keys(nodes, self.doc_key)
            given = {str(d.doc_id): d.get_content() for d in self._given_documents or ()}
            spans = absolute_spans(nodes, given)
            chunks, kept, seen = [], [], set()
            for node in nodes:
                chunk = node_chunk(node, self.doc_key, spans[node.node_id])
                # two nodes with one text at one place (overlapping auto-merging parents each
                # hold the shared leaf) are one chunk: a duplicate would count twice in nDCG
                if chunk.chunk_id not in seen:
                    seen.add(chunk.chunk_id)
                    chunks.append(chunk)
                    kept.append(node)
                self._ids[node.node_id] = chunk.chunk_id
            self._corpus = with_summaries(with_parents(chunks, kept, self._ids), nodes, self._ids)
        return self._corpus

    @property
    def documents(self) -> list[ParsedDocument]:
        """The documents (read by the runner before :meth:`prepare`): ``documents=``, else
        rebuilt from the corpus chunks so that every chunk's document exists."""
        if self._documents is None:
            if self._given_documents is not None:
                self._documents = [document_record(d, self.doc_key) for d in self._given_documents]
            else:
                self._documents = rebuilt_documents(self._read_corpus())
            self._doc_texts = {d.doc_id: d.text for d in self._documents}
        return self._documents

    def check_sources(self, sources: Sequence[str]) -> None:
        """Fail fast when no eval-set source names a document of the pipeline (every
        document-level score would be 0 without a word why). The runner calls it with the
        eval set's ``source.doc`` values before the first query."""
        names = {d.doc_id for d in self.documents} | {d.source for d in self.documents}
        names |= {c.doc_id for c in self._read_corpus()}
        why = unmatched_sources(sources, names)
        if why is not None:
            raise UnsupportedLlamaIndexPipeline(why)

    def prepare(self, documents: Sequence[ParsedDocument], cache: Cache | None) -> ChunkRegistry:
        corpus = self._read_corpus()
        if not self._doc_texts:
            self._doc_texts = {d.doc_id: d.text for d in (documents or self.documents)}
        self.registry = ChunkRegistry(corpus)
        return self.registry

    # -- answering ---------------------------------------------------------------------

    def answer(self, query: str) -> RecordDraft:
        with self._recording() as (rec, outcome):
            if self.is_retriever:
                self.engine.retrieve(query)
            else:
                outcome["response"] = _whole_response(self.engine.query(query))
                rec.synth_end = time.perf_counter() if rec.synth_end is not None else None
        return self._trace(query, rec, outcome)

    async def aanswer(self, query: str) -> RecordDraft:
        """:meth:`answer` through ``aquery``/``aretrieve``, for async engines and asyncio
        runners (each call records in its own task's context)."""
        with self._recording() as (rec, outcome):
            if self.is_retriever:
                await self.engine.aretrieve(query)
            else:
                outcome["response"] = await _awhole_response(await self.engine.aquery(query))
                rec.synth_end = time.perf_counter() if rec.synth_end is not None else None
        return self._trace(query, rec, outcome)

    @contextlib.contextmanager
    def _recording(self) -> Iterator[tuple[_Recording, dict[str, Any]]]:
        """One query's recording, current in this thread or task; an exception the engine
        raises is kept in ``outcome["failure"]`` (one sample fails, the run goes on)."""
        rec = _Recording(
            pool_depth=self._pool_depth, union=self._union, started=time.perf_counter()
        )
        token = _CURRENT.set(rec)
        outcome: dict[str, Any] = {}
        try:
            yield rec, outcome
        except Exception as error:
            outcome["failure"] = (error, traceback.format_exc(limit=20))
        finally:
            outcome["ended"] = time.perf_counter()
            _CURRENT.reset(token)

    def answer_all_async(
        self, queries: Sequence[str], concurrency: int, on_trace: Callable[[int, RecordDraft], None]
    ) -> None:
        """Answer ``queries`` through :meth:`aanswer` on one event loop, at most
        ``concurrency`` at a time; ``on_trace(i, trace)`` as each finishes (in the caller's
        thread). What a runner calls to drive an async engine with asyncio."""
        answer_concurrently(self.aanswer, queries, concurrency, on_trace)

    def _failed_stage(self, rec: _Recording) -> Stage:
        """Between retrieval and synthesis run the postprocessors; without any, a failure
        there is the synthesizer's (never blame a reranker the engine does not have)."""
        if rec.pool is None:
            return Stage.RETRIEVAL
        if rec.synth_start is None and self._reranks() is not False:
            return Stage.RERANKING
        return Stage.GENERATION

    def _trace(self, query: str, rec: _Recording, outcome: dict[str, Any]) -> RecordDraft:
        """The query's events as OpenInference-shaped spans, assembled by the one span->record
        code (:func:`cofe.adapters._span_assembly.assemble`), then the listed nodes mapped to chunks."""
        failure: tuple[BaseException, str] | None = outcome.get("failure")
        response = outcome.get("response")
        response = response if response is not None else rec.response
        source = getattr(response, "source_nodes", None) if response is not None else None
        text = getattr(response, "response", None) if response is not None else None
        answer = str(text) if text is not None else None
        nodes: dict[str, Any] = {}
        spans = self._spans(query, rec, source, answer, failure, outcome["ended"], nodes)
        record = assemble("", spans)
        trace = RecordDraft(latency=dict(record.latency))
        if record.pool is not None:
            trace.pool = self._ranked(record.pool, nodes)
        if source is not None and record.context is not None:
            # what the synthesizer was given, postprocessors or not
            trace.context = self._context(record.context, record.pool or [], nodes)
        trace.answer = answer
        if failure is not None:
            error, failed_tb = failure
            stage = record.error_stage or self._failed_stage(rec)
            trace.error = StageError(
                stage=stage,
                type=type(error).__name__,
                message=str(error)[:2000],
                traceback=failed_tb,
            )
        elif not self.is_retriever and trace.answer is None:
            # an engine that answered nothing must never pass for one that answered
            trace.error = StageError(
                stage=Stage.GENERATION,
                type="NoAnswer",
                message=f"the engine returned {type(response).__name__} without answer text",
            )
        return trace

    def _spans(
        self,
        query: str,
        rec: _Recording,
        source: Sequence[Any] | None,
        answer: str | None,
        failure: tuple[BaseException, str] | None,
        ended: float,
        nodes: dict[str, Any],
    ) -> list[Span]:
        """What the events say, as the spans OpenInference would write: a RETRIEVER span
        listing the pool (the text as retrieved); the synthesizer's nodes as a RERANKER's
        output when something changes the nodes before synthesis, else as the output of a
        RETRIEVER span holding the pool's (RAPTOR's tree search, a fusion); an LLM span for
        the synthesis. A failure is a failing span of the stage that raised."""
        failed = self._failed_stage(rec) if failure is not None else None
        spans: list[Span] = []
        root_start = _ns(rec.started)

        def span(
            ident: str,
            parent: str | None,
            kind: str,
            start: float | None,
            end: float | None,
            attributes: dict[str, Any],
            error: bool = False,
        ) -> None:
            begin = _ns(start) if start is not None else root_start
            spans.append(
                Span(
                    trace_id="",
                    span_id=ident,
                    parent_id=parent,
                    name=ident,
                    start_ns=begin,
                    end_ns=max(begin, _ns(end if end is not None else ended)),
                    status="error" if error else "ok",
                    status_message=f"{type(failure[0]).__name__}: {failure[0]}"
                    if error and failure
                    else "",
                    attributes={KIND: kind, **attributes},
                )
            )

        span(
            "query",
            None,
            "CHAIN",
            rec.started,
            ended,
            {"input.value": query},
            error=failure is not None,
        )
        pool = None
        if rec.pool is not None:
            pool = _listed(rec.pool, "retrieval.documents", nodes, rec.pool_texts)
        reranks = bool(self._reranks())
        if source is not None and (reranks or rec.pool is None):
            if pool is not None:
                span("retrieve", "query", "RETRIEVER", rec.retrieval_start, rec.retrieval_end, pool)
            given = _listed(source, "reranker.output_documents", nodes)
            if rec.pool is not None:
                given.update(_listed(rec.pool, "reranker.input_documents", {}, rec.pool_texts))
            span("postprocess", "query", "RERANKER", rec.retrieval_end, rec.synth_start, given)
        elif source is not None:  # nothing between: the synthesizer got the retriever's output
            span(
                "retrieve",
                "query",
                "RETRIEVER",
                rec.retrieval_start,
                rec.retrieval_end,
                _listed(source, "retrieval.documents", nodes),
            )
            span(
                "retrieve.pool",
                "retrieve",
                "RETRIEVER",
                rec.retrieval_start,
                rec.retrieval_end,
                pool or {},
            )
        elif pool is not None:
            span("retrieve", "query", "RETRIEVER", rec.retrieval_start, rec.retrieval_end, pool)
        if failed is Stage.RETRIEVAL:
            span("retrieve", "query", "RETRIEVER", rec.retrieval_start, ended, {}, error=True)
        elif failed is Stage.RERANKING:
            span("postprocess", "query", "RERANKER", rec.retrieval_end, ended, {}, error=True)
        if rec.synth_start is not None or failed is Stage.GENERATION:
            start = rec.synth_start if rec.synth_start is not None else rec.retrieval_end
            span(
                "synthesize",
                "query",
                "LLM",
                start,
                rec.synth_end,
                {"output.value": answer} if answer is not None else {},
                error=failed is Stage.GENERATION,
            )
        return spans

    def _ranked(self, docs: Sequence[Doc], nodes: dict[str, Any]) -> list[RankedChunk]:
        """The pool: each node by its corpus chunk, else by the text it was retrieved with."""
        items: list[tuple[Any, float | None]] = []
        for doc in docs:
            known = self._ids.get(doc.ref or "")
            item: Any = (
                known if known is not None else self._unknown(nodes[doc.ref or ""], doc.text)
            )
            items.append((item, doc.score))
        return self.registry.ranked(items)

    # -- the context: what the synthesizer read ----------------------------------------

    def _context(
        self, docs: Sequence[Doc], pool: Sequence[Doc], nodes: dict[str, Any]
    ) -> list[RankedChunk]:
        if self._citations:
            return self._citation_context(docs, pool, nodes)
        items: list[tuple[Any, float | None]] = []
        by_id = self.registry.by_id
        for doc in docs:
            known = self._ids.get(doc.ref or "")
            text = doc.text or ""
            if known is None:
                items.append((self._unknown(nodes[doc.ref or ""], text), doc.score))
            elif text == by_id[known].text:
                items.append((known, doc.score))
            else:  # a postprocessor replaced the text (e.g. a sentence's window)
                items.append((self._derive(by_id[known], text, "replaced", None), doc.score))
        return self.registry.ranked(items)

    def _unknown(self, node: Any, text: str | None = None) -> Chunk:
        """A node not in the corpus: a derived item when it names a corpus chunk as its source
        (a property graph's triplet ``subject -> relation -> object``, extracted from a text
        chunk; new node ids every query, so its id is made from its text and source), else a
        chunk first seen in a ranked list."""
        text = node.get_content() if text is None else text
        source = getattr(node, "source_node", None)
        base = self._ids.get(source.node_id) if source is not None else None
        if base is None:
            chunk = node_chunk(node, self.doc_key)
            return chunk if chunk.text == text else chunk.model_copy(update={"text": text})
        kind = "relation" if _TRIPLET.fullmatch(text) else "derived"
        digest = hashlib.sha1(f"{base}\n{text}".encode()).hexdigest()[:10]
        doc = self.registry.by_id[base].doc_id if base in self.registry.by_id else UNKNOWN_DOC
        return Chunk(
            chunk_id=f"{kind}:{digest}", doc_id=doc, text=text, kind=kind, derived_from=[base]
        )

    def _citation_context(
        self, docs: Sequence[Doc], pool: Sequence[Doc], nodes: dict[str, Any]
    ) -> list[RankedChunk]:
        """``CitationQueryEngine`` splits each node into "Source N:" pieces with new ids; each
        piece is mapped back to the pool chunk whose text holds it, at its offset."""
        candidates = [(self._ids.get(d.ref or ""), d.text or "") for d in pool]
        items: list[tuple[Any, float | None]] = []
        at = 0
        for doc in docs:
            text = _CITATION_HEAD.sub("", doc.text or "", count=1)
            piece = text[:-1] if text.endswith("\n") else text
            found = None
            # pieces come in the order of the nodes they were cut from: search from the last hit
            for k in [*range(at, len(candidates)), *range(0, at)]:
                known, whole = candidates[k]
                offset = whole.find(piece) if known is not None else -1
                if known is not None and offset >= 0:
                    found, at = (known, offset), k
                    break
            if found is None:
                chunk = node_chunk(nodes[doc.ref or ""], self.doc_key)
                items.append((chunk.model_copy(update={"text": piece}), doc.score))
                continue
            base = self.registry.by_id[found[0]]
            items.append((self._derive(base, piece, "citation", found[1]), doc.score))
        return self.registry.ranked(items)

    def _loose(self, doc_id: str, text: str, near: int) -> tuple[int, int] | None:
        loose = self._loose_docs.get(doc_id)
        if loose is None:
            doc_text = self._doc_texts.get(doc_id)
            if not doc_text:
                return None
            loose = self._loose_docs.setdefault(doc_id, _LooseText(doc_text))
        return loose.find(text, near)

    def _derive(self, base: Chunk, text: str, how: str, offset: int | None) -> Chunk:
        """A context chunk made from a corpus chunk: its id names the base chunk, its offsets
        are in the document when they can be found (a window's joined sentences may not be)."""
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        key = (base.chunk_id, f"{how}:{offset}:{digest}")
        chunk = self._derived.get(key)
        if chunk is not None:
            return chunk
        span: tuple[int, int] | None = None
        if offset is not None and base.start is not None:
            span = (base.start + offset, base.start + offset + len(text))
        else:
            span = self._loose(base.doc_id, text, base.start or 0)
        where = f"@{offset}" if offset is not None else ""
        chunk = Chunk(
            chunk_id=f"{base.chunk_id}~{how}{where}:{digest}",
            doc_id=base.doc_id,
            text=text,
            start=span[0] if span else None,
            end=span[1] if span else None,
            kind=how,
            derived_from=[base.chunk_id],
        )
        return self._derived.setdefault(key, chunk)


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _listed(
    scored_nodes: Sequence[Any],
    prefix: str,
    nodes: dict[str, Any],
    texts: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Nodes as a span lists documents (OpenInference's ``{prefix}.N.document.*``): the node
    id, the text (``texts``' when given: as retrieved), the score; ``nodes`` keeps each node
    by its id, to map the assembled record back."""
    attributes: dict[str, Any] = {}
    for n, scored in enumerate(scored_nodes):
        node = getattr(scored, "node", scored)
        ident = node.node_id
        nodes.setdefault(ident, node)
        text = texts.get(ident) if texts is not None else None
        head = f"{prefix}.{n}.document"
        attributes[f"{head}.id"] = ident
        attributes[f"{head}.content"] = node.get_content() if text is None else text
        score = getattr(scored, "score", None)
        if score is not None:
            attributes[f"{head}.score"] = score
    return attributes


class _LooseText:
    """A document with its whitespace runs collapsed to single spaces, and the way back to
    the document's own offsets; built once per document (a regex per query and document
    cost ~2 % of a sentence-window query)."""

    def __init__(self, text: str) -> None:
        self.text = text
        tokens = list(re.finditer(r"\S+", text))
        self.norm = " ".join(t.group() for t in tokens)
        self.norm_starts: list[int] = []
        self.orig_starts: list[int] = [t.start() for t in tokens]
        at = 0
        for t in tokens:
            self.norm_starts.append(at)
            at += len(t.group()) + 1

    def _orig(self, i: int) -> int:
        k = bisect.bisect_right(self.norm_starts, i) - 1
        return self.orig_starts[k] + (i - self.norm_starts[k])

    def find(self, text: str, near: int) -> tuple[int, int] | None:
        """Where ``text`` is, exactly or up to whitespace, searching from ``near`` first (a
        repeated sentence is found where it was retrieved), then from the start."""
        begin = max(near - len(text), 0)
        for origin in (begin, 0):
            at = self.text.find(text, origin)
            if at >= 0:
                return at, at + len(text)
        wanted = " ".join(text.split())
        if not wanted:
            return None
        k = bisect.bisect_right(self.orig_starts, begin) - 1
        for origin in (self.norm_starts[k] if k >= 0 else 0, 0):
            at = self.norm.find(wanted, origin)
            if at >= 0:
                return self._orig(at), self._orig(at + len(wanted) - 1) + 1
        return None


def _whole_response(response: Any) -> Any:
    """A streaming response consumed to its end (the user's engine streams; cofe needs the
    whole answer); any other response as it is."""
    from llama_index.core.base.response.schema import StreamingResponse

    if isinstance(response, StreamingResponse):
        return response.get_response()
    return response


async def _awhole_response(response: Any) -> Any:
    from llama_index.core.base.response.schema import AsyncStreamingResponse

    if isinstance(response, AsyncStreamingResponse):
        return await response.get_response()
    return _whole_response(response)
