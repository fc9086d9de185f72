"""Record any OpenInference-instrumented pipeline (LangChain/LangGraph, Haystack, DSPy,
LlamaIndex) offline: its spans captured in process, assembled by :mod:`._span_assembly`.

``OpenInferencePipeline(fn)`` wraps a callable ``query -> answer`` (sync or async). For the
length of a run (``recording()``; ``run_pipeline`` opens it) cofe installs the
``openinference-instrumentation-*`` instrumentor of every framework the process imported,
with an OpenTelemetry SDK ``TracerProvider`` of its own whose only processor keeps spans in
memory (no exporter, no collector, no network); afterwards it uninstalls them. Each query
runs under a root span of cofe's, so everything the pipeline does for it -- in threads the
framework starts too, as OpenTelemetry's context follows them -- is one trace, assembled
into the run-log record once the query returns. The answer is what the callable returned;
instrumentation only observes, so answers are those of the pipeline without cofe.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import sys
import threading
import time
import traceback
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from cofe._cache import Cache
from cofe._errors import ConfigurationError
from cofe.adapters._base import PipelineShape, answer_concurrently
from cofe.adapters._draft import ChunkRegistry, RecordDraft, derived_item
from cofe.adapters._frameworks import (
    Corpus,
    DocKey,
    UnsupportedFrameworkPipeline,
    as_chunks,
    as_documents,
    corpus_of,
    describe_callable,
)
from cofe.adapters._span_assembly import KIND, Doc, Span, TraceRecord, assemble, kind_of
from cofe.runlog import Chunk, ParsedDocument, RankedChunk, Stage, StageError


@dataclass(frozen=True)
class Framework:
    name: str
    module: str  # imported by the process when the pipeline uses the framework
    instrumentor: str  # "package.module:Class"
    package: str  # what to pip install


FRAMEWORKS = (
    Framework(
        "langchain",
        "langchain_core",
        "openinference.instrumentation.langchain:LangChainInstrumentor",
        "openinference-instrumentation-langchain",
    ),
    Framework(
        "haystack",
        "haystack",
        "openinference.instrumentation.haystack:HaystackInstrumentor",
        "openinference-instrumentation-haystack",
    ),
    Framework(
        "dspy",
        "dspy",
        "openinference.instrumentation.dspy:DSPyInstrumentor",
        "openinference-instrumentation-dspy",
    ),
    Framework(
        "llama_index",
        "llama_index.core",
        "openinference.instrumentation.llama_index:LlamaIndexInstrumentor",
        "openinference-instrumentation-llama-index",
    ),
    Framework(
        "openai",
        "openai",
        "openinference.instrumentation.openai:OpenAIInstrumentor",
        "openinference-instrumentation-openai",
    ),
)
_BY_NAME = {f.name: f for f in FRAMEWORKS}
# frameworks instrumented without being named: those whose module the process imported.
# Plain OpenAI calls are instrumented only when asked (openai is imported by many libraries,
# and its spans would repeat the framework's own LLM spans)
_AUTO = tuple(f for f in FRAMEWORKS if f.name != "openai")
# the SDK's default of 128 attributes per span drops retrieved documents
MAX_SPAN_ATTRIBUTES = 100_000


class _Collector(SpanProcessor):
    """An OpenTelemetry span processor keeping the spans of the traces cofe opened, in
    memory, until their query takes them (other traces -- index building -- are dropped)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: dict[int, list[Span]] = {}

    def open(self, trace_id: int) -> None:
        with self._lock:
            self._spans[trace_id] = []

    def take(self, trace_id: int) -> list[Span]:
        with self._lock:
            return self._spans.pop(trace_id, [])

    def on_end(self, span: Any) -> None:
        context = span.context
        with self._lock:
            kept = self._spans.get(context.trace_id)
        if kept is None:
            return
        parent = span.parent.span_id if span.parent is not None else None
        status = span.status.status_code.name.lower()
        converted = Span(
            trace_id=f"{context.trace_id:032x}",
            span_id=f"{context.span_id:016x}",
            parent_id=f"{parent:016x}" if parent is not None else None,
            name=span.name,
            start_ns=span.start_time or 0,
            end_ns=span.end_time or 0,
            status=status if status in ("ok", "error") else "unset",
            status_message=span.status.description or "",
            attributes=dict(span.attributes or {}),
            events=tuple(
                {"name": e.name, "time_ns": e.timestamp, "attributes": dict(e.attributes or {})}
                for e in span.events
            ),
            dropped_attributes=getattr(span, "dropped_attributes", 0),
        )
        with self._lock:
            kept.append(converted)


class _Session:
    """The instrumentors installed for a run and the tracer cofe's root spans come from."""

    def __init__(self, frameworks: Sequence[Framework]) -> None:
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider

        self.collector = _Collector()
        self.provider = TracerProvider(
            span_limits=SpanLimits(
                max_span_attributes=MAX_SPAN_ATTRIBUTES, max_attributes=MAX_SPAN_ATTRIBUTES
            )
        )
        self.provider.add_span_processor(self.collector)
        self.tracer = self.provider.get_tracer("cofe")
        self.installed: list[Any] = []
        try:
            for framework in frameworks:
                self._install(framework)
        except BaseException:
            self.close()
            raise

    def _install(self, framework: Framework) -> None:
        module, _, name = framework.instrumentor.partition(":")
        try:
            instrumentor = getattr(importlib.import_module(module), name)()
        except ImportError:
            raise UnsupportedFrameworkPipeline(
                f"recording a {framework.name} pipeline needs its OpenInference instrumentation: "
                f"pip install {framework.package}"
            ) from None
        if instrumentor.is_instrumented_by_opentelemetry:
            # the instrumentor is one per process: instrumenting again would be a no-op and
            # cofe would see nothing, or uninstrumenting would silence the application's
            raise UnsupportedFrameworkPipeline(
                f"{framework.name} is already instrumented in this process ({name}); cofe "
                f"records with its own tracer: call {name}().uninstrument() before recording"
            )
        from openinference.instrumentation import TraceConfig

        # embedding vectors say nothing about the stages and are the costliest attributes
        config = TraceConfig(hide_embeddings_vectors=True)
        instrumentor.instrument(tracer_provider=self.provider, config=config, skip_dep_check=True)
        self.installed.append(instrumentor)
        quiet_instrumentation()

    def close(self) -> None:
        for instrumentor in reversed(self.installed):
            instrumentor.uninstrument()
        self.installed.clear()
        self.provider.shutdown()


def quiet_instrumentation() -> None:
    """Hide the deprecation warnings the OpenInference instrumentation itself raises (its
    LangChain instrumentor calls ``message.text()``, which LangChain deprecated: a
    LangChainDeprecationWarning on every recorded run that the user can do nothing about).
    Only warnings raised from openinference's own modules are hidden: the application's
    deprecations, LangChain's about the application's calls, and cofe's warnings all show.
    Installed after the framework's import, as LangChain puts its "always show" filter
    first when imported."""
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"openinference\.")


def detected_frameworks() -> list[Framework]:
    """The frameworks whose module this process imported."""
    return [f for f in _AUTO if f.module in sys.modules]


def answer_text(result: Any) -> str:
    """The answer in what a pipeline's callable returned: a string; a stream of pieces (joined);
    a mapping's ``answer``
    (``create_retrieval_chain``), ``output``/``result``/``text``; a DSPy prediction's
    ``answer``; a chat message's ``content``; a LlamaIndex response's ``response``; a Haystack
    result's ``replies``."""
    if isinstance(result, str):
        return result
    if isinstance(result, _Stream):  # ``chain.stream``'s pieces, consumed in the query's trace
        return "".join(answer_text(piece) for piece in result)
    if isinstance(result, dict):
        for key in ("answer", "output", "result", "text"):
            if isinstance(result.get(key), str):
                return str(result[key])
        for value in result.values():  # Haystack: {"llm": {"replies": [...]}}
            if (
                isinstance(value, dict)
                and isinstance(value.get("replies"), list)
                and value["replies"]
            ):
                return answer_text(value["replies"][0])
        raise TypeError(
            f"the pipeline returned a dict without an answer (keys: "
            f"{', '.join(map(str, list(result)[:8]))}); return the answer text"
        )
    for name in ("answer", "content", "text", "response"):  # ... a LlamaIndex Response
        value = getattr(result, name, None)
        if isinstance(value, str):
            return value
    raise TypeError(
        f"the pipeline returned {type(result).__name__}, not an answer; return "
        "the answer text (or a dict with 'answer')"
    )


class OpenInferencePipeline:
    """A pipeline recorded through its OpenInference spans (module docstring).

    - ``fn``: ``query -> answer``, sync or async (``chain.invoke``, a function calling a
      Haystack pipeline's ``run``, a DSPy module, a LangGraph graph's wrapper...);
    - ``corpus=``: the store or the splitter's output (documents, nodes, texts, chunks);
      default: the stores ``fn`` reaches (:mod:`._frameworks`), else a partial corpus;
    - ``documents=``: the documents before splitting (parsed documents, or the framework's);
      default: rebuilt from the chunks' offsets;
    - ``doc_key=``: the metadata key (or a function of an item) naming a chunk's document;
    - ``frameworks=``: names to instrument (``langchain``, ``haystack``, ``dspy``,
      ``llama_index``, ``openai``); default: every one the process imported;
    - ``top_k=``: the manifest's ``top_k`` if known (a context is always recorded anyway).
    """

    def __init__(
        self,
        fn: Callable[[str], Any] | Callable[[str], Awaitable[Any]],
        *,
        corpus: Any = None,
        documents: Sequence[Any] | None = None,
        doc_key: DocKey = None,
        frameworks: Sequence[str] | None = None,
        top_k: int | None = None,
        name: str | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise UnsupportedFrameworkPipeline(
                f"a {type(fn).__name__} is not callable: give a function query -> answer "
                "(e.g. chain.invoke, or a function calling pipeline.run)"
            )
        unknown = sorted(set(frameworks or ()) - set(_BY_NAME))
        if unknown:
            raise ConfigurationError(
                f"unknown framework(s) {', '.join(unknown)}; known: {', '.join(_BY_NAME)}"
            )
        self.fn = fn
        self._corpus_given, self._doc_key, self._top_k = corpus, doc_key, top_k
        self._documents_given = documents
        self._frameworks = frameworks
        self.name = name or "openinference"
        self.config = dict(config or {})
        self.registry = ChunkRegistry()
        self._loaded: tuple[list[Chunk], list[ParsedDocument], Corpus] | None = None
        self._session: _Session | None = None
        self._users = 0
        self._lock = threading.Lock()
        self._by_text: dict[str, str] = {}
        self._by_normal: dict[str, str] = {}
        self._derived: dict[str, Chunk | None] = {}

    # --- the corpus ---------------------------------------------------------------------

    def _load(self) -> tuple[list[Chunk], list[ParsedDocument], Corpus]:
        if self._loaded is None:
            given = self._corpus_given
            if given is None:
                found = corpus_of(self.fn)
            elif isinstance(given, list | tuple):
                found = Corpus(items=list(given), read=[f"corpus= ({len(given)})"])
            else:
                found = corpus_of(given)
                if not found.items and found.partial is not None:
                    raise UnsupportedFrameworkPipeline(f"corpus=: {found.partial}")
            documents = as_documents(self._documents_given, self._doc_key)
            chunks = as_chunks(found.items, self._doc_key, {d.doc_id: d.text for d in documents})
            if not documents and chunks:
                documents = _rebuilt(chunks)
            self._loaded = chunks, documents, found
        return self._loaded

    @property
    def documents(self) -> list[ParsedDocument]:
        return self._load()[1]

    @property
    def corpus_partial(self) -> str | None:
        """Why ``chunks.jsonl`` will not hold the whole corpus (None: it will)."""
        return self._load()[2].partial

    def check_sources(self, sources: Sequence[str]) -> None:
        from cofe.adapters._llamaindex_corpus import unmatched_sources

        chunks, documents, _ = self._load()
        if not chunks:  # a partial corpus: the documents are unknown, nothing to check
            return
        names = {d.doc_id for d in documents} | {d.source for d in documents}
        why = unmatched_sources(sources, names | {c.doc_id for c in chunks})
        if why is not None:
            raise UnsupportedFrameworkPipeline(
                why.replace(
                    "Documents are named by their file_name metadata; pass doc_key=",
                    "Documents are named by their file_name/source/file_path metadata; pass doc_key=",
                )
            )

    @staticmethod
    def answer_of(result: Any) -> str:
        """The answer text of what a pipeline's callable returned, outside a recorded run
        (cofe replay): awaited, or a stream read to its end, first."""
        if inspect.isawaitable(result) or isinstance(result, AsyncIterator | Iterator):
            result = asyncio.run(_resolved(result))
        return answer_text(result)

    def describe(self) -> dict[str, Any]:
        found = self._load()[2]
        return {
            "name": self.name,
            "adapter": "openinference",
            "callable": describe_callable(self.fn),
            "corpus_from": found.read,
            **self.config,
        }

    def shape(self) -> PipelineShape:
        # the stages show only in each query's spans; every record carries its context
        return PipelineShape(top_k=self._top_k, stages=None)

    def prepare(self, documents: Sequence[ParsedDocument], cache: Cache | None) -> ChunkRegistry:
        chunks, own, found = self._load()
        if documents and documents is not own and chunks:  # --docs parsed by cofe: the
            # chunks' offsets are found in those texts
            chunks = as_chunks(found.items, self._doc_key, {d.doc_id: d.text for d in documents})
        self.registry = ChunkRegistry(chunks)
        self._by_text = {c.text: c.chunk_id for c in reversed(chunks)}  # the first wins
        self._by_normal = {_normal(c.text): c.chunk_id for c in reversed(chunks)}
        return self.registry

    # --- recording ----------------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Instrument for the duration (nested and concurrent uses share one session); the
        instrumentors are uninstalled when the last use ends."""
        with self._lock:
            if self._session is None:
                names = self._frameworks
                chosen = [_BY_NAME[n] for n in names] if names else detected_frameworks()
                if not chosen:
                    raise UnsupportedFrameworkPipeline(
                        "no instrumentable framework is imported (LangChain, Haystack, DSPy, "
                        "LlamaIndex); name one with frameworks="
                    )
                self._session = _Session(chosen)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._session is not None:
                    self._session.close()
                    self._session = None

    @contextlib.contextmanager
    def _query(self, query: str) -> Iterator[tuple[_Session, dict[str, Any]]]:
        with self.recording():
            session = self._session
            assert session is not None
            outcome: dict[str, Any] = {}
            attributes = {KIND: "CHAIN", "input.value": query}
            with session.tracer.start_as_current_span("cofe.query", attributes=attributes) as root:
                trace_id = root.get_span_context().trace_id
                session.collector.open(trace_id)
                outcome["trace_id"] = trace_id
                outcome["started"] = time.perf_counter()
                try:
                    yield session, outcome
                except Exception as error:  # one sample fails, the run goes on
                    outcome["failure"] = (error, traceback.format_exc(limit=20))
                    root.set_status(_error_status(error))
            outcome["spans"] = session.collector.take(trace_id)

    def answer(self, query: str) -> RecordDraft:
        with self._query(query) as (_, outcome):
            result = self.fn(query)
            if inspect.isawaitable(result) or isinstance(result, AsyncIterator):
                # an async callable driven from a worker thread
                result = asyncio.run(_resolved(result))
            elif isinstance(result, Iterator):  # a stream runs as it is read: read it here
                result = _Stream(result)
            outcome["result"] = result
        return self._trace(outcome)

    async def aanswer(self, query: str) -> RecordDraft:
        with self._query(query) as (_, outcome):
            outcome["result"] = await _resolved(self.fn(query))
        return self._trace(outcome)

    def answer_all_async(
        self, queries: Sequence[str], concurrency: int, on_trace: Callable[[int, RecordDraft], None]
    ) -> None:
        """Answer ``queries`` through :meth:`aanswer` on one event loop, at most
        ``concurrency`` at a time; ``on_trace(i, trace)`` as each finishes."""
        with self.recording():
            answer_concurrently(self.aanswer, queries, concurrency, on_trace)

    # --- spans -> record ----------------------------------------------------------------

    def _trace(self, outcome: dict[str, Any]) -> RecordDraft:
        spans: list[Span] = outcome["spans"]
        mine = [s for s in spans if s.name != "cofe.query"]
        record = assemble(f"{outcome['trace_id']:032x}", spans)
        failure = outcome.get("failure")
        trace = RecordDraft(latency=dict(record.latency))
        if not any(kind_of(s) == "RETRIEVER" for s in mine) and failure is None:
            kinds = sorted({kind_of(s) or "(no kind)" for s in mine})
            raise UnsupportedFrameworkPipeline(
                "the pipeline ran no instrumented retriever, so its pool cannot be recorded "
                f"(spans seen: {', '.join(kinds) or 'none'}); use the framework's retriever "
                "component (a LangChain BaseRetriever, a Haystack *Retriever, dspy.Retrieve)"
            )
        trace.pool = self._ranked(record.pool) if record.pool is not None else None
        trace.context = self._ranked(record.context) if record.context is not None else None
        if failure is not None:
            error, failed_tb = failure
            trace.error = StageError(
                stage=_failed_stage(record),
                type=type(error).__name__,
                message=str(error)[:2000],
                traceback=failed_tb,
            )
            return trace
        try:
            trace.answer = answer_text(outcome["result"])
        except TypeError as error:
            trace.error = StageError(stage=Stage.GENERATION, type="NoAnswer", message=str(error))
        return trace

    def _ranked(self, docs: list[Doc]) -> list[RankedChunk]:
        out: list[RankedChunk] = []
        seen: set[str] = set()
        for doc in docs:
            if doc.text is None:
                continue  # an id without content: nothing to place it by
            ident = self._chunk_id(doc.text)
            if ident not in seen:  # one chunk once per list (two texts equal up to spaces)
                seen.add(ident)
                out.append(RankedChunk(chunk_id=ident, score=doc.score))
        return out

    def _chunk_id(self, text: str) -> str:
        """The corpus chunk of a listed text: the same text, else the same up to whitespace,
        else a derived item of the chunks it was cut from or holds (a compressor's extract,
        a parent document), else a chunk first seen in a ranked list."""
        known = self._by_text.get(text) or self._by_normal.get(_normal(text))
        if known is not None:
            return known
        with self._lock:
            if text not in self._derived:
                self._derived[text] = self._derived_of(text)
        derived = self._derived[text]
        if derived is not None:
            return self.registry.resolve(derived)[0]
        return self.registry.resolve({"text": text})[0]

    def _derived_of(self, text: str) -> Chunk | None:
        flat = _normal(text)
        if not flat:
            return None
        sources = [
            c.chunk_id
            for c in self.registry.chunks
            if c.kind == "chunk" and (flat in _normal(c.text) or _normal(c.text) in flat)
        ]
        if not sources:
            return None
        return derived_item({"text": text, "kind": "replaced", "derived_from": sources[:50]})


class _Stream(list[Any]):
    """The pieces of a streamed answer, read inside the query's trace."""


async def _resolved(result: Any) -> Any:
    """An awaited result, an async stream read to its end, a stream read to its end."""
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, AsyncIterator):
        return _Stream([piece async for piece in result])
    if isinstance(result, Iterator):
        return _Stream(result)
    return result


def _error_status(error: BaseException) -> Any:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, f"{type(error).__name__}: {error}")


def _failed_stage(record: TraceRecord) -> Stage:
    """The stage that raised: that of the failing stage span, else the one after the last
    stage the trace shows finished (never a reranker it does not show)."""
    if record.error_stage is not None:
        return record.error_stage
    if not record.stages:
        return Stage.RETRIEVAL
    return Stage.GENERATION


def _rebuilt(chunks: list[Chunk]) -> list[ParsedDocument]:
    from cofe.adapters._llamaindex_corpus import rebuilt_documents

    return [
        d.model_copy(update={"meta": {**d.meta, "reader": "openinference"}})
        for d in rebuilt_documents(chunks)
    ]


def _normal(text: str) -> str:
    return " ".join(text.split())  # whitespace runs as one space (what \s+ matches)
